/**
 * What every benchmark target serves besides the `echo` tool, so each answers a path with the
 * same bytes: one Markdown resource and the code the `review` prompt is asked about.
 *
 * @example
 * ```ts
 * server.registerResource("readme", BENCH_RESOURCE_URI, { mimeType: "text/markdown" }, read);
 * ```
 */

/** The resource `resources/read` asks for. */
export const BENCH_RESOURCE_URI = "demo://readme";

/** Its text: a few hundred bytes of Markdown, about what an MCP server's readme resource holds. */
export const BENCH_RESOURCE_TEXT = `# Benchmark server

Tools: echo. Resources: demo://readme (this text).

Every server in the benchmark answers this resource with exactly these bytes, so the
resources/read figures compare the servers' per-call paths and nothing else. A read is
tracked like a tool call: cancellable, counted, bounded per scope.
`;

/** Its media type. */
export const BENCH_RESOURCE_MIME = "text/markdown";

/** The code the `review` prompt is asked about. */
export const BENCH_REVIEW_CODE = "def add(a, b):\n    return a - b";

/**
 * The `resources/read` result every SDK target returns for {@link BENCH_RESOURCE_URI}.
 *
 * @example
 * ```ts
 * server.registerResource("readme", BENCH_RESOURCE_URI, { mimeType: BENCH_RESOURCE_MIME }, async (uri) => benchReadResult(uri.href));
 * ```
 */
export function benchReadResult(uri: string): {
  contents: { uri: string; mimeType: string; text: string }[];
} {
  return { contents: [{ uri, mimeType: BENCH_RESOURCE_MIME, text: BENCH_RESOURCE_TEXT }] };
}
