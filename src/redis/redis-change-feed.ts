/**
 * `RedisChangeFeed`: the {@link ChangeFeed} of several nodes on one Redis (or Redis Cluster). A
 * change is told to this node's listeners at once and published on one channel,
 * `<keyPrefix>{<prefix>}:changes`; every other node hears it there and tells its own listeners.
 * A node ignores its own messages (they carry its node id), so each listener hears a change
 * once. Classic pub/sub reaches every node of a Redis Cluster, so one channel serves a cluster.
 * Changes are hints (a client re-reads what changed): while Redis is away they reach this node
 * only, and nothing is queued for later.
 */

import { randomUUID } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import {
  type ChangeEvent,
  type ChangeFeed,
  changeEventOf,
  tellListeners,
} from "../changes/index.js";
import type { Reachability } from "../reachability.js";
import { type RedisClient, RedisConnection } from "./connection/connection.js";
import { OutageMonitor } from "./connection/outage-monitor.js";
import { readChangeFeedOptions } from "./redis-option-declarations.js";

/** Options of {@link RedisChangeFeed}. */
export interface RedisChangeFeedOptions {
  /**
   * A Redis URL (owned, fail-fast connection) or an ioredis `Redis` / `Cluster` you own (one
   * created with `lazyConnect` is connected by the feed). A second connection is made for
   * SUBSCRIBE either way.
   */
  readonly redis: Redis | Cluster | string;
  /** Channel prefix, inside the hash tag; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /** Upper bound on one PUBLISH. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /** Receives one line per outage. Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

/** Upper bound on a raw message, checked before `JSON.parse` (a URI is at most 8 192 characters). */
const MAX_MESSAGE_LENGTH = 16_384;
const NODE_ID = /^[A-Za-z0-9-]{1,64}$/;

type Client = RedisClient;

/**
 * List changes and resource updates shared by every node on one Redis.
 *
 * @example
 * ```ts
 * import { RedisChangeFeed } from "conduit-mcp/redis";
 * const changeFeed = new RedisChangeFeed({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const server = createMcpServer({ changeFeed, sessions: { store } });
 * server.tools.add(deploy); // every node's listeners hear notifications/tools/list_changed
 * ```
 */
export class RedisChangeFeed implements ChangeFeed {
  readonly shared = true;
  private readonly client: Client;
  private readonly subscriber: Client;
  private readonly connection: RedisConnection;
  private readonly channel: string;
  private readonly node = randomUUID();
  private readonly timeoutMs: number;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly monitor: OutageMonitor;
  private readonly listeners = new Set<(event: ChangeEvent) => void>();
  private subscribed = false;
  private closed = false;

  constructor(options: RedisChangeFeedOptions) {
    const read = readChangeFeedOptions(options);
    this.timeoutMs = read.commandTimeoutMs;
    this.monitor = new OutageMonitor(read.logger, "changes");
    this.connection = new RedisConnection({
      redis: read.redis,
      timeoutMs: this.timeoutMs,
      monitor: this.monitor,
    });
    this.client = this.connection.client;
    this.reachability = this.connection.reachability;
    // Channels are not key-prefixed by ioredis: the client's prefix is part of the name.
    this.channel = `${this.connection.keyPrefix}{${read.prefix}}:changes`;
    this.connection.on("ready", () => this.monitor.up());
    // A subscribed connection cannot run other commands: SUBSCRIBE gets its own, resubscribed
    // here on every `ready`.
    this.subscriber = this.connection.subscriber();
    this.subscriber.on("close", () => {
      this.subscribed = false;
    });
    this.subscriber.on("ready", () => void this.subscribe());
    this.subscriber.on("message", (channel: string, raw: string) => this.onMessage(channel, raw));
    if (this.subscriber.status === "ready") void this.subscribe();
    this.connection.connect();
  }

  /** Resolves true once both connections are ready and the channel is heard; false after `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.live() && !this.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.live();
  }

  publish(event: ChangeEvent): void {
    if (this.closed) return;
    tellListeners(this.listeners, event);
    if (this.client.status !== "ready") return;
    const message = JSON.stringify({ v: 1, node: this.node, event });
    if (message.length > MAX_MESSAGE_LENGTH) return;
    this.client.publish(this.channel, message).then(
      () => this.monitor.up(),
      (error: unknown) => this.monitor.down(error),
    );
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.subscribed = false;
    this.listeners.clear();
    await this.connection.close();
  }

  private live(): boolean {
    return !this.closed && this.subscribed && this.client.status === "ready";
  }

  private async subscribe(): Promise<void> {
    if (this.closed) return;
    try {
      await this.subscriber.subscribe(this.channel);
    } catch {
      return; // Retried on the next `ready`.
    }
    if (!this.closed && this.subscriber.status === "ready") this.subscribed = true;
  }

  /** A message on the channel: hostile until validated (anyone allowed to PUBLISH can send one). */
  private onMessage(channel: string, raw: string): void {
    if (this.closed || channel !== this.channel) return;
    if (typeof raw !== "string" || raw.length > MAX_MESSAGE_LENGTH) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      return;
    }
    if (typeof parsed !== "object" || parsed === null) return;
    const { v, node, event } = parsed as Record<string, unknown>;
    if (v !== 1 || typeof node !== "string" || !NODE_ID.test(node)) return;
    // This node told its own listeners when it published.
    if (node === this.node) return;
    const change = changeEventOf(event);
    if (change !== null) tellListeners(this.listeners, change);
  }
}
