/**
 * Every `node:diagnostics_channel` channel conduit-mcp publishes on, created once here
 * (DESIGN.md: the Node counterpart of the seed's `:telemetry` events). Publishers guard with
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
  storeOutage: "conduit-mcp:store:outage",
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

/** The channels themselves. */
export const channels = {
  requestCancelled: diagnosticsChannel.channel(ChannelName.requestCancelled),
  cancellationCleanup: diagnosticsChannel.channel(ChannelName.cancellationCleanup),
  cancellationJanitor: diagnosticsChannel.channel(ChannelName.cancellationJanitor),
  toolKilled: diagnosticsChannel.channel(ChannelName.toolKilled),
  storeOutage: diagnosticsChannel.channel(ChannelName.storeOutage),
} as const;
