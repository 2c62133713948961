/**
 * What a transport outside the server's own node:http listener (stdio) needs from a server built
 * by `createMcpServer`: its dispatcher, its concurrency bounds and whether it is closing. Kept off
 * the public {@link McpServer} interface (a WeakMap keyed by the server), so the public API stays
 * the documented one while every door drives the same dispatcher, registry and bounds.
 */
import type { CancellationRegistry } from "../cancellation/index.js";
import type { ScopeLimiter } from "../http/index.js";
import type { Dispatcher } from "../protocol/index.js";
import type { McpServer } from "./create-mcp-server.js";

/** The shared request machinery of one server. */
export interface TransportCore {
  readonly dispatcher: Dispatcher;
  readonly registry: CancellationRegistry;
  /** Running requests per scope (and in all): the same bound every door counts against. */
  readonly requests: ScopeLimiter;
  /** The largest message accepted (`maxBodyBytes`). */
  readonly maxMessageBytes: number;
  /** True once `close()` began: new requests are refused. */
  closing(): boolean;
}

const cores = new WeakMap<McpServer, TransportCore>();

/** Called once by the server's constructor. */
export function registerTransportCore(server: McpServer, core: TransportCore): void {
  cores.set(server, core);
}

/**
 * The core of a server made by `createMcpServer`; throws a TypeError for anything else.
 *
 * @example
 * ```ts
 * const { dispatcher } = transportCore(server);
 * ```
 */
export function transportCore(server: McpServer): TransportCore {
  const core = cores.get(server);
  if (core === undefined) {
    throw new TypeError("conduit-mcp: expected a server made by createMcpServer()");
  }
  return core;
}

/**
 * Whether `value` is a server made by `createMcpServer` (and so has a core).
 *
 * @example
 * ```ts
 * isConduitServer(createMcpServer({ tools: [] })); // true
 * ```
 */
export function isConduitServer(value: unknown): value is McpServer {
  return typeof value === "object" && value !== null && cores.has(value as McpServer);
}
