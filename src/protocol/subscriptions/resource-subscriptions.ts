/**
 * Which sessions subscribed to which resource URIs (2025-11-25 server/resources "Subscriptions",
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions), and
 * where an update for a session goes. Bounded per session first (one client cannot fill the
 * table for others), then in all; a subscription lives until `resources/unsubscribe` or the
 * session ends. The table holds the subscriptions made through this process; an update told to
 * every node (the change feed) reaches each subscribed session's stream, on whichever node it is
 * open (see `createMcpServer`).
 */

/** Default most URIs one session may subscribe to. */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION = 64;
/** Default most subscriptions held in all. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 100_000;

/** The outcome of {@link ResourceSubscriptions.subscribe}. */
export type SubscribeOutcome = "subscribed" | "session-full" | "full";

/**
 * Delivers one JSON-RPC notification (JSON text) to a session's standalone stream, if open;
 * `uri` is the resource it is about (so a delivery that finds no stream here can pass it on).
 */
export type SessionDelivery = (sessionId: string, json: string, uri: string) => void;

/**
 * The subscription table.
 *
 * @example
 * ```ts
 * const table = new ResourceSubscriptions({ maxPerSession: 8, maxTotal: 1000 });
 * table.setDelivery((sessionId, json) => streams.send(sessionId, json));
 * table.subscribe("s1", "file:///a.txt");
 * table.updated("file:///a.txt"); // sends notifications/resources/updated to s1's stream
 * ```
 */
export class ResourceSubscriptions {
  private readonly maxPerSession: number;
  private readonly maxTotal: number;
  /** uri → sessions subscribed to it. */
  private readonly byUri = new Map<string, Set<string>>();
  /** session → its URIs. */
  private readonly bySession = new Map<string, Set<string>>();
  private total = 0;
  private delivery: SessionDelivery | null = null;

  constructor(options: { maxPerSession?: number; maxTotal?: number } = {}) {
    this.maxPerSession = options.maxPerSession ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION;
    this.maxTotal = options.maxTotal ?? DEFAULT_MAX_SUBSCRIPTIONS;
  }

  /** Sets where updates go (the transport's standalone streams). */
  setDelivery(delivery: SessionDelivery | null): void {
    this.delivery = delivery;
  }

  /** Subscribes `sessionId` to `uri`; subscribing again to the same URI is a no-op. */
  subscribe(sessionId: string, uri: string): SubscribeOutcome {
    let own = this.bySession.get(sessionId);
    if (own?.has(uri) === true) return "subscribed";
    if ((own?.size ?? 0) >= this.maxPerSession) return "session-full";
    if (this.total >= this.maxTotal) return "full";
    if (own === undefined) {
      own = new Set();
      this.bySession.set(sessionId, own);
    }
    own.add(uri);
    let sessions = this.byUri.get(uri);
    if (sessions === undefined) {
      sessions = new Set();
      this.byUri.set(uri, sessions);
    }
    sessions.add(sessionId);
    this.total++;
    return "subscribed";
  }

  /** Removes one subscription; resolves whether it existed. */
  unsubscribe(sessionId: string, uri: string): boolean {
    const own = this.bySession.get(sessionId);
    if (own === undefined || !own.delete(uri)) return false;
    if (own.size === 0) this.bySession.delete(sessionId);
    this.forget(uri, sessionId);
    return true;
  }

  /** Removes every subscription of a session (it ended). */
  dropSession(sessionId: string): void {
    const own = this.bySession.get(sessionId);
    if (own === undefined) return;
    this.bySession.delete(sessionId);
    for (const uri of own) this.forget(uri, sessionId);
  }

  /** The URIs a session subscribed to. */
  urisOf(sessionId: string): readonly string[] {
    return [...(this.bySession.get(sessionId) ?? [])];
  }

  /** Sessions subscribed to `uri` here. */
  subscribersOf(uri: string): number {
    return this.byUri.get(uri)?.size ?? 0;
  }

  /** Subscriptions held in all. */
  get size(): number {
    return this.total;
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

  private forget(uri: string, sessionId: string): void {
    const sessions = this.byUri.get(uri);
    if (sessions === undefined || !sessions.delete(sessionId)) return;
    this.total--;
    if (sessions.size === 0) this.byUri.delete(uri);
  }
}
