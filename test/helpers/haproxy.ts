/**
 * Test helper: HAProxy (the Debian `haproxy` package) in front of conduit-mcp nodes that run as
 * child processes (`conduit-mcp serve`), so a node can be killed (SIGKILL) or frozen (SIGSTOP:
 * its sockets stay open and nothing answers, as when a host vanishes) in the middle of a call.
 * Everything listens on 127.0.0.1; every process is stopped by `stop()`.
 *
 * @example
 * ```ts
 * const nodes = await Promise.all([startNode(), startNode()]);
 * const lb = await startHaproxy({ nodes, config: RECOMMENDED });
 * await lb.stop(); for (const node of nodes) await node.stop();
 * ```
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const BINARY = process.env.HAPROXY_BIN ?? "haproxy";
const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

/** Why HAProxy tests cannot run here, or undefined. Under `CI=true` a missing binary throws. */
export function haproxySkipReason(): string | undefined {
  const probe = spawnSync(BINARY, ["-v"], { encoding: "utf8", timeout: 5_000 });
  if (!probe.error && probe.status === 0) return undefined;
  const reason = `haproxy not installed (\`${BINARY} -v\` failed); install the haproxy package (.ci/apt.d/haproxy.txt)`;
  if (process.env.CI === "true") throw new Error(`${reason} (CI=true: not skipping)`);
  console.log(`# skipping HAProxy tests: ${reason}`);
  return reason;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A conduit-mcp node in a child process. */
export interface ChildNode {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
  /** SIGKILL: the kernel closes its sockets at once. */
  kill(): void;
  /** SIGSTOP: its sockets stay open and nothing answers. */
  freeze(): void;
  /** Stops it whatever its state (SIGCONT, then SIGKILL); idempotent. */
  stop(): Promise<void>;
}

/** Starts `conduit-mcp serve` (the demo tools) on a free port, with `args`; resolves once it listens. */
export async function startNode(args: readonly string[] = []): Promise<ChildNode> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CLI, "serve", "--port", String(port), ...args],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
      if (output.includes("listening on")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`node exited (${code}): ${output}`)));
    setTimeout(() => reject(new Error(`node did not start: ${output}`)), 90_000).unref();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await listening;
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    kill: () => child.kill("SIGKILL"),
    freeze: () => child.kill("SIGSTOP"),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGCONT");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** A running HAProxy. */
export interface Haproxy {
  /** The MCP endpoint through the balancer. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts HAProxy in the foreground (`-db`) with `config`, in which `{{PORT}}` is the frontend's
 * port and `{{SERVERS}}` the `server` lines of `nodes` (each with `serverOptions`).
 */
export async function startHaproxy(options: {
  readonly nodes: readonly ChildNode[];
  readonly config: string;
  readonly serverOptions?: string;
}): Promise<Haproxy> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "conduit-haproxy-"));
  const servers = options.nodes
    .map((node, n) => `    server node${n} 127.0.0.1:${node.port} ${options.serverOptions ?? ""}`)
    .join("\n");
  const file = join(dir, "haproxy.cfg");
  writeFileSync(
    file,
    options.config.replaceAll("{{PORT}}", String(port)).replaceAll("{{SERVERS}}", servers),
  );
  const child = spawn(BINARY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Ready once the frontend accepts connections.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
    if (await accepts(port)) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
