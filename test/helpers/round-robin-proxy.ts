/**
 * Test helper: a small node:http reverse proxy that sends each request to the next upstream in
 * turn (round robin per request, whatever the connection), as a load balancer without stickiness
 * would, so that consecutive requests of one client land on different nodes. Bodies and answers
 * (SSE streams included) are piped through unbuffered; a client that hangs up hangs up upstream.
 *
 * @example
 * ```ts
 * const proxy = await startRoundRobinProxy([urlA, urlB]);
 * await fetch(proxy.url, { method: "POST", body });
 * await proxy.close();
 * ```
 */
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/** A running proxy. */
export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port><path of the first upstream>`. */
  readonly url: string;
  /** How many requests went to each upstream, by index. */
  readonly counts: number[];
  /** Forces the next request onto upstream `index` (then the rotation goes on from there). */
  next(index: number): void;
  close(): Promise<void>;
}

/** Starts a proxy in front of `upstreams` (full endpoint URLs on one path). */
export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  const targets = upstreams.map((upstream) => new URL(upstream));
  const counts = targets.map(() => 0);
  let turn = 0;
  const server = createServer((req, res) => {
    const index = turn % targets.length;
    turn++;
    counts[index] = (counts[index] ?? 0) + 1;
    const target = targets[index] as URL;
    const headers = { ...req.headers, host: target.host };
    const upstream = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // The client went away before its answer ended: so does the upstream request.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${(targets[0] as URL).pathname}`,
    counts,
    next(index) {
      turn = index;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
