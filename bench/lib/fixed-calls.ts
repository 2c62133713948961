/**
 * Sends an exact number of calls over a fixed number of keep-alive connections, each connection
 * one call at a time: the load of a count-based measurement (bench/instructions.ts), where the
 * server's work is divided by the number of calls, so that number must be exact, and every call
 * must be answered 200 or the count means nothing.
 *
 * @example
 * ```ts
 * await sendCalls({ url, path: BENCH_PATHS["tools/call"], calls: 3_000, connections: 10 });
 * ```
 */
import { Agent, request } from "node:http";

import type { BenchPath } from "./bench-paths.js";

/** What to send. */
export interface SendCallsOptions {
  readonly url: string;
  readonly path: BenchPath;
  readonly calls: number;
  readonly connections: number;
  /** The first JSON-RPC id (1 by default); the calls take the ids from there on. */
  readonly firstId?: number;
  /** A call not answered by then fails the run (ms; 60 s by default). */
  readonly timeoutMs?: number;
}

/**
 * Sends `calls` calls from `connections` keep-alive connections (the calls split as evenly as
 * they go) and drains every answer. Rejects, saying how many and the first status, when any
 * call is not answered 200, and on any request error or time-out.
 *
 * @example
 * ```ts
 * await sendCalls({ url, path: BENCH_PATHS["resources/read"], calls: 2_000, connections: 10 });
 * ```
 */
export async function sendCalls(options: SendCallsOptions): Promise<void> {
  const { url, path, calls, connections } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let nextId = options.firstId ?? 1;
  let failed = 0;
  let firstFailure = "";

  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const req = request(url, { method: "POST", headers: path.headers, agent }, (res) => {
        const status = res.statusCode ?? 0;
        res.on("error", reject);
        res.on("end", () => {
          if (status !== 200) {
            failed++;
            if (firstFailure === "") firstFailure = `call ${id}: HTTP ${status}`;
          }
          resolve();
        });
        res.resume();
      });
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`call ${id} not answered within ${timeoutMs} ms`)),
      );
      req.on("error", reject);
      req.end(path.body(id));
    });

  const connection = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) await one();
  };
  try {
    await Promise.all(
      Array.from({ length: connections }, (_, i) =>
        connection(Math.floor(calls / connections) + (i < calls % connections ? 1 : 0)),
      ),
    );
  } finally {
    agent.destroy();
  }
  if (failed > 0) {
    throw new Error(`${failed} of ${calls} ${path.label} calls not answered 200 (${firstFailure})`);
  }
}
