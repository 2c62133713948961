/**
 * Test helper: a private `redis-server` on a free port, with persistence off, in a temp dir, so the
 * Redis tests never touch a developer's own Redis.
 *
 * @example
 * ```ts
 * const reason = redisSkipReason();
 * describe("redis", { skip: reason ?? false }, () => {
 *   let server: RedisServer;
 *   before(async () => { server = await startRedisServer(); });
 *   after(() => server.stop());
 * });
 * ```
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running private Redis. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL after 2 s) and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
  /** Stops, then starts again on the same port (an outage, for fault tests). */
  restart(): Promise<void>;
  /** Stops without starting again; `start()` brings it back on the same port. */
  pause(): Promise<void>;
  /** Starts again on the same port after `pause()`. */
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its sockets but answers nothing (a hung Redis). */
  freeze(): void;
  /** SIGCONT after `freeze()`. */
  thaw(): void;
}

const BINARY = process.env.REDIS_SERVER_BIN ?? "redis-server";

let availability: string | null | undefined;

/**
 * Why the Redis tests cannot run here, or `undefined` when they can. Under `CI=true` a missing
 * `redis-server` is an error, not a skip (CI must not silently skip them).
 */
export function redisSkipReason(): string | undefined {
  if (availability === undefined) {
    const probe = spawnSync(BINARY, ["--version"], { encoding: "utf8", timeout: 5_000 });
    availability =
      probe.error || probe.status !== 0
        ? `redis-server not installed: \`${BINARY} --version\` failed (${probe.error?.message ?? `exit ${probe.status}`}); install redis-server or set REDIS_SERVER_BIN`
        : null;
  }
  if (availability === null) return undefined;
  if (process.env.CI === "true") throw new Error(`${availability} (CI=true: not skipping)`);
  console.log(`# skipping Redis tests: ${availability}`);
  return availability;
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** One PING over a raw socket; resolves whether `+PONG` came back within 500 ms. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 500);
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}

/**
 * Starts a private `redis-server` on a free port (or on `options.port`) and waits (bounded, 10 s)
 * until PING answers.
 *
 * A port picked by the OS lies in the ephemeral range, so while the server is stopped an outgoing
 * connection of any process may be given it as its source port, and `start()` then fails to bind
 * (a risk for the chaos soak, which opens thousands of connections while Redis is down). A test that
 * restarts Redis under heavy traffic passes a port below that range (see scripts/soak/ports.ts).
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<RedisServer> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), "conduit-redis-"));
  let child: ChildProcess | null = null;
  /** The server's latest output (it logs to stdout), for the error when it does not start. */
  let output = "";

  const start = async (): Promise<void> => {
    if (child) return;
    output = "";
    const proc = spawn(
      BINARY,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-2_000);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    child = proc;
    // Never leave a server behind, even when a test run ends abruptly.
    const reap = () => proc.kill("SIGKILL");
    process.once("exit", reap);
    proc.once("exit", () => process.off("exit", reap));
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (await ping(port)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    proc.kill("SIGKILL");
    child = null;
    throw new Error(`redis-server on port ${port} did not answer PING: ${output.trim()}`);
  };

  const pause = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    child = null;
    if (proc.exitCode !== null || (proc.signalCode !== null && proc.signalCode !== "SIGSTOP"))
      return;
    proc.kill("SIGCONT");
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => proc.kill("SIGKILL"), 2_000);
      proc.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      proc.kill("SIGTERM");
    });
  };

  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    pause,
    freeze() {
      child?.kill("SIGSTOP");
    },
    thaw() {
      child?.kill("SIGCONT");
    },
    async restart() {
      await pause();
      await start();
    },
    async stop() {
      await pause();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
