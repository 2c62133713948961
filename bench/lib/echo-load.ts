/**
 * The throughput probe shared by the report: a pre-flight that fails loudly on a wrong answer, and
 * one autocannon run of `tools/call echo` (the same request and fresh-id scheme as bench/http.ts).
 *
 * @example
 * ```ts
 * const type = await preflightEcho("SDK 2.x", url);
 * const { rps, p99 } = await echoLoad("SDK 2.x", url, 5, 50);
 * ```
 */
import autocannon from "autocannon";

import { ECHO_HEADERS, echoBody, parseEchoResponse } from "./echo-request.js";

/** One load run. */
export interface LoadResult {
  /** Mean requests per second over the run. */
  readonly rps: number;
  /** Latency percentiles, ms. */
  readonly p50: number;
  readonly p99: number;
}

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

let nextId = 1_000;

/**
 * One autocannon run; throws when any answer was not 2xx or a connection failed.
 *
 * @example
 * ```ts
 * await echoLoad("conduit", url, 5, 50);
 * ```
 */
export async function echoLoad(
  label: string,
  url: string,
  seconds: number,
  connections: number,
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { ...ECHO_HEADERS },
    requests: [
      {
        setupRequest: (request) => {
          request.body = echoBody(++nextId);
          return request;
        },
      },
    ],
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `${label}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`,
    );
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}
