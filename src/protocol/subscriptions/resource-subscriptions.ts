/**
 * Which sessions subscribed to which resource URIs (2025-11-25 server/resources "Subscriptions",
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions), and
 * where an update for a session goes. A subscription lives until `resources/unsubscribe` or the
 * session ends. The table holds the subscriptions made through this process; an update told to
 * every node (the change feed) reaches each subscribed session's stream, on whichever node it is
 * open (see `createMcpServer`).
 *
 * Bounds, per tenant first: a session holds at most `maxPerSession` URIs, and the bucket that made
 * them (the principal, else the client's IP bucket: opening more sessions never multiplies a
 * tenant's share) at most `maxPerScope` subscriptions of `maxBytesPerScope` bytes of URIs; those
 * are the only bounds that refuse. The global bounds (`maxTotal` subscriptions, `maxBytes` bytes)
 * never refuse a tenant under its own: they drop the oldest subscription of the bucket holding the
 * most (by count for `maxTotal`, by bytes for `maxBytes`), so one tenant filling the table pays
 * first, never a smaller one.
 */

/** Default most URIs one session may subscribe to. */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION = 64;
/** Default most subscriptions one bucket (principal or IP bucket) may hold. */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE = 256;
/** Default most bytes of URIs one bucket's subscriptions may hold: 1 MiB. */
export const DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE = 1_048_576;
/** Default most subscriptions held in all. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 100_000;
/** Default most bytes of URIs held in all: 32 MiB. */
export const DEFAULT_MAX_SUBSCRIPTION_BYTES = 32 * 1_048_576;

/** The outcome of {@link ResourceSubscriptions.subscribe}. */
/**
 * `"session-full"` and `"scope-full"`: the session's or the bucket's own bound; `"full"` only for
 * a table whose global bound is 0 (it holds nothing).
 */
export type SubscribeOutcome = "subscribed" | "session-full" | "scope-full" | "full";

/**
 * Delivers one JSON-RPC notification (JSON text) to a session's standalone stream, if open;
 * `uri` is the resource it is about (so a delivery that finds no stream here can pass it on).
 */
export type SessionDelivery = (sessionId: string, json: string, uri: string) => void;

/** Options of {@link ResourceSubscriptions}. */
export interface ResourceSubscriptionsOptions {
  readonly maxPerSession?: number;
  readonly maxPerScope?: number;
  readonly maxBytesPerScope?: number;
  readonly maxTotal?: number;
  readonly maxBytes?: number;
}

/** One subscription, as its bucket counts it. */
interface Entry {
  readonly sessionId: string;
  readonly uri: string;
  readonly bucket: string;
  /** What it costs its bucket: the UTF-8 bytes of its URI and session id. */
  readonly bytes: number;
}

/** What one bucket holds: its subscriptions in the order they were made, and their bytes. */
interface Bucket {
  readonly name: string;
  readonly entries: Set<Entry>;
  bytes: number;
}

/**
 * The subscription table.
 *
 * @example
 * ```ts
 * const table = new ResourceSubscriptions({ maxPerSession: 8, maxTotal: 1000 });
 * table.setDelivery((sessionId, json) => streams.send(sessionId, json));
 * table.subscribe("s1", "file:///a.txt", "ip:203.0.113.7");
 * table.updated("file:///a.txt"); // sends notifications/resources/updated to s1's stream
 * ```
 */
export class ResourceSubscriptions {
  private readonly maxPerSession: number;
  private readonly maxPerScope: number;
  private readonly maxBytesPerScope: number;
  private readonly maxTotal: number;
  private readonly maxBytes: number;
  /** uri → sessions subscribed to it. */
  private readonly byUri = new Map<string, Set<string>>();
  /** session → its subscriptions by URI. */
  private readonly bySession = new Map<string, Map<string, Entry>>();
  /** bucket → what it holds. */
  private readonly buckets = new Map<string, Bucket>();
  private total = 0;
  private bytes = 0;
  private delivery: SessionDelivery | null = null;

  constructor(options: ResourceSubscriptionsOptions = {}) {
    this.maxPerSession = options.maxPerSession ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION;
    this.maxPerScope = options.maxPerScope ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE;
    this.maxBytesPerScope = options.maxBytesPerScope ?? DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE;
    this.maxTotal = options.maxTotal ?? DEFAULT_MAX_SUBSCRIPTIONS;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_SUBSCRIPTION_BYTES;
  }

  /** Sets where updates go (the transport's standalone streams). */
  setDelivery(delivery: SessionDelivery | null): void {
    this.delivery = delivery;
  }

  /**
   * Subscribes `sessionId` to `uri`, paid for by `bucket` (the creator's principal or IP bucket);
   * subscribing again to the same URI is a no-op. Refused only at the session's or the bucket's
   * own bound; at a global bound the largest bucket's oldest subscription makes room.
   */
  subscribe(sessionId: string, uri: string, bucket: string): SubscribeOutcome {
    let own = this.bySession.get(sessionId);
    if (own?.has(uri) === true) return "subscribed";
    if (this.maxTotal === 0 || this.maxBytes === 0) return "full";
    if ((own?.size ?? 0) >= this.maxPerSession) return "session-full";
    const bytes = Buffer.byteLength(uri, "utf8") + Buffer.byteLength(sessionId, "utf8");
    const holder = this.buckets.get(bucket);
    if (
      bytes > this.maxBytesPerScope ||
      (holder !== undefined &&
        (holder.entries.size >= this.maxPerScope || holder.bytes + bytes > this.maxBytesPerScope))
    ) {
      return "scope-full";
    }
    while (this.total > 0 && (this.total >= this.maxTotal || this.bytes + bytes > this.maxBytes)) {
      this.evictLargest(this.total >= this.maxTotal ? "count" : "bytes");
    }
    if (own === undefined) {
      own = new Map();
      this.bySession.set(sessionId, own);
    }
    const entry: Entry = { sessionId, uri, bucket, bytes };
    own.set(uri, entry);
    let sessions = this.byUri.get(uri);
    if (sessions === undefined) {
      sessions = new Set();
      this.byUri.set(uri, sessions);
    }
    sessions.add(sessionId);
    let counted = this.buckets.get(bucket);
    if (counted === undefined) {
      counted = { name: bucket, entries: new Set(), bytes: 0 };
      this.buckets.set(bucket, counted);
    }
    counted.entries.add(entry);
    counted.bytes += bytes;
    this.bytes += bytes;
    this.total++;
    return "subscribed";
  }

  /** Removes one subscription; resolves whether it existed. */
  unsubscribe(sessionId: string, uri: string): boolean {
    const entry = this.bySession.get(sessionId)?.get(uri);
    if (entry === undefined) return false;
    this.remove(entry);
    return true;
  }

  /** Removes every subscription of a session (it ended). */
  dropSession(sessionId: string): void {
    const own = this.bySession.get(sessionId);
    if (own === undefined) return;
    for (const entry of [...own.values()]) this.remove(entry);
  }

  /** The URIs a session subscribed to. */
  urisOf(sessionId: string): readonly string[] {
    return [...(this.bySession.get(sessionId)?.keys() ?? [])];
  }

  /** Sessions subscribed to `uri` here. */
  subscribersOf(uri: string): number {
    return this.byUri.get(uri)?.size ?? 0;
  }

  /** Subscriptions held in all. */
  get size(): number {
    return this.total;
  }

  /** Bytes of the subscriptions held in all (their URIs and session ids, UTF-8). */
  get byteSize(): number {
    return this.bytes;
  }

  /**
   * Sends `notifications/resources/updated` for `uri` to every session subscribed to it;
   * returns how many sessions were subscribed.
   */
  updated(uri: string): number {
    const sessions = this.byUri.get(uri);
    if (sessions === undefined) return 0;
    const delivery = this.delivery;
    if (delivery !== null) {
      const json = JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri },
      });
      for (const sessionId of [...sessions]) delivery(sessionId, json, uri);
    }
    return sessions.size;
  }

  /** Drops the oldest subscription of the bucket holding the most (ties: the name sorting first). */
  private evictLargest(by: "count" | "bytes"): void {
    let best: Bucket | undefined;
    for (const bucket of this.buckets.values()) {
      const size = by === "count" ? bucket.entries.size : bucket.bytes;
      const bestSize = best === undefined ? -1 : by === "count" ? best.entries.size : best.bytes;
      if (size > bestSize || (size === bestSize && best !== undefined && bucket.name < best.name)) {
        best = bucket;
      }
    }
    const oldest = best?.entries.values().next().value;
    if (oldest !== undefined) this.remove(oldest);
  }

  private remove(entry: Entry): void {
    const own = this.bySession.get(entry.sessionId);
    if (own === undefined || own.get(entry.uri) !== entry) return;
    own.delete(entry.uri);
    if (own.size === 0) this.bySession.delete(entry.sessionId);
    const sessions = this.byUri.get(entry.uri);
    sessions?.delete(entry.sessionId);
    if (sessions?.size === 0) this.byUri.delete(entry.uri);
    const bucket = this.buckets.get(entry.bucket);
    if (bucket !== undefined) {
      bucket.entries.delete(entry);
      bucket.bytes -= entry.bytes;
      if (bucket.entries.size === 0) this.buckets.delete(entry.bucket);
    }
    this.bytes -= entry.bytes;
    this.total--;
  }
}
