/**
 * Starts a benchmark target in its own process and waits for its announcement line, so the server
 * never shares an event loop with the load generator (bench/http.ts runs autocannon itself).
 *
 * @example
 * ```ts
 * const target = await startTarget("bench/lib/bare-server.ts");
 * console.log(target.url);
 * await target.stop();
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

import { LISTENING_PREFIX } from "./listening.js";

/** A running target process. */
export interface RunningTarget {
  /** The endpoint URL the target announced. */
  readonly url: string;
  /** The child process. */
  readonly child: ChildProcess;
  /** Sends SIGTERM and waits for the exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/** How to start a target. */
export interface TargetOptions {
  /** Give up when it has not announced its URL by then (ms; 30 s by default). */
  readonly timeoutMs?: number;
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Runs it under `taskset -c <cpu>` (every thread on that CPU), when not null. */
  readonly cpu?: number | null;
  /** Extra `node` flags before the script, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /**
   * What `node` runs instead of `--import tsx <script>`, e.g. `["dist/cli/main.js", "serve",
   * "--port", "0"]` for the CLI as a user starts it (no tsx loaded: what `npx conduit-mcp serve`
   * runs). `script` then only names the target in messages.
   */
  readonly argv?: readonly string[];
  /**
   * The start of the line that announces the URL (the rest of the line is the URL); default
   * bench/lib/listening.ts's prefix. The CLI prints `conduit-mcp listening on <url>`.
   */
  readonly announcement?: string;
  /**
   * A command (with its flags) that runs `node` for it, e.g. `["valgrind", "--tool=callgrind"]`.
   * Valgrind runs the program inside its own process, so the child's pid is still node's.
   */
  readonly wrapper?: readonly string[];
}

/**
 * Spawns `node --import tsx <script>` and resolves once its first stdout line announces the URL.
 * Rejects (and kills the child) when it exits early, prints something else, or takes over
 * `timeoutMs` — a target that cannot start must fail the run loudly, not hang it.
 *
 * @example
 * ```ts
 * const { url, stop } = await startTarget("bench/lib/sdk-server.ts", { timeoutMs: 20_000, cpu: 1 });
 * ```
 */
export function startTarget(script: string, options: TargetOptions = {}): Promise<RunningTarget> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const nodeArgs = [...(options.nodeArgs ?? []), ...(options.argv ?? ["--import", "tsx", script])];
  const prefix = options.announcement ?? LISTENING_PREFIX;
  const cpu = options.cpu ?? null;
  const node = [...(options.wrapper ?? []), process.execPath, ...nodeArgs];
  // taskset execs node, so the child's pid is node's own (its /proc/<pid>/stat is the server's).
  const [command, ...args] = cpu === null ? node : ["taskset", "-c", String(cpu), ...node];
  const child = spawn(command as string, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...options.env },
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
        return;
      }
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      child.once("exit", () => {
        clearTimeout(killer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const fail = (why: string): void => {
      clearTimeout(timer);
      lines.close();
      void stop();
      reject(new Error(`${script}: ${why}`));
    };
    const timer = setTimeout(() => fail(`no announcement within ${timeoutMs} ms`), timeoutMs);
    child.once("exit", (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
    lines.once("line", (line) => {
      if (!line.startsWith(prefix)) {
        fail(`unexpected first line ${JSON.stringify(line)}`);
        return;
      }
      clearTimeout(timer);
      child.removeAllListeners("exit");
      // Keep draining stdout so a chatty target never blocks on a full pipe.
      lines.on("line", () => {});
      resolve({ url: line.slice(prefix.length).trim(), child, stop });
    });
  });
}
