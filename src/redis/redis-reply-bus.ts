/**
 * `RedisReplyBus`: carries a client's answer to a server request (2025-11-25 elicitation,
 * sampling, roots) from the node its POST reached to the node whose call asked, over Redis
 * pub/sub (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server:
 * the answer is a separate POST, which a load balancer may send to any node).
 *
 * Each node listens on one channel of its own, `<keyPrefix>{<prefix>}:reply:<node>`, where
 * `<node>` is the random tag that starts every request id that node mints; an answer is published
 * only to the channel its id names, so no other node sees it. Pub/sub channels are not keys (no
 * Cluster slot is involved; classic PUBLISH reaches every node of a Redis Cluster), and nothing is
 * stored: an answer published while its node is away is lost, and the ask times out.
 *
 * Everything read from the channel is hostile (any client allowed to PUBLISH on that Redis can
 * forge a message): it is size-checked before parsing and every field after; the node's table
 * then accepts it only for an id that waits there, from the scope that asked.
 *
 * Fail-open like the stores: while Redis is unreachable, `forward` drops the answer within
 * `commandTimeoutMs` and never throws; one line is logged per outage.
 */

import type { Cluster, Redis } from "ioredis";
import type { Reachability } from "../reachability.js";
import type { ClientReply, ServerReplyBus } from "../replies/index.js";
import { bounded, readyWithin } from "./connection/bounded.js";
import { type RedisClient, RedisConnection } from "./connection/connection.js";
import { OutageMonitor } from "./connection/outage-monitor.js";
import { readReplyBusOptions } from "./redis-option-declarations.js";

/** Options of {@link RedisReplyBus}. */
export interface RedisReplyBusOptions {
  /**
   * A Redis URL (the bus then owns its connections), or an ioredis `Redis` / `Cluster` you own
   * (the bus duplicates it for its subscriber, and closes only that one).
   */
  readonly redis: Redis | Cluster | string;
  /** Channel prefix; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /** Upper bound on one PUBLISH before the answer is dropped. Default 1 000 ms. */
  readonly commandTimeoutMs?: number;
  /** Largest message sent or accepted, in characters of JSON. Default 2 097 152. */
  readonly maxMessageBytes?: number;
  /** Receives the one line per outage. Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

type Client = RedisClient;
type Deliver = (scope: string, id: string, reply: ClientReply) => void;

const NODE = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_SCOPE = 2_048;
const MAX_ID = 128;

/**
 * A {@link ServerReplyBus} on Redis pub/sub (ioredis 5).
 *
 * @example
 * ```ts
 * import { createMcpServer } from "conduit-mcp";
 * import { RedisReplyBus } from "conduit-mcp/redis";
 *
 * const bus = new RedisReplyBus({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const server = createMcpServer({ sessions: true, serverRequests: { bus } });
 * ```
 */
export class RedisReplyBus implements ServerReplyBus {
  private readonly client: Client;
  private readonly subscriber: Client;
  private readonly connection: RedisConnection;
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly maxMessageBytes: number;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly monitor: OutageMonitor;
  /** channel → who gets its answers. */
  private readonly routes = new Map<string, Deliver>();
  /** Channels the subscriber listens on now. */
  private readonly live = new Set<string>();
  private closed = false;

  constructor(options: RedisReplyBusOptions) {
    const read = readReplyBusOptions(options);
    this.timeoutMs = read.commandTimeoutMs;
    this.maxMessageBytes = read.maxMessageBytes;
    this.monitor = new OutageMonitor(read.logger, "replies");
    this.connection = new RedisConnection({
      redis: read.redis,
      timeoutMs: this.timeoutMs,
      monitor: this.monitor,
    });
    this.client = this.connection.client;
    this.reachability = this.connection.reachability;
    this.base = `${this.connection.keyPrefix}{${read.prefix}}:reply:`;
    this.connection.on("ready", () => this.monitor.up());
    // A subscribed connection runs no other command: a dedicated one, resubscribed on every
    // `ready` here (not by ioredis) so that `ready()` knows when delivery is live again.
    this.subscriber = this.connection.subscriber();
    this.subscriber.on("close", this.onSubscriberClose);
    this.subscriber.on("ready", this.onSubscriberReady);
    this.subscriber.on("message", this.onMessage);
    this.connection.connect();
  }

  /**
   * Resolves true once both connections are ready and every attached node's channel is
   * subscribed; false after `timeoutMs`.
   *
   * @example
   * ```ts
   * if (!(await bus.ready(2_000))) console.warn("answers from other nodes are not delivered yet");
   * ```
   */
  ready(timeoutMs = 5_000): Promise<boolean> {
    return readyWithin(timeoutMs, () => {
      if (this.closed) return "closed";
      const subscribed = [...this.routes.keys()].every((channel) => this.live.has(channel));
      const connected = this.client.status === "ready" && this.subscriber.status === "ready";
      return connected && subscribed ? "ready" : "wait";
    });
  }

  attach(
    node: string,
    deliver: (scope: string, id: string, reply: ClientReply) => void,
  ): () => void {
    if (this.closed) return noop;
    if (typeof node !== "string" || !NODE.test(node)) {
      throw new TypeError("RedisReplyBus.attach: a node tag of 1-64 base64url characters");
    }
    const channel = this.base + node;
    this.routes.set(channel, deliver);
    void this.listen(channel);
    return () => {
      if (this.routes.get(channel) !== deliver) return;
      this.routes.delete(channel);
      this.live.delete(channel);
      if (this.subscriber.status === "ready") {
        this.subscriber.unsubscribe(channel).catch(noop);
      }
    };
  }

  async forward(node: string, scope: string, id: string, reply: ClientReply): Promise<void> {
    if (this.closed || !NODE.test(node) || this.client.status !== "ready") return;
    let message: string;
    try {
      message = JSON.stringify({ v: 1, scope, id, reply });
    } catch {
      return;
    }
    if (message.length > this.maxMessageBytes) return;
    try {
      await bounded(this.client.publish(this.base + node, message), this.timeoutMs);
      this.monitor.up();
    } catch (error) {
      this.monitor.down(error);
    }
  }

  /** Stops listening and closes the connections the bus owns (its subscriber always). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.routes.clear();
    this.live.clear();
    await this.connection.close();
  }

  private async listen(channel: string): Promise<void> {
    if (this.closed || this.subscriber.status !== "ready") return; // `ready` will subscribe it
    try {
      await bounded(this.subscriber.subscribe(channel), this.timeoutMs);
      if (this.routes.has(channel)) this.live.add(channel);
    } catch {
      // Retried on the subscriber's next `ready`.
    }
  }

  private readonly onSubscriberClose = (): void => {
    this.live.clear();
  };

  private readonly onSubscriberReady = (): void => {
    for (const channel of this.routes.keys()) void this.listen(channel);
  };

  private readonly onMessage = (channel: string, raw: string): void => {
    const deliver = this.routes.get(channel);
    if (deliver === undefined) return;
    const message = decodeReply(raw, this.maxMessageBytes);
    if (message === null) return;
    try {
      deliver(message.scope, message.id, message.reply);
    } catch {
      // The table never throws; a listener's failure must not break the subscriber.
    }
  };
}

/** A channel message, validated; null for anything malformed or oversized. Never throws. */
function decodeReply(
  raw: unknown,
  maxMessageBytes: number,
): { scope: string; id: string; reply: ClientReply } | null {
  if (typeof raw !== "string" || raw.length > maxMessageBytes) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(value) || value.v !== 1) return null;
  const { scope, id, reply } = value;
  if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE) return null;
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID) return null;
  if (!isObject(reply)) return null;
  if (reply.ok === true && "result" in reply)
    return { scope, id, reply: { ok: true, result: reply.result } };
  if (
    reply.ok === false &&
    typeof reply.code === "number" &&
    Number.isInteger(reply.code) &&
    typeof reply.message === "string" &&
    reply.message.length <= 1_024
  ) {
    return { scope, id, reply: { ok: false, code: reply.code, message: reply.message } };
  }
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function noop(): void {}
