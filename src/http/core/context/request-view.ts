/**
 * `ctx.request`: the read-only view of an HTTP request a handler may read (docs/limits.md, "The
 * request view"), made only when a handler asks. It holds the method, the path, the client's
 * address as the server believes it, and the headers the server's `requestHeaders` option
 * allows: nothing else of the request reaches user code through it.
 */
import { clientAddress, type TrustProxy } from "../../../identity/index.js";
import type { RequestView } from "../../../protocol/index.js";
import type { RequestInput } from "../../transport.js";

/**
 * The view of `input`, with the headers named in `allowed` (lower case, checked by the server).
 *
 * @example
 * ```ts
 * buildRequestView(input, ["x-tenant"], TRUST_NONE); // { method: "POST", path: "/mcp", … }
 * ```
 */
export function buildRequestView(
  input: RequestInput,
  allowed: readonly string[],
  trustProxy: TrustProxy,
): RequestView {
  const headers: Record<string, string> = {};
  for (const name of allowed) {
    const value = input.headers[name];
    if (value === undefined) continue;
    // RFC 9110, section 5.3: a repeated field's values combine into one, comma-separated.
    headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return Object.freeze({
    method: input.method,
    path: input.path === "" ? pathOfNative(input.native) : input.path,
    clientAddress:
      clientAddress(input.remoteAddress, input.headers["x-forwarded-for"], trustProxy) ?? null,
    headers: Object.freeze(headers),
  });
}

/** A door that did not parse its path (a framework route) still has its request's URL. */
function pathOfNative(native: unknown): string {
  const url = (native as { url?: unknown } | null)?.url;
  if (typeof url !== "string") return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
