/**
 * Content negotiation for the MCP endpoint (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports): the body must be JSON, and the
 * client must accept JSON or an event stream (406 when it accepts neither). A missing `Accept`
 * means "anything" (RFC 9110 §12.5.1).
 */

/** Bit set in {@link acceptedMediaTypes} when `application/json` is acceptable. */
export const ACCEPTS_JSON = 1;
/** Bit set in {@link acceptedMediaTypes} when `text/event-stream` is acceptable. */
export const ACCEPTS_SSE = 2;

/** What the official clients send: answered without parsing. */
const COMMON_ACCEPT = "application/json, text/event-stream";

/**
 * Which of JSON and SSE the `Accept` header allows, as a bit set (0 → answer 406).
 *
 * @example
 * ```ts
 * acceptedMediaTypes("application/json, text/event-stream"); // ACCEPTS_JSON | ACCEPTS_SSE
 * acceptedMediaTypes("text/html"); // 0
 * ```
 */
export function acceptedMediaTypes(accept: string | undefined): number {
  if (accept === undefined || accept === "" || accept === COMMON_ACCEPT) {
    return ACCEPTS_JSON | ACCEPTS_SSE;
  }
  let result = 0;
  // Bounded: a header is at most Node's header size limit, and only the first 32 ranges count.
  const ranges = accept.split(",", 32);
  for (const range of ranges) {
    const semi = range.indexOf(";");
    const type = (semi === -1 ? range : range.slice(0, semi)).trim().toLowerCase();
    if (semi !== -1 && /;\s*q\s*=\s*0(\.0*)?\s*(;|$)/i.test(range.slice(semi))) continue;
    if (type === "application/json") result |= ACCEPTS_JSON;
    else if (type === "text/event-stream") result |= ACCEPTS_SSE;
    else if (type === "*/*") result |= ACCEPTS_JSON | ACCEPTS_SSE;
    else if (type === "application/*") result |= ACCEPTS_JSON;
    else if (type === "text/*") result |= ACCEPTS_SSE;
  }
  return result;
}

/**
 * Whether a `Content-Type` names JSON (parameters such as `charset` allowed).
 *
 * @example
 * ```ts
 * isJsonContentType("application/json; charset=utf-8"); // true
 * isJsonContentType("text/plain"); // false
 * ```
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  if (contentType === "application/json") return true;
  const semi = contentType.indexOf(";");
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return type === "application/json";
}
