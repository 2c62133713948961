/**
 * The one request every benchmark target answers: a 2025-11-25 `tools/call` of the `echo` tool,
 * sent the way a Streamable HTTP client sends it (the client MUST accept both JSON and SSE, and
 * sends `MCP-Protocol-Version` after initialisation:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server). The official SDK rejects a
 * POST whose Accept header lacks either type (406), so the headers matter for a fair comparison.
 *
 * @example
 * ```ts
 * const res = await fetch(url, { method: "POST", headers: ECHO_HEADERS, body: echoBody(1) });
 * parseEchoResponse(res.status, res.headers.get("content-type"), await res.text(), 1);
 * ```
 */

/** The protocol revision the benchmark speaks; the SDK 1.x and conduit-mcp both support it. */
export const BENCH_PROTOCOL_VERSION = "2025-11-25";

/** The text the echo tool is asked to return. */
export const ECHO_TEXT = "hello from the benchmark";

/** Headers of every benchmark request. */
export const ECHO_HEADERS: Readonly<Record<string, string>> = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": BENCH_PROTOCOL_VERSION,
};

/**
 * The JSON-RPC body of one `tools/call echo`. `id` may be autocannon's `[<id>]` placeholder, which
 * it replaces with a fresh random id per request (so no two in-flight requests share an id).
 *
 * @example
 * ```ts
 * echoBody(7); // '{"jsonrpc":"2.0","id":7,"method":"tools/call",...}'
 * ```
 */
export function echoBody(id: string | number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "echo", arguments: { text: ECHO_TEXT } },
  });
}

/**
 * The `result` of one answer: status 200 and a JSON-RPC success for `expectedId`, sent either as
 * one JSON object or as the `data:` of an SSE `message` event (the SDK's default). Throws an
 * Error that says what is wrong, so a broken target fails the run loudly.
 *
 * @example
 * ```ts
 * resultOf(200, "application/json", '{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}', 1);
 * ```
 */
export function resultOf(
  status: number,
  contentType: string | null,
  body: string,
  expectedId: string | number,
): Record<string, unknown> {
  if (status !== 200) throw new Error(`expected HTTP 200, got ${status}: ${body.slice(0, 300)}`);
  let json: string | undefined = body;
  if (contentType?.startsWith("text/event-stream")) {
    // The SDK answers a request with an SSE stream holding one `message` event (data: <json>).
    json = body
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim())
      .find((data) => data.length > 0);
    if (json === undefined) throw new Error(`SSE answer without data: ${body.slice(0, 300)}`);
  } else if (!contentType?.startsWith("application/json")) {
    throw new Error(`unexpected content type ${String(contentType)}`);
  }
  const message = JSON.parse(json) as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  const result = message.result;
  if (
    message.jsonrpc !== "2.0" ||
    message.id !== expectedId ||
    typeof result !== "object" ||
    result === null
  ) {
    throw new Error(`not a JSON-RPC result for id ${expectedId}: ${json.slice(0, 300)}`);
  }
  return result as Record<string, unknown>;
}

/**
 * Checks one answer: status 200 and a JSON-RPC result whose first content item is the echoed text
 * (see {@link resultOf} for the framing). Throws an Error that says what is wrong.
 *
 * @example
 * ```ts
 * parseEchoResponse(200, "application/json", '{"jsonrpc":"2.0","id":1,"result":{...}}', 1);
 * ```
 */
export function parseEchoResponse(
  status: number,
  contentType: string | null,
  body: string,
  expectedId: string | number,
): void {
  const result = resultOf(status, contentType, body, expectedId) as {
    content?: Array<{ type?: unknown; text?: unknown }>;
    isError?: unknown;
  };
  const item = result.content?.[0];
  if (result.isError === true || item?.type !== "text" || item.text !== ECHO_TEXT) {
    throw new Error(`not a valid echo result: ${JSON.stringify(result).slice(0, 300)}`);
  }
}
