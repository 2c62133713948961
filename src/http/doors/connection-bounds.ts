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

/** The bounds of {@link ConnectionBounds}. */
export interface ConnectionBoundsOptions {
  /** Most connections open at once, all buckets: reaching it evicts, never refuses. */
  readonly maxConnections: number;
  /** Most connections one client bucket may hold; past it a new one is closed at once. */
  readonly maxConnectionsPerBucket: number;
  /** Peers trusted as proxies are exempt from the bucket bound. */
  readonly trustProxy: TrustProxy;
}

/** The connections of one bucket, oldest first (a Set keeps insertion order). */
interface Bucket {
  readonly name: string;
  readonly sockets: Set<Socket>;
}

/** What is known of one open connection (see {@link ConnectionBounds.requestStarted}). */
export interface TrackedConnection {
  readonly bucket: Bucket;
  /** Requests being answered on it (more than one only when pipelined). */
  busy: number;
  /** Closed by the bounds already: its `close` event changes nothing. */
  evicted: boolean;
}

type Tracked = TrackedConnection;

/** The bounds that track a socket, on the socket: its `close` listener is one module function. */
const BOUNDS = Symbol("conduit-mcp.connection-bounds");
type TaggedSocket = Socket & { [BOUNDS]?: ConnectionBounds };

/** A tracked socket closed (its `this`): no closure and no `once` wrapper per connection. */
function onTrackedSocketClose(this: Socket): void {
  (this as TaggedSocket)[BOUNDS]?.closed(this);
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
  private readonly buckets = new Map<string, Bucket>();
  private readonly tracked = new Map<Socket, Tracked>();
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
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.admit(socket));
  }

  /** A new connection: closed at once past its bucket's bound; else admitted, making room. */
  admit(socket: Socket): void {
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
    while (this.tracked.size >= this.maxConnections && this.tracked.size > 0) this.evictOne();
    const owner = bucket ?? this.newBucket(name);
    this.resize(owner, 1);
    owner.sockets.add(socket);
    const tracked: Tracked = { bucket: owner, busy: 0, evicted: false };
    this.tracked.set(socket, tracked);
    // `on`, not `once`: a socket closes once, and `once` would wrap the listener per connection
    // (a held call usually has a connection of its own: docs/profile.md, "Held calls at 10 000").
    (socket as TaggedSocket)[BOUNDS] = this;
    socket.on("close", onTrackedSocketClose);
  }

  /** `socket` closed: it leaves its bucket, unless the bounds closed it already. */
  closed(socket: Socket): void {
    const tracked = this.tracked.get(socket);
    if (tracked !== undefined) this.forget(socket, tracked);
  }

  /** Counts of the bounds now. */
  counts(): ConnectionCounts {
    return {
      open: this.tracked.size,
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
    const tracked = this.tracked.get(socket);
    if (tracked === undefined) return null;
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
        if (this.tracked.get(socket)?.busy === 0) {
          victim = socket;
          bucket = candidate;
          break;
        }
      }
      if (victim !== undefined) break;
    }
    if (bucket === undefined) return;
    victim ??= bucket.sockets.values().next().value as Socket;
    const tracked = this.tracked.get(victim);
    if (tracked === undefined) return;
    this.evictedCount++;
    if (channels.connectionClosed.hasSubscribers) {
      channels.connectionClosed.publish({ bucket: bucket.name, reason: "evicted" });
    }
    this.forget(victim, tracked);
    tracked.evicted = true;
    victim.destroy();
  }

  private forget(socket: Socket, tracked: Tracked): void {
    if (tracked.evicted || this.tracked.get(socket) !== tracked) return;
    this.tracked.delete(socket);
    this.resize(tracked.bucket, -1);
    tracked.bucket.sockets.delete(socket);
  }

  private newBucket(name: string): Bucket {
    const bucket: Bucket = { name, sockets: new Set() };
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
