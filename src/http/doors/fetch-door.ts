/**
 * The web-standard door of the request core: `(request: Request) => Promise<Response>`
 * (https://fetch.spec.whatwg.org/), for runtimes and frameworks that speak fetch (Hono,
 * @hono/node-server, and in-process tests). It adapts a `Request` to the transport-neutral
 * {@link RequestInput} and answers through a {@link WebResponse}; every step, bound and timeout
 * is the core's, shared with the node:http door (node-door.ts).
 *
 * The disconnect. A fetch handler sees no socket: the request's `AbortSignal` aborting, or the
 * host cancelling the response stream, is the client going away, exactly what a socket's
 * `'close'` is to the node:http door.
 *
 * The client address. A `Request` carries none, so the caller says it (`clientAddress`, e.g.
 * from the framework's connection info); `trustProxy` then applies to it as to a socket peer.
 * Without one (or with one that is not an IP address), a request with neither principal nor
 * session runs in a scope of its own, `fetch:<random UUID>`: unrelated clients never share a
 * scope (nor can cancel each other's requests), at the price that such a client's
 * `notifications/cancelled` reaches none of its own requests either and the per-scope bounds
 * do not group its requests.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

import { parseIpAddress } from "../../identity/ip-address.js";
import type { RequestCore } from "../endpoint.js";
import { BODY_TIMEOUT, BODY_TOO_LARGE } from "../read-body.js";
import type { BodyOutcome, BodySource, RequestHeaders, RequestInput } from "../transport.js";
import { failResponse } from "../write-response.js";
import { CloseLatch } from "./close-latch.js";
import { WebResponse } from "./web-response.js";

/** Per-call options of a {@link FetchHandler}. */
export interface FetchOptions {
  /**
   * The client's IP address as the connection reports it (before any `X-Forwarded-For`, which
   * `trustProxy` governs as usual), e.g. `getConnInfo(c).remote.address` under Hono. Without a
   * valid one, see the scope rule in docs/hosting.md.
   */
  readonly clientAddress?: string | undefined;
  /**
   * True when your router already routed this request to the MCP endpoint (mounted at any
   * path, e.g. `app.all("/api/mcp", …)`): the URL's path is not matched against `path`, and
   * `/health` and `/metrics` are not served through this call. Default false: the URL's path
   * decides (`path`, `/health`, `/metrics`, else 404), as on the node:http listener.
   */
  readonly endpoint?: boolean | undefined;
}

/**
 * A web-standard request handler. Safe to pass around unbound (`{ fetch: server.fetch }`).
 * Its second argument is read only for {@link FetchOptions}' fields, so hosts that pass
 * something else there (an environment, a connection) are harmless.
 */
export type FetchHandler = (request: Request, options?: FetchOptions | object) => Promise<Response>;

const EMPTY = Buffer.alloc(0);

/**
 * A `Request` as a {@link RequestInput} and its {@link BodySource}.
 */
class WebRequest implements RequestInput, BodySource {
  readonly method: string;
  readonly path: string;
  readonly headers: RequestHeaders;
  readonly remoteAddress: string | undefined;
  readonly fallbackScope: string | undefined;
  readonly endpoint: boolean;
  readonly closed: CloseLatch;
  readonly connection = null;
  readonly native: NodeShapedRequest;
  private readonly request: Request;
  private distinct: Record<string, readonly string[]> | null = null;

  constructor(request: Request, options: FetchOptions | undefined, closed: CloseLatch) {
    this.request = request;
    this.method = request.method.toUpperCase();
    this.endpoint = options?.endpoint === true;
    this.path = this.endpoint ? "" : pathOf(request.url);
    const headers: Record<string, string> = {};
    for (const [name, value] of request.headers) headers[name] = value;
    this.headers = headers;
    const address = options?.clientAddress;
    const valid = typeof address === "string" && parseIpAddress(address) !== null;
    this.remoteAddress = valid ? address : undefined;
    this.fallbackScope = valid ? undefined : `fetch:${randomUUID()}`;
    this.closed = closed;
    this.native = {
      method: this.method,
      url: urlPathAndQuery(request.url),
      headers: headers as IncomingHttpHeaders,
      socket: { remoteAddress: this.remoteAddress },
      request,
    };
  }

  get body(): BodySource {
    return this;
  }

  /** A `Headers` object joins a repeated header's values: each name has one value here. */
  get headersDistinct(): Readonly<Record<string, readonly string[] | undefined>> {
    if (this.distinct === null) {
      const distinct: Record<string, readonly string[]> = {};
      for (const [name, value] of Object.entries(this.headers)) distinct[name] = [value as string];
      this.distinct = distinct;
    }
    return this.distinct;
  }

  read(limit: number, timeoutMs: number): Promise<BodyOutcome> {
    const body = this.request.body;
    if (body === null) return Promise.resolve(EMPTY);
    // Read already by someone else (a framework helper): nothing left to wait for.
    if (this.request.bodyUsed || body.locked) return Promise.resolve(EMPTY);
    return readStream(body, limit, timeoutMs, this.closed);
  }

  /** The host owns the connection and what is left of the body. */
  skip(): void {}
}

/**
 * The request in node's shape, for the hooks written against `IncomingMessage` (`auth.verify`,
 * static tokens): `headers` (lower-case names), `method`, `url`, `socket.remoteAddress`, and
 * the web `Request` itself as `request`.
 */
export interface NodeShapedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress: string | undefined };
  readonly request: Request;
}

/**
 * Reads a body stream, at most `limit` bytes, within `timeoutMs` (0 = no limit). Stops reading
 * at the limit or the deadline; the rest is left to the host (releasing the reader rather than
 * cancelling it, which some hosts turn into a dropped connection before the 413 is sent).
 */
function readStream(
  body: ReadableStream<Uint8Array>,
  limit: number,
  timeoutMs: number,
  closed: CloseLatch,
): Promise<BodyOutcome> {
  const reader = body.getReader();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (outcome: BodyOutcome | Error): void => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
      if (outcome === BODY_TOO_LARGE || outcome === BODY_TIMEOUT) {
        try {
          reader.releaseLock();
        } catch {
          // A read still pending: the host drains or drops the rest.
        }
      }
    };
    let timer: NodeJS.Timeout | undefined;
    if (timeoutMs > 0) {
      timer = setTimeout(() => finish(BODY_TIMEOUT), timeoutMs);
      timer.unref();
    }
    closed.onClose(() => finish(new Error("request closed before its body ended")));
    const pump = (): void => {
      reader.read().then((result) => {
        if (done) return;
        if (result.done) {
          finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
          return;
        }
        const chunk = result.value;
        size += chunk.byteLength;
        if (size > limit) {
          finish(BODY_TOO_LARGE);
          return;
        }
        chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        pump();
      }, finishWithError);
    };
    const finishWithError = (error: unknown): void =>
      finish(error instanceof Error ? error : new Error("request body failed"));
    pump();
  });
}

/** The path of a request URL, without its query string. */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "";
  }
}

function urlPathAndQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return "/";
  }
}

/**
 * The fetch handler over `core`.
 *
 * @example
 * ```ts
 * const fetchHandler = createFetchHandler(createRequestCore(config));
 * const response = await fetchHandler(new Request("http://localhost/health"));
 * ```
 */
export function createFetchHandler(core: RequestCore): FetchHandler {
  return (request, options) => {
    const closed = new CloseLatch();
    const target = new WebResponse(() => closed.close());
    const signal = request.signal;
    const onAbort = (): void => closed.close();
    if (signal.aborted) closed.close();
    else signal.addEventListener("abort", onAbort, { once: true });
    // The client left: a stream still open ends, a response never decided resolves.
    closed.onClose(() => target.settle());
    const settle = (): void => {
      signal.removeEventListener("abort", onAbort);
      target.settle();
    };
    try {
      core.handle(new WebRequest(request, sanitize(options), closed), target).then(settle, () => {
        failResponse(target);
        settle();
      });
    } catch {
      failResponse(target);
      settle();
    }
    return target.response();
  };
}

/** Only the documented fields, and only when they have the documented types. */
function sanitize(options: unknown): FetchOptions | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  const { clientAddress, endpoint } = options as Record<string, unknown>;
  return {
    clientAddress: typeof clientAddress === "string" ? clientAddress : undefined,
    endpoint: endpoint === true,
  };
}
