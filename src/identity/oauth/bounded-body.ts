/**
 * Reading an identity provider's answer without trusting its size: a JWKS or an introspection
 * answer is a few KiB, so a misbehaving (or impersonated) provider streaming megabytes is cut off
 * at a small bound instead of being buffered whole.
 */

/**
 * The body of `response` as text, or null once it passes `limit` bytes (the rest is never read).
 *
 * @example
 * ```ts
 * const text = await readBoundedBody(await fetch(url), 65_536); // null if larger
 * ```
 */
export async function readBoundedBody(response: Response, limit: number): Promise<string | null> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel();
    return null;
  }
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A `fetch` whose answers are read here, bounded: a larger body becomes a `502` answer (which
 * the caller treats as the provider being unavailable).
 *
 * @example
 * ```ts
 * const small = boundedFetch(262_144);
 * const response = await small("https://idp.example.com/jwks", { signal });
 * ```
 */
export function boundedFetch(limit: number): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    const text = await readBoundedBody(response, limit);
    if (text === null) return new Response(null, { status: 502 });
    return new Response(text, { status: response.status, headers: response.headers });
  };
}
