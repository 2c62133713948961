/**
 * What the scale benchmarks (bench/scale-*.ts) share: the server process (bench/lib/scale-server.ts
 * pinned to CPU 1), the raw-socket client process (bench/lib/raw-client.ts pinned to CPU 0), the
 * control routes, and many loopback source addresses as distinct tenants.
 *
 * @example
 * ```ts
 * const server = await startScaleServer({ target: "conduit", options: { limits: { maxConnections: 12_000 } } });
 * const client = await startRawClient(server.port);
 * await client.send({ op: "hold", count: 100, era: "2026", addresses: tenants(10), sleepMs: 60_000 });
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpus } from "node:os";

import { startTarget } from "./child.js";

/** The CPU of the server; the client takes the other one (when there is one). */
export const SERVER_CPU = cpus().length > 1 ? 1 : null;
const CLIENT_CPU = cpus().length > 1 ? 0 : null;

/** A running scale server. */
export interface ScaleServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** GETs a control route; resolves its JSON. */
  ctl<T>(path: string): Promise<T>;
  stop(): Promise<void>;
}

/** How to start one. */
export interface ScaleServerSpec {
  /** `conduit`, `bare` or `bare-tool` (bench/lib/scale-server.ts). */
  readonly target: string;
  /** Spread into `createMcpServer` options (the limits each benchmark states). */
  readonly options?: Record<string, unknown>;
  /** Puts every store on this Redis. */
  readonly redisUrl?: string;
}

/**
 * Starts bench/lib/scale-server.ts on the compiled build (`dist`, built by the caller), pinned.
 *
 * @example
 * ```ts
 * const bare = await startScaleServer({ target: "bare" });
 * ```
 */
export async function startScaleServer(spec: ScaleServerSpec): Promise<ScaleServer> {
  const running = await startTarget("bench/lib/scale-server.ts", {
    cpu: SERVER_CPU,
    timeoutMs: 60_000,
    env: {
      SCALE_TARGET: spec.target,
      SCALE_OPTIONS: JSON.stringify(spec.options ?? {}),
      SCALE_REDIS_URL: spec.redisUrl ?? "",
      BENCH_CONDUIT_BUILD: "dist",
    },
  });
  const [url = "", control = ""] = running.url.split(" ");
  const ctl = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${control}${path}`, { signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`control ${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  };
  return {
    url,
    port: Number(new URL(url).port),
    pid: running.child.pid as number,
    ctl,
    stop: running.stop,
  };
}

/** The raw-socket client process. */
export interface RawClient {
  /** Sends one command; resolves its answer, rejects with the client's error. */
  send<T = Record<string, unknown>>(command: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

/**
 * Starts bench/lib/raw-client.ts pinned to the other CPU, aimed at `port`.
 *
 * @example
 * ```ts
 * const client = await startRawClient(server.port);
 * ```
 */
export function startRawClient(port: number): Promise<RawClient> {
  const node = [process.execPath, "--import", "tsx", "bench/lib/raw-client.ts"];
  const [command, ...args] =
    CLIENT_CPU === null ? node : ["taskset", "-c", String(CLIENT_CPU), ...node];
  const child: ChildProcess = spawn(command as string, args, {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let queue: Promise<unknown> = Promise.resolve();
  const send = <T>(commandBody: Record<string, unknown>): Promise<T> => {
    const result = queue.then(
      () =>
        new Promise<T>((resolve, reject) => {
          child.once("message", (raw) => {
            const reply = raw as { ok: boolean; error?: string } & T;
            if (reply.ok) resolve(reply);
            else reject(new Error(`raw client: ${reply.error}`));
          });
          child.send({ port, ...commandBody });
        }),
    );
    queue = result.catch(() => {});
    return result;
  };
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`raw client exited (${code})`)));
    child.once("message", () => {
      child.removeAllListeners("exit");
      resolve({ send, stop });
    });
  });
}

/**
 * `count` distinct loopback source addresses, 127.0.1.1 upwards (250 per third octet): each one
 * is a tenant of its own (the server's per-address bucket).
 *
 * @example
 * ```ts
 * tenants(3); // ["127.0.1.1", "127.0.1.2", "127.0.1.3"]
 * ```
 */
export function tenants(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`,
  );
}

/**
 * Polls `probe` every `everyMs` until it returns a value, failing after `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitFor(async () => ((await server.ctl<{ inFlight: number }>("/stats")).inFlight >= 100 ? true : undefined), "calls");
 * ```
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 120_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Heap and RSS of a server after full GCs. */
export interface Mem {
  readonly heapUsed: number;
  readonly rss: number;
}

/**
 * Runs `fn` with a fresh server of `spec` and a fresh client (both stopped after it), so that one
 * run's leftovers never land in another's figures.
 *
 * @example
 * ```ts
 * await withServer({ target: "bare" }, async (server, client) => {});
 * ```
 */
export async function withServer<T>(
  spec: ScaleServerSpec,
  fn: (server: ScaleServer, client: RawClient) => Promise<T>,
): Promise<T> {
  const server = await startScaleServer(spec);
  let client: RawClient | null = null;
  try {
    client = await startRawClient(server.port);
    return await fn(server, client);
  } finally {
    await client?.stop();
    await server.stop();
  }
}
