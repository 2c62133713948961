/**
 * What `createMcpServer` returns: the {@link McpServer} interface, where a listening server is
 * reached, and the snapshot of its per-scope bounds.
 */
import type { CancellationRegistry } from "../cancellation/index.js";
import type { FetchHandler, NodeRequestListener } from "../http/index.js";
import type {
  PrimitiveCollection,
  Prompt,
  ResourceCollection,
  ResourceTemplate,
  Tool,
} from "../protocol/index.js";

/** Where a listening server can be reached. */
export interface ListenAddress {
  /** The full endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
}

/**
 * A conduit-mcp server.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ tools: [echo] });
 * const { url } = await server.listen({ port: 3000 });
 * await server.close();
 * ```
 */
export interface McpServer {
  /**
   * The node:http request listener (usable with any `http.Server`). Register its
   * `checkContinue` on the server's `'checkContinue'` event too, so that `100 Continue` is sent
   * only to requests that passed their checks (listen() does).
   */
  readonly handler: NodeRequestListener;
  /**
   * The web-standard handler: the same core as {@link McpServer.handler} behind a
   * `(request: Request, options?) => Promise<Response>` (Hono, fetch runtimes, in-process
   * tests). The request's `AbortSignal` is the disconnect; a stream is a `ReadableStream` that
   * ends when cancelled. Pass `{ clientAddress }` (the connection's IP) so that anonymous
   * clients get their per-address scope; `{ endpoint: true }` when your router already routed
   * the request to the endpoint. Bound: `{ fetch: server.fetch }` works.
   */
  readonly fetch: FetchHandler;
  /** Starts an HTTP server. Defaults: host `127.0.0.1`, port 0 (a free port). */
  listen(options?: { host?: string; port?: number }): Promise<ListenAddress>;
  /**
   * After `closeDelayMs` (default 0) of serving with `/ready` answering 503, stops accepting,
   * lets running requests finish for `closeGraceMs`, then aborts them (their
   * exchanges end at once), stops the janitors and closes the registry if the server created it.
   * Idempotent.
   */
  close(): Promise<void>;
  /** The cancellation registry the server tracks requests in. */
  readonly registry: CancellationRegistry;
  /**
   * The served tools: `add`, `remove`, `enable`, `disable` while serving, and `onChanged` to
   * hear about it. Lists are ordered by name; a disabled or hidden tool answers as unknown.
   */
  readonly tools: PrimitiveCollection<Tool>;
  /**
   * The served direct resources, by URI (same operations as `tools`), and `updated(uri)` to tell
   * the sessions subscribed to a URI that it changed (docs/subscriptions.md).
   */
  readonly resources: ResourceCollection;
  /** The served resource templates, by URI template. */
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  /** The served prompts, by name. */
  readonly prompts: PrimitiveCollection<Prompt>;
  /**
   * What the per-scope bounds hold right now: running requests, open (or reserved) SSE streams
   * and the scopes holding either. All 0 when the server is idle.
   */
  concurrency(): ConcurrencySnapshot;
}

/**
 * A snapshot of {@link McpServer.concurrency}.
 *
 * @example
 * ```ts
 * const { requests, streams, scopes } = server.concurrency();
 * ```
 */
export interface ConcurrencySnapshot {
  /** Requests (and notifications) being processed, all scopes. */
  readonly requests: number;
  /** SSE stream units held, all scopes. */
  readonly streams: number;
  /** Scopes holding at least one request unit. */
  readonly scopes: number;
  /** Open 2026-07-28 `subscriptions/listen` streams. */
  readonly listeners: number;
  /** 2025-era resource subscriptions held on this process. */
  readonly subscriptions: number;
  /** Connections open on the server listen() started (0 without listen()). */
  readonly connections: number;
}
