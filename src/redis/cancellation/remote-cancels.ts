/**
 * Hearing the cancels other nodes announce: the store's pub/sub channel while this node listens,
 * and each shard's catch-up stream for what was announced while it did not (its subscriber was
 * away). Every message is hostile until validated (remote-message.ts); a node's own announcements
 * are not delivered back to it.
 */
import type { RemoteCancellation } from "../../cancellation/types.js";
import type { RedisClient } from "../connection/connection.js";
import { describeError } from "../connection/outage-monitor.js";
import type { StoreCalls } from "../connection/store-calls.js";
import type { KeyLayout, ShardKeys } from "../key-layout.js";
import {
  decodeRemoteFrame,
  decodeRemoteMessage,
  type RemoteMessage,
  streamIdAfter,
} from "./remote-message.js";

/** Options of {@link RemoteCancels}. */
export interface RemoteCancelsOptions {
  /** A dedicated connection for SUBSCRIBE (a subscribed connection runs no other command). */
  readonly subscriber: RedisClient;
  /** Reads the catch-up streams on the command connection. */
  readonly calls: StoreCalls<unknown>;
  readonly keys: KeyLayout;
  readonly nodeId: string;
  /** The most entries read from one stream at a catch-up. */
  readonly catchUpLength: number;
  /** A cancel of this key was heard: a row of it may exist. */
  readonly heardKey: (scope: string, requestId: string) => void;
  readonly logger: (message: string) => void;
  readonly isClosed: () => boolean;
}

/**
 * The remote cancellations of one store. It subscribes on each `ready` of its subscriber (not
 * ioredis), so it can read what it missed and tell when delivery is live again.
 *
 * @example
 * ```ts
 * const remote = new RemoteCancels({ subscriber, calls, keys, nodeId, catchUpLength: 1_000, heardKey, logger, isClosed });
 * remote.listen((event) => registry.abortLocal(event));
 * ```
 */
export class RemoteCancels {
  private readonly options: RemoteCancelsOptions;
  private readonly listeners = new Set<(event: RemoteCancellation) => void>();
  /** Per shard: the newest catch-up stream id this node has heard of (null before the first). */
  private readonly lastSeen: Array<string | null>;
  private subscribed = false;

  constructor(options: RemoteCancelsOptions) {
    this.options = options;
    this.lastSeen = new Array<string | null>(options.keys.shards).fill(null);
    const { subscriber } = options;
    subscriber.on("close", () => {
      this.subscribed = false;
    });
    subscriber.on("ready", () => void this.subscribe());
    subscriber.on("message", (channel: string, raw: string) => this.onMessage(channel, raw));
    if (subscriber.status === "ready") void this.subscribe();
  }

  /** Whether the channel is heard (and what was missed was read). */
  get listening(): boolean {
    return this.subscribed;
  }

  /** Adds a listener; returns its removal. */
  listen(listener: (event: RemoteCancellation) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Drops every listener (the store closes). */
  clear(): void {
    this.listeners.clear();
  }

  /**
   * Subscribes, then reads from each shard's catch-up stream what was announced while this node
   * was not listening (nothing on the very first subscription: only the position is taken).
   */
  private async subscribe(): Promise<void> {
    const { subscriber, keys, isClosed } = this.options;
    if (isClosed()) return;
    try {
      await subscriber.subscribe(keys.channel);
    } catch {
      return; // Retried on the next `ready`.
    }
    await Promise.all(keys.all.map((shard) => this.catchUp(shard)));
    if (!isClosed() && subscriber.status === "ready") this.subscribed = true;
  }

  /** One shard's catch-up: deliver what is newer than the last id heard, or take the position. */
  private async catchUp(shard: ShardKeys): Promise<void> {
    const { calls } = this.options;
    const since = this.lastSeen[shard.index] ?? null;
    if (since === null) {
      const latest = await calls.run((c) => c.xrevrange(shard.catchUp, "+", "-", "COUNT", 1), []);
      const id = latest[0]?.[0];
      if (this.lastSeen[shard.index] === null) this.lastSeen[shard.index] = id ?? "0-0";
      return;
    }
    const missed = await calls.run(
      (c) => c.xrange(shard.catchUp, `(${since}`, "+", "COUNT", this.options.catchUpLength),
      [],
    );
    for (const [streamId, fields] of missed) {
      this.heard(shard.index, streamId);
      const message = fields[0] === "m" ? decodeRemoteMessage(fields[1]) : null;
      if (message !== null) this.deliver(message);
    }
  }

  /** Advances a shard's position to `streamId` if it is newer. */
  private heard(shard: number, streamId: string): void {
    const seen = this.lastSeen[shard];
    if (seen === null || seen === undefined || streamIdAfter(streamId, seen)) {
      this.lastSeen[shard] = streamId;
    }
  }

  /** A channel frame: hostile until validated; our own events are not remote. */
  private onMessage(channel: string, raw: string): void {
    const { keys, isClosed } = this.options;
    if (isClosed() || channel !== keys.channel) return;
    const frame = decodeRemoteFrame(raw, keys.shards);
    if (frame === null) return;
    this.heard(frame.shard, frame.streamId);
    this.deliver(frame.message);
  }

  private deliver(message: RemoteMessage): void {
    if (message.node === this.options.nodeId) return;
    if (message.requestId !== null) this.options.heardKey(message.scope, message.requestId);
    const event: RemoteCancellation = {
      scope: message.scope,
      requestId: message.requestId,
      reason: message.reason,
      source: message.source,
    };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        try {
          this.options.logger(
            `conduit-mcp: a remote cancellation listener threw: ${describeError(error)}`,
          );
        } catch {
          // Ignore a broken logger.
        }
      }
    }
  }
}
