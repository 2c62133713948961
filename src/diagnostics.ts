/**
 * Every `node:diagnostics_channel` channel conduit-mcp publishes on, created once here
 * (docs/cancellation.md, "Diagnostics"). Publishers guard with
 * `if (channel.hasSubscribers)` so an idle channel costs nothing.
 *
 * @example
 * ```ts
 * import diagnostics_channel from "node:diagnostics_channel";
 * diagnostics_channel.subscribe("conduit-mcp:request:cancelled", (msg) => console.log(msg));
 * ```
 */
import diagnosticsChannel from "node:diagnostics_channel";

import type { CancellationSource } from "./errors.js";

/** Names of every channel, as subscribers spell them. */
export const ChannelName = {
  requestCancelled: "conduit-mcp:request:cancelled",
  cancellationCleanup: "conduit-mcp:cancellation:cleanup",
  cancellationJanitor: "conduit-mcp:cancellation:janitor",
  toolKilled: "conduit-mcp:tool:killed",
  toolError: "conduit-mcp:tool:error",
  storeOutage: "conduit-mcp:store:outage",
  connectionClosed: "conduit-mcp:connection:closed",
} as const;

/** Message of `conduit-mcp:request:cancelled`: a cancellation was recorded. */
export interface RequestCancelledMessage {
  /** The request id as stored (integers as decimal text). */
  readonly requestId: string;
  /** The prefixed scope (`session:…`, `principal:…`, `ip:…`, or `global`). */
  readonly scope: string;
  /** The sanitised reason, or null. */
  readonly reason: string | null;
  /** What caused it, when the transport knows. */
  readonly source?: CancellationSource;
}

/** Message of `conduit-mcp:cancellation:cleanup`: one cleanup pass. */
export interface CancellationCleanupMessage {
  /** Expired cancellation rows removed. */
  readonly removed: number;
  /** In-flight entries of dead handles removed. */
  readonly inFlightRemoved: number;
}

/** Message of `conduit-mcp:cancellation:janitor`: one janitor tick. */
export interface CancellationJanitorMessage {
  readonly removed: number;
}

/** Message of `conduit-mcp:tool:killed`: a tool outlived the stream cancel timeout. */
export interface ToolKilledMessage {
  readonly tool: string;
  readonly requestId: string;
  readonly scope: string;
  /** Whether a worker thread was terminated (isolated tools) or the call only abandoned. */
  readonly terminated: boolean;
}

/**
 * Message of `conduit-mcp:tool:error`: a handler (tool, resource read, template read, prompt,
 * completer) threw or returned a value that could not be sent; the client got only -32603 (or
 * the tool's `isError` result). Not published for a cancelled handler (its AbortError is the
 * cancellation, reported on `conduit-mcp:request:cancelled`), a killed one
 * (`conduit-mcp:tool:killed`), or a full worker pool ("Server busy" is a refusal, not a fault).
 */
export interface ToolErrorMessage extends HandlerErrorContext {
  /** What the handler threw, or why its value was refused (a `TypeError` naming the rule). */
  readonly error: unknown;
}

/**
 * Who called which handler, for a handler's failure: what the `onError` option receives beside
 * the error, and the rest of the `conduit-mcp:tool:error` message.
 */
export interface HandlerErrorContext {
  /** `tool`, `resource`, `resource-template`, `prompt`, `completion` or `extension`. */
  readonly kind: HandlerKind;
  /** `tools/call`, `resources/read`, `prompts/get`, `completion/complete` or an extension's method. */
  readonly method: string;
  /** The tool or prompt name, the resource URI, or the completion's prompt name or URI template. */
  readonly name: string;
  /** The client's request id (as sent), or null. */
  readonly requestId: string | number | null;
  /** The prefixed scope as the registry knows it (`session:…`, `principal:…`, `ip:…`). */
  readonly scope: string;
  /** The scope's kind: the prefix of `scope` (`session`, `principal`, `ip`, `global`). */
  readonly scopeKind: string;
  /** `2025-11-25` (JSON-RPC with optional sessions) or `2026-07-28` (stateless envelope). */
  readonly protocolEra: "2025-11-25" | "2026-07-28";
  /** The authenticated principal's id, or null for an anonymous caller. */
  readonly principalId: string | null;
  /** The 2025-era session id, or null. */
  readonly sessionId: string | null;
}

/**
 * Message of `conduit-mcp:connection:closed`: the connection bounds closed a connection, either
 * at once because its client bucket holds `maxConnectionsPerBucket` (`bucket`), or to make room
 * at `maxConnections` (`evicted`: one of the largest bucket's).
 */
export interface ConnectionClosedMessage {
  /** The client bucket (IPv4 address, IPv6 `/64`), or `proxy:<address>` for a trusted proxy. */
  readonly bucket: string;
  /** `bucket`: refused at its bucket's bound; `evicted`: closed to make room at the global one. */
  readonly reason: "bucket" | "evicted";
}

/** Which kind of handler ran. */
export type HandlerKind =
  | "tool"
  | "resource"
  | "resource-template"
  | "prompt"
  | "completion"
  | "extension";

/** The channels themselves. */
export const channels = {
  requestCancelled: diagnosticsChannel.channel(ChannelName.requestCancelled),
  cancellationCleanup: diagnosticsChannel.channel(ChannelName.cancellationCleanup),
  cancellationJanitor: diagnosticsChannel.channel(ChannelName.cancellationJanitor),
  toolKilled: diagnosticsChannel.channel(ChannelName.toolKilled),
  toolError: diagnosticsChannel.channel(ChannelName.toolError),
  storeOutage: diagnosticsChannel.channel(ChannelName.storeOutage),
  connectionClosed: diagnosticsChannel.channel(ChannelName.connectionClosed),
} as const;
