/**
 * A request's headers in an object whose shape does not depend on the client that sent them.
 *
 * Node adds each header to `IncomingMessage.headers` as a property, in the order the client sent
 * it, and V8 gives objects one hidden class per order of their properties
 * (https://v8.dev/docs/hidden-classes). Optimized code that reads a header by name checks that
 * class: a request whose client sends the same headers in another order, or one more header, is
 * a class it has not seen, so V8 throws the code away (a deoptimization) and compiles it again,
 * then settles on a slower generic read once it has seen several. The request core reads its
 * copy instead ({@link RequestContext.headers}), one class for every client that sends only the
 * headers named here, whatever their order. The copy lives as long as the request's context, not
 * as long as a running call (which keeps only the door's request, for `ctx.request`).
 * docs/profile.md ("Seventh round") has the measurements.
 *
 * @example
 * ```ts
 * const headers = steadyHeaders(input.headers);
 * headers["mcp-protocol-version"]; // "2025-11-25"
 * ```
 */
import type { RequestHeaders } from "../../transport.js";

type HeaderValue = string | string[] | undefined;

/**
 * A fresh object with every header the request core reads (and those MCP clients commonly send),
 * in one fixed order, each undefined. One literal: every copy starts from the same hidden class.
 */
function knownHeaders(): Record<string, HeaderValue> {
  return {
    host: undefined,
    connection: undefined,
    "content-type": undefined,
    "content-length": undefined,
    accept: undefined,
    "accept-encoding": undefined,
    "accept-language": undefined,
    "user-agent": undefined,
    origin: undefined,
    authorization: undefined,
    "mcp-protocol-version": undefined,
    "mcp-session-id": undefined,
    "mcp-method": undefined,
    "mcp-name": undefined,
    "last-event-id": undefined,
    "sec-fetch-mode": undefined,
    "x-forwarded-for": undefined,
    traceparent: undefined,
    tracestate: undefined,
  };
}

/**
 * Copies `headers` (node's `IncomingMessage.headers`: lower-case names) into an object that
 * starts with the known names in one order; a header not among them follows them. A known header
 * the request did not send is there with the value undefined, as a missing one reads.
 *
 * @example
 * ```ts
 * steadyHeaders({ accept: "application/json", host: "127.0.0.1" }).host; // "127.0.0.1"
 * ```
 */
export function steadyHeaders(headers: RequestHeaders): RequestHeaders {
  const copy = knownHeaders();
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) copy[name] = value;
  }
  return copy;
}
