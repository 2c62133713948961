/**
 * The request paths the HTTP benchmark measures, each with the headers and body a client sends
 * and the check its answer must pass in the pre-flight:
 *
 * - `tools/call` (2025-11-25): `tools/call echo`, JSON answer;
 * - `tools/call@2026` (2026-07-28): the same call with the per-request `_meta` envelope and the
 *   `Mcp-Method`/`Mcp-Name` headers
 *   (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http);
 * - `resources/read` (2025-11-25): a small Markdown text resource;
 * - `prompts/get` (2025-11-25, not in the default set): a prompt with two string arguments.
 *
 * Every target serves the same bytes for each path it supports (bench/lib/bench-content.ts).
 *
 * @example
 * ```ts
 * const path = BENCH_PATHS["resources/read"];
 * const res = await fetch(url, { method: "POST", headers: path.headers, body: path.body(1) });
 * path.check(res.status, res.headers.get("content-type"), await res.text(), 1);
 * ```
 */
import { BENCH_RESOURCE_TEXT, BENCH_RESOURCE_URI, BENCH_REVIEW_CODE } from "./bench-content.js";
import { ECHO_HEADERS, ECHO_TEXT, echoBody, parseEchoResponse, resultOf } from "./echo-request.js";
import { headersFor, toolCallBody } from "./http-client.js";

/** The paths the benchmark can measure. */
export type BenchPathKey = "tools/call" | "tools/call@2026" | "resources/read" | "prompts/get";

/** One kind of request, and how to tell its answer is right. */
export interface BenchPath {
  readonly key: BenchPathKey;
  /** Row label. */
  readonly label: string;
  /** What exactly is asked, for the docs. */
  readonly what: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON-RPC body for one id. */
  body(id: number): string;
  /** Throws an Error saying what is wrong unless the answer is the expected result. */
  check(status: number, contentType: string | null, text: string, id: number): void;
}

/** The paths `npm run bench:http` measures unless `--paths` says otherwise. */
export const DEFAULT_PATHS: readonly BenchPathKey[] = [
  "tools/call",
  "tools/call@2026",
  "resources/read",
];

function rpc(id: number, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** Every path by key. */
export const BENCH_PATHS: Readonly<Record<BenchPathKey, BenchPath>> = Object.freeze({
  "tools/call": {
    key: "tools/call",
    label: "tools/call (2025-11-25)",
    what: "`tools/call echo` (zod-validated argument), protocol 2025-11-25, JSON answer",
    headers: ECHO_HEADERS,
    body: echoBody,
    check: parseEchoResponse,
  },
  "tools/call@2026": {
    key: "tools/call@2026",
    label: "tools/call (2026-07-28)",
    what: "`tools/call echo`, protocol 2026-07-28 (`_meta` envelope, `Mcp-Method`/`Mcp-Name` headers)",
    headers: headersFor("2026", "echo"),
    body: (id) => toolCallBody(id, "echo", { text: ECHO_TEXT }, "2026"),
    check: parseEchoResponse,
  },
  "resources/read": {
    key: "resources/read",
    label: "resources/read (2025-11-25)",
    what: `\`resources/read ${BENCH_RESOURCE_URI}\` (${Buffer.byteLength(BENCH_RESOURCE_TEXT)} bytes of Markdown), protocol 2025-11-25`,
    headers: ECHO_HEADERS,
    body: (id) => rpc(id, "resources/read", { uri: BENCH_RESOURCE_URI }),
    check: (status, contentType, text, id) => {
      const result = resultOf(status, contentType, text, id) as {
        contents?: Array<{ uri?: unknown; text?: unknown }>;
      };
      const item = result.contents?.[0];
      if (item?.uri !== BENCH_RESOURCE_URI || item.text !== BENCH_RESOURCE_TEXT) {
        throw new Error(`not the resource's contents: ${text.slice(0, 300)}`);
      }
    },
  },
  "prompts/get": {
    key: "prompts/get",
    label: "prompts/get (2025-11-25)",
    what: "`prompts/get review` (two zod-validated string arguments), protocol 2025-11-25",
    headers: ECHO_HEADERS,
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
