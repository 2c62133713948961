/**
 * Clients' answers to server requests, between nodes: the bus contract.
 *
 * @example
 * ```ts
 * import type { ServerReplyBus } from "conduit-mcp";
 * ```
 */
export type { ClientReply, ServerReplyBus } from "./reply-bus.js";
