/**
 * One load-generator run against a `node:http` server on 127.0.0.1 that answers with `answer`
 * once each JSON-RPC `ping` body has arrived, closed after the run (its open connections too).
 * Shared by the tests of what bench/lib/load-generator.ts reads from wrk. Not a test file.
 *
 * @example
 * ```ts
 * const result = await loadAgainst((req, res) => res.end("{}"), { seconds: 1, connections: 1, label: "now" });
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { type LoadResult, type LoadSpec, loadGenerator } from "../../bench/lib/load-generator.js";

/** Runs the load generator for `spec` against a server whose every answer `answer` writes. */
export async function loadAgainst(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
  spec: Pick<LoadSpec, "seconds" | "connections" | "label">,
): Promise<LoadResult> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await loadGenerator().run({
      ...spec,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      headers: { "content-type": "application/json" },
      body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
