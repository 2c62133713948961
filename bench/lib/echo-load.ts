/**
 * The throughput probe shared by the report: a pre-flight that fails loudly on a wrong answer, and
 * one load run of `tools/call echo` (the same request and fresh-id scheme as bench/http.ts).
 *
 * @example
 * ```ts
 * const type = await preflightEcho("SDK 2.x", url);
 * const { rps, p99 } = await echoLoad("SDK 2.x", url, 5, 50);
 * ```
 */
import { ECHO_HEADERS, echoBody, parseEchoResponse } from "./echo-request.js";
import { type LoadResult, loadGenerator } from "./load-generator.js";

export type { LoadResult } from "./load-generator.js";

/**
 * Five sequential echo calls that must each be HTTP 200 with the echoed text (JSON or SSE); returns
 * the answer's media type. Throws, naming the target, on anything else.
 *
 * @example
 * ```ts
 * await preflightEcho("bare", "http://127.0.0.1:4000/mcp"); // "application/json"
 * ```
 */
export async function preflightEcho(label: string, url: string): Promise<string> {
  let type = "";
  for (let id = 1; id <= 5; id++) {
    const res = await fetch(url, {
      method: "POST",
      headers: ECHO_HEADERS,
      body: echoBody(id),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    type = res.headers.get("content-type")?.split(";")[0] ?? "";
    try {
      parseEchoResponse(res.status, res.headers.get("content-type"), text, id);
    } catch (error) {
      throw new Error(`pre-flight failed for ${label} (${url}): ${(error as Error).message}`);
    }
  }
  return type;
}

/**
 * One run of `tools/call echo` from the shared load generator (bench/lib/load-generator.ts: `wrk`
 * on its own CPU, autocannon as a noted fallback); throws when any answer was not 2xx or a
 * connection failed.
 *
 * @example
 * ```ts
 * await echoLoad("conduit", url, 5, 50);
 * ```
 */
export function echoLoad(
  label: string,
  url: string,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  return loadGenerator().run({
    url,
    headers: ECHO_HEADERS,
    body: echoBody,
    seconds,
    connections,
    label,
  });
}
