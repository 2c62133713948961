/**
 * The requests of the resources-and-prompts benchmark (`npm run bench:http -- --methods …`):
 * `tools/call echo`, `resources/read demo://readme` and `prompts/get review`, each with the check
 * its answer must pass in the pre-flight. All three are served by bench/lib/conduit-server.ts,
 * which serves the CLI demo's own definitions, so the figures are those of `conduit-mcp serve`.
 *
 * @example
 * ```ts
 * const request = BENCH_REQUESTS["prompts/get"];
 * const res = await fetch(url, { method: "POST", headers: ECHO_HEADERS, body: request.body(1) });
 * request.check(res.status, res.headers.get("content-type"), await res.text(), 1);
 * ```
 */
import { echoBody, parseEchoResponse, resultOf } from "./echo-request.js";

/** One kind of request a benchmark sends, and how to tell its answer is right. */
export interface BenchRequest {
  /** The JSON-RPC method, also the row label. */
  readonly method: BenchMethod;
  /** What exactly is asked, for the docs. */
  readonly what: string;
  /** The JSON-RPC body for one id. */
  body(id: number): string;
  /** Throws an Error saying what is wrong unless the answer is the expected result. */
  check(status: number, contentType: string | null, text: string, id: number): void;
}

/** The methods the benchmark can measure. */
export type BenchMethod = "tools/call" | "resources/read" | "prompts/get";

/** The docs/benchmarks.md section a resources-and-prompts run writes (bench/report.ts keeps it). */
export const PRIMITIVES_SECTION = "Resources and prompts";

/** The resource read: the demo's Markdown readme (a few hundred bytes of text). */
export const BENCH_RESOURCE_URI = "demo://readme";
/** The code the `review` prompt is asked about. */
export const BENCH_REVIEW_CODE = "def add(a, b):\n    return a - b";

function rpc(id: number, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** Every request by method. */
export const BENCH_REQUESTS: Readonly<Record<BenchMethod, BenchRequest>> = Object.freeze({
  "tools/call": {
    method: "tools/call",
    what: "`tools/call echo` (zod-validated argument)",
    body: echoBody,
    check: parseEchoResponse,
  },
  "resources/read": {
    method: "resources/read",
    what: `\`resources/read ${BENCH_RESOURCE_URI}\` (text)`,
    body: (id) => rpc(id, "resources/read", { uri: BENCH_RESOURCE_URI }),
    check: (status, contentType, text, id) => {
      const result = resultOf(status, contentType, text, id) as {
        contents?: Array<{ uri?: unknown; text?: unknown }>;
      };
      const item = result.contents?.[0];
      if (item?.uri !== BENCH_RESOURCE_URI || typeof item.text !== "string" || item.text === "") {
        throw new Error(`not the readme's contents: ${text.slice(0, 300)}`);
      }
    },
  },
  "prompts/get": {
    method: "prompts/get",
    what: "`prompts/get review` (two zod-validated string arguments, messages checked)",
    body: (id) =>
      rpc(id, "prompts/get", {
        name: "review",
        arguments: { code: BENCH_REVIEW_CODE, language: "python" },
      }),
    check: (status, contentType, text, id) => {
      const result = resultOf(status, contentType, text, id) as {
        messages?: Array<{ role?: unknown; content?: { type?: unknown; text?: unknown } }>;
      };
      const message = result.messages?.[0];
      const body = message?.content?.text;
      if (
        message?.role !== "user" ||
        typeof body !== "string" ||
        !body.includes(BENCH_REVIEW_CODE)
      ) {
        throw new Error(`not the review prompt: ${text.slice(0, 300)}`);
      }
    },
  },
});
