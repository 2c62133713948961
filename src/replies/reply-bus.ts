/**
 * The contract that carries a client's answer to a server request (2025-11-25 elicitation,
 * sampling, roots) from the node its POST reached to the node whose call asked
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server:
 * the answer is a separate POST, and behind a load balancer it may reach any node). The protocol
 * layer's table of waiting requests uses it; `RedisReplyBus` (`conduit-mcp/redis`) implements it.
 */
import type { Reachability } from "../reachability.js";

/** A client's answer to a server request: its `result`, or its `error`'s code and message. */
export type ClientReply =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly code: number; readonly message: string };

/**
 * Carries answers between the nodes of one deployment. Every member must be safe to call at any
 * time and never throw. What arrives is hostile until validated: the receiving table accepts an
 * answer only for an id that waits there, from the scope that asked.
 *
 * @example
 * ```ts
 * import { RedisReplyBus } from "conduit-mcp/redis";
 * const server = createMcpServer({ serverRequests: { bus: new RedisReplyBus({ redis: url }) } });
 * ```
 */
export interface ServerReplyBus {
  /**
   * Whether the service behind the store is reachable (`GET /ready` answers 503 while it is not).
   * Absent for a store that needs no other process.
   */
  readonly reachability?: Reachability;
  /**
   * Delivers answers addressed to `node` (a route of 1-64 base64url characters) to `deliver` from
   * now on; returns the function that stops it. One process may attach several routes: its table
   * of server requests, and its task runs (`tasks/update` answers, keyed by task id).
   */
  attach(
    node: string,
    deliver: (scope: string, id: string, reply: ClientReply) => void,
  ): () => void;
  /** Sends an answer to `node`; resolves once sent or dropped, never rejects. */
  forward(node: string, scope: string, id: string, reply: ClientReply): Promise<void>;
}
