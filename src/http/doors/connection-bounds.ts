/**
 * Open connections, bounded per client bucket first and globally second, so that no set of
 * clients each within its own bound can lock another client out.
 *
 * A global bound alone is a cross-tenant denial of service: node's `server.maxConnections`
 * closes every new connection once the total is reached, so a few hundred addresses holding
 * their per-scope maximum of long calls would keep every other client (and every cancel, which
 * needs a connection of its own while the client's others are busy) off the server. Here:
 *
 * - **Per bucket** (the IPv4 address, the IPv6 /64: identity/client-bucket.ts): the only bound
 *   that refuses. A connection past it is closed at once.
 * - **Global**: a memory backstop that never refuses. Reaching it makes room: it closes one
 *   connection of the bucket holding the most — an idle one if it has one, else its oldest —
 *   so a client holding fewer connections than the largest buckets loses nothing before them.
 *
 * A peer trusted as a proxy (`trustProxy`) carries many clients: it is not held to the bucket
 * bound (bound it at the proxy), and is counted and evicted from like any other bucket.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

import { channels } from "../../diagnostics.js";
import {
  clientBucket,
  isTrustedAddress,
  parseIpAddress,
  type TrustProxy,
} from "../../identity/index.js";
import type { KeepAliveClock } from "../keep-alive-clock.js";
import { silentConnectionCheck } from "./silent-connections.js";

/** The bounds of {@link ConnectionBounds}. */
export interface ConnectionBoundsOptions {
  /** Most connections open at once, all buckets: reaching it evicts, never refuses. */
  readonly maxConnections: number;
  /** Most connections one client bucket may hold; past it a new one is closed at once. */
  readonly maxConnectionsPerBucket: number;
  /** Peers trusted as proxies are exempt from the bucket bound. */
  readonly trustProxy: TrustProxy;
}

/** What {@link ConnectionBounds.attach} also does for its server. */
export interface AttachOptions {
  /**
   * Closes a connection that has sent no byte this many ms after it opened
   * (silent-connections.ts), on the bounds' own `close` listener. Absent: no such check.
   */
  readonly closeSilentAfterMs?: number | undefined;
}

/** The connections of one bucket, oldest first (a Set keeps insertion order). */
interface Bucket {
  readonly name: string;
  readonly sockets: Set<Socket>;
  /** The bounds the bucket belongs to. */
  readonly bounds: ConnectionBounds;
}

/**
 * What is known of one open connection (see {@link ConnectionBounds.requestStarted}), kept on
 * its socket: a table of sockets would cost an entry per connection, and a held call usually
 * has a connection of its own (docs/profile.md, "Held calls at 10 000").
 */
export interface TrackedConnection {
  readonly bucket: Bucket;
  /** Requests being answered on it (more than one only when pipelined). */
  busy: number;
  /** No longer counted (it closed, or the bounds evicted it): its `close` changes no count. */
  forgotten: boolean;
  /**
   * The socket's `close` listeners when it was admitted (node:http's own), which the bounds'
   * listener calls first in their place: one function, an array of them, or null for none.
   */
  readonly taken: CloseListener | readonly CloseListener[] | null;
}

type CloseListener = (this: Socket, hadError: boolean) => void;

type Tracked = TrackedConnection;

/**
 * A tracked socket's {@link TrackedConnection}, on the socket for as long as the socket lives
 * (marked `forgotten` once no longer counted): its `close` listener is one module function.
 */
const TRACKED = Symbol("conduit-mcp.connection-bounds");
type TaggedSocket = Socket & { [TRACKED]?: Tracked | undefined };

/** What the bounds know of `socket`, if they track it. */
function trackedOf(socket: Socket): Tracked | undefined {
  return (socket as TaggedSocket)[TRACKED];
}

/**
 * A tracked socket closed (its `this`): the listeners it had when admitted run first, in their
 * order, then the bounds forget it. One module function: no closure and no `once` wrapper per
 * connection.
 */
function onTrackedSocketClose(this: Socket, hadError: boolean): void {
  const tracked = trackedOf(this);
  if (tracked === undefined) return;
  const taken = tracked.taken;
  if (typeof taken === "function") taken.call(this, hadError);
  else if (taken !== null) for (const listener of taken) listener.call(this, hadError);
  tracked.bucket.bounds.closed(this);
}

/**
 * Takes `socket`'s `close` listeners (node:http's own, added before the `connection` event) off
 * it, for {@link onTrackedSocketClose} to call. node:http adds one more while a response is
 * attached (https://nodejs.org/api/events.html#emitterrawlistenerseventname): with the bounds'
 * listener beside node's two, V8 grows the listener array from 2 slots to 19, about 140 bytes per
 * connection (docs/profile.md, "Held calls at 10 000"); in their place, it stays at node's count.
 */
function takeCloseListeners(socket: Socket): CloseListener | readonly CloseListener[] | null {
  const listeners = socket.rawListeners("close") as CloseListener[];
  if (listeners.length === 0) return null;
  // One by one: `removeAllListeners(type)` deletes the key, which turns the socket's table of
  // events into a slow dictionary (about 800 bytes); `removeListener` keeps its shape.
  for (const listener of listeners) socket.removeListener("close", listener);
  return listeners.length === 1 ? (listeners[0] as CloseListener) : listeners;
}

/** What the bounds did, for `ConcurrencySnapshot` and tests. */
export interface ConnectionCounts {
  /** Connections open now. */
  readonly open: number;
  /** Buckets holding at least one. */
  readonly buckets: number;
  /** Connections closed at once for their bucket's bound, since start. */
  readonly refused: number;
  /** Connections closed at the global bound to make room, since start. */
  readonly evicted: number;
}

/**
 * Connection accounting for one node:http server.
 *
 * @example
 * ```ts
 * const bounds = new ConnectionBounds({ maxConnections: 10_000, maxConnectionsPerBucket: 128, trustProxy });
 * bounds.attach(server);
 * ```
 */
export class ConnectionBounds {
  private readonly maxConnections: number;
  private readonly maxPerBucket: number;
  private readonly trustProxy: TrustProxy;
  /** The silent-connection check of the server attached to, if it asked for one. */
  private silent: KeepAliveClock<Socket> | null = null;
  private readonly buckets = new Map<string, Bucket>();
  /** Connections tracked now. */
  private open = 0;
  /** `bySize[n]`: the buckets holding exactly n connections; `largest` indexes the last non-empty. */
  private readonly bySize: Array<Set<Bucket>> = [];
  private largest = 0;
  private refusedCount = 0;
  private evictedCount = 0;

  constructor(options: ConnectionBoundsOptions) {
    this.maxConnections = options.maxConnections;
    this.maxPerBucket = options.maxConnectionsPerBucket;
    this.trustProxy = options.trustProxy;
  }

  /**
   * Admits every new connection of `server` (its `connection` event). Its requests are followed
   * by the server's node door (`createNodeListener(core, bounds)` calls {@link requestStarted}),
   * so that an idle connection is the first to go when room is made. Node's own
   * `maxConnections` must stay unset: it would refuse before these bounds see the connection.
   */
  attach(server: Server, options?: AttachOptions): void {
    const silentMs = options?.closeSilentAfterMs;
    if (silentMs !== undefined) this.silent = silentConnectionCheck(silentMs);
    server.on("connection", (socket: Socket) => this.admit(socket));
  }

  /** A new connection: closed at once past its bucket's bound; else admitted, making room. */
  admit(socket: Socket): void {
    // Tracked once: its listener would otherwise take itself over (bounds attached twice).
    if (trackedOf(socket) !== undefined) return;
    const address = socket.remoteAddress;
    const proxy = this.isProxy(address);
    const name = proxy ? `proxy:${address}` : clientBucket(address);
    const bucket = this.buckets.get(name);
    if (!proxy && (bucket?.sockets.size ?? 0) >= this.maxPerBucket) {
      this.refusedCount++;
      if (channels.connectionClosed.hasSubscribers) {
        channels.connectionClosed.publish({ bucket: name, reason: "bucket" });
      }
      socket.destroy();
      return;
    }
    while (this.open >= this.maxConnections && this.open > 0) this.evictOne();
    const owner = bucket ?? this.newBucket(name);
    this.resize(owner, 1);
    owner.sockets.add(socket);
    this.open++;
    const taken = takeCloseListeners(socket);
    (socket as TaggedSocket)[TRACKED] = { bucket: owner, busy: 0, forgotten: false, taken };
    // `on`, not `once`: a socket closes once, and `once` would wrap the listener per connection
    // (a held call usually has a connection of its own: docs/profile.md, "Held calls at 10 000").
    socket.on("close", onTrackedSocketClose);
    this.silent?.add(socket);
  }

  /** `socket` closed: it leaves its bucket, unless the bounds closed it already. */
  closed(socket: Socket): void {
    const tracked = trackedOf(socket);
    if (tracked !== undefined) this.forget(socket, tracked);
  }

  /** Counts of the bounds now. */
  counts(): ConnectionCounts {
    return {
      open: this.open,
      buckets: this.buckets.size,
      refused: this.refusedCount,
      evicted: this.evictedCount,
    };
  }

  /** Connections `bucket` (as {@link clientBucket} names it) holds now. */
  held(bucket: string): number {
    return this.buckets.get(bucket)?.sockets.size ?? 0;
  }

  private isProxy(address: string | undefined): boolean {
    const trust = this.trustProxy;
    if (trust.kind === "none") return false;
    if (trust.kind === "hops") return true;
    const parsed = parseIpAddress(address);
    return parsed !== null && isTrustedAddress(trust, parsed);
  }

  /**
   * A request began on `socket`: its connection is busy until {@link requestEnded}. The node
   * door calls it for each request it serves (and ends it when the response closes), rather than
   * a `'request'` listener of the bounds' own: one listener per request, and one `'close'`
   * listener and one tag per response, the door's. Null for a connection the bounds do not track
   * (a server of the user's own serving `server.handler`).
   */
  requestStarted(socket: Socket): TrackedConnection | null {
    const tracked = trackedOf(socket);
    if (tracked === undefined || tracked.bucket.bounds !== this) return null;
    tracked.busy++;
    return tracked;
  }

  /** Closes one connection of the largest bucket: its oldest idle one, else its oldest. */
  private evictOne(): void {
    const group = this.bySize[this.largest];
    let victim: Socket | undefined;
    let bucket: Bucket | undefined;
    // Among the largest buckets, one with an idle connection loses that one first.
    for (const candidate of group ?? []) {
      bucket ??= candidate;
      for (const socket of candidate.sockets) {
        if (trackedOf(socket)?.busy === 0) {
          victim = socket;
          bucket = candidate;
          break;
        }
      }
      if (victim !== undefined) break;
    }
    if (bucket === undefined) return;
    victim ??= bucket.sockets.values().next().value as Socket;
    const tracked = trackedOf(victim);
    if (tracked === undefined) return;
    this.evictedCount++;
    if (channels.connectionClosed.hasSubscribers) {
      channels.connectionClosed.publish({ bucket: bucket.name, reason: "evicted" });
    }
    this.forget(victim, tracked);
    victim.destroy();
  }

  /**
   * `socket` leaves its bucket (closed, or evicted). Its record stays on it, marked, for its
   * `close` listener still calls the listeners it took.
   */
  private forget(socket: Socket, tracked: Tracked): void {
    if (tracked.forgotten || tracked.bucket.bounds !== this) return;
    tracked.forgotten = true;
    this.open--;
    this.resize(tracked.bucket, -1);
    tracked.bucket.sockets.delete(socket);
    this.silent?.remove(socket);
  }

  private newBucket(name: string): Bucket {
    const bucket: Bucket = { name, sockets: new Set(), bounds: this };
    this.buckets.set(name, bucket);
    return bucket;
  }

  /**
   * Moves `bucket` from its size group to the next one up or down, before its set changes;
   * O(1) amortised.
   */
  private resize(bucket: Bucket, delta: 1 | -1): void {
    const from = bucket.sockets.size;
    const to = from + delta;
    this.bySize[from]?.delete(bucket);
    if (to === 0) {
      this.buckets.delete(bucket.name);
    } else {
      let group = this.bySize[to];
      if (group === undefined) {
        group = new Set();
        this.bySize[to] = group;
      }
      group.add(bucket);
    }
    if (to > this.largest) this.largest = to;
    while (this.largest > 0 && (this.bySize[this.largest]?.size ?? 0) === 0) this.largest--;
  }
}

/**
 * The request {@link ConnectionBounds.requestStarted} counted has ended (its response closed).
 *
 * @example
 * ```ts
 * requestEnded(tracked);
 * ```
 */
export function requestEnded(tracked: TrackedConnection): void {
  if (tracked.busy > 0) tracked.busy--;
}
