/**
 * Test helper: runs `node --import tsx src/cli/main.ts …` (or, with {@link CliOptions.bin}, an
 * installed package's executable, without tsx) as a real process, as a user would, and speaks to
 * it over HTTP. Not a test file itself (no `.test.ts`), so the runner does not pick it up.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** The protocol revision the helpers speak. */
export const PROTOCOL_VERSION = "2025-11-25";

/** Headers of a Streamable HTTP POST from a 2025-11-25 client (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports). */
export const MCP_HEADERS: Readonly<Record<string, string>> = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": PROTOCOL_VERSION,
};

/** How the process ended. */
export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A CLI process that printed its first line. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** The URL from `conduit-mcp listening on <url>`. */
  readonly url: string;
  /** The whole first stdout line. */
  readonly firstLine: string;
  /** Resolves when the process exits. */
  readonly exited: Promise<Exit>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** SIGKILL if still running, then wait for the exit (for `after` hooks). */
  kill(): Promise<void>;
}

/** Which CLI to run, and where. */
export interface CliOptions {
  /**
   * The executable's JavaScript file (e.g. an installed package's `dist/cli/main.js`), run by
   * plain `node`; default: this repository's `src/cli/main.ts` through tsx.
   */
  readonly bin?: string;
  /** The working directory; default: this process's. */
  readonly cwd?: string;
  /** How long {@link startCli} waits for the listening line; default 20 s. */
  readonly listeningWithinMs?: number;
  /** Node options before the entry (e.g. `["--import", shim]`); default none. */
  readonly nodeArgs?: readonly string[];
  /** Environment variables added to this process's; default none. */
  readonly env?: Readonly<Record<string, string>>;
}

function spawnMain(args: readonly string[], options: CliOptions): ChildProcess {
  const main = options.bin === undefined ? ["--import", "tsx", "src/cli/main.ts"] : [options.bin];
  return spawn(process.execPath, [...(options.nodeArgs ?? []), ...main, ...args], {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.env === undefined ? {} : { env: { ...process.env, ...options.env } }),
  });
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}

/**
 * Starts `conduit-mcp <args>` and waits (at most 20 s) for the listening line.
 */
export async function startCli(
  args: readonly string[],
  options: CliOptions = {},
): Promise<CliProcess> {
  const child = spawnMain(args, options);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = exitOf(child);
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  };
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  try {
    const firstLine = await new Promise<string>((resolve, reject) => {
      const within = options.listeningWithinMs ?? 20_000;
      const timer = setTimeout(
        () => reject(new Error(`no listening line within ${within} ms; ${stderr}`)),
        within,
      );
      lines.once("line", (line) => {
        clearTimeout(timer);
        resolve(line);
      });
      void exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`CLI exited before listening: ${JSON.stringify(exit)}; ${stderr}`));
      });
    });
    const url = /^conduit-mcp listening on (\S+)$/.exec(firstLine)?.[1];
    if (url === undefined) throw new Error(`unexpected first line ${JSON.stringify(firstLine)}`);
    return { child, url, firstLine, exited, stderr: () => stderr, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}

/** Runs `conduit-mcp <args>` to completion (at most 20 s) and returns its output and exit. */
export async function runCli(
  args: readonly string[],
  options: CliOptions = {},
): Promise<{ stdout: string; stderr: string; exit: Exit }> {
  const child = spawnMain(args, options);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const exit = await exitOf(child);
  clearTimeout(timer);
  return { stdout, stderr, exit };
}

/** Resolves with the exit, or rejects when the process is still running after `ms`. */
export function exitWithin(cli: CliProcess, ms: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
    void cli.exited.then((exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
}

/** A JSON-RPC answer as the helpers see it. */
export interface RpcAnswer {
  readonly status: number;
  readonly contentType: string | null;
  /** The parsed JSON body (JSON answers) or the last JSON-RPC message of an SSE stream. */
  readonly message: {
    readonly id?: unknown;
    readonly result?: {
      readonly content?: ReadonlyArray<{ type: string; text?: string }>;
    } & Record<string, unknown>;
    readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
  } | null;
  /** Every JSON-RPC message of an SSE stream (notifications first), or the single JSON body. */
  readonly messages: ReadonlyArray<Record<string, unknown>>;
}

/** POSTs one JSON-RPC message and reads the whole answer, JSON or SSE (bounded by 20 s). */
export async function rpc(
  url: string,
  body: Record<string, unknown>,
  headers: Readonly<Record<string, string>> = MCP_HEADERS,
): Promise<RpcAnswer> {
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const contentType = res.headers.get("content-type");
  let messages: Array<Record<string, unknown>> = [];
  if (contentType?.startsWith("text/event-stream")) {
    messages = text
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .filter((data) => data.length > 0)
      .map((data) => JSON.parse(data) as Record<string, unknown>);
  } else if (text.length > 0) {
    messages = [JSON.parse(text) as Record<string, unknown>];
  }
  const last = messages.at(-1) ?? null;
  return { status: res.status, contentType, message: last as RpcAnswer["message"], messages };
}

/** Sends `notifications/cancelled` for `requestId`; returns the HTTP status. */
export async function cancel(url: string, requestId: number | string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "test cancel" },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Reads `GET /metrics` and returns the value of the first sample matching name and labels. */
export async function metric(
  baseUrl: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<number | undefined> {
  const res = await fetch(new URL("/metrics", baseUrl), { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const found = new Map<string, string>();
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      found.set(pair[1] as string, pair[2] as string);
    }
    if (Object.entries(labels).every(([key, value]) => found.get(key) === value)) {
      return Number(match[3]);
    }
  }
  return undefined;
}

/** Polls `check` every 20 ms until it returns true or `ms` pass. */
export async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}
