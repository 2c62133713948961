/**
 * Reading JSON-RPC answers off the wire, shared by the soak and the chaos soak: SSE event framing
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation,
 * as far as MCP servers use it: `data:` lines, blank-line separated) and the two fields checked.
 */

/**
 * Splits the complete events off `buffer`: each event's joined `data:` payload ("" for an event
 * without data, e.g. a keep-alive comment), and the unfinished rest to keep for the next chunk.
 */
export function takeSseEvents(buffer: string): { events: string[]; rest: string } {
  const events: string[] = [];
  let rest = buffer;
  for (let end = rest.indexOf("\n\n"); end !== -1; end = rest.indexOf("\n\n")) {
    events.push(
      rest
        .slice(0, end)
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n"),
    );
    rest = rest.slice(end + 2);
  }
  return { events, rest };
}

/** The first content item's text of a tool result, if the answer is one. */
export function resultText(message: unknown): string | undefined {
  const result = (message as { result?: { content?: { text?: unknown }[] } }).result;
  const text = result?.content?.[0]?.text;
  return typeof text === "string" ? text : undefined;
}

/** The JSON-RPC error code, if the answer is an error. */
export function errorCode(message: unknown): number | undefined {
  const code = (message as { error?: { code?: unknown } }).error?.code;
  return typeof code === "number" ? code : undefined;
}
