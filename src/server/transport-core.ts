/**
 * Hands a server's shared request machinery (see {@link TransportCore}) to transports outside its
 * own node:http listener, such as stdio and the framework adapters. Kept off the public `McpServer` interface (a WeakMap
 * keyed by the server), so the public API stays the documented one while every door drives the
 * same dispatcher, registry and bounds.
 */
import type { RequestCore } from "../http/index.js";
import type { TransportCore as DispatchCore } from "../stdio/index.js";

/** What the doors share: the dispatcher and its bounds (stdio), and the HTTP request core. */
export interface TransportCore extends DispatchCore {
  /** The request core of the server's own doors (node:http, fetch); the framework adapters' too. */
  readonly request: RequestCore;
}

const cores = new WeakMap<object, TransportCore>();

/** Called once by the server's constructor. */
export function registerTransportCore(server: object, core: TransportCore): void {
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
export function transportCore(server: object): TransportCore {
  const core = cores.get(server);
  if (core === undefined) {
    throw new TypeError("conduit-mcp: expected a server made by createMcpServer()");
  }
  return core;
}

/**
 * Whether `value` was made by `createMcpServer` (and so has a core).
 *
 * @example
 * ```ts
 * hasTransportCore(createMcpServer({ tools: [] })); // true
 * ```
 */
export function hasTransportCore(value: unknown): value is object {
  return typeof value === "object" && value !== null && cores.has(value);
}
