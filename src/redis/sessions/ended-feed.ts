/**
 * Sessions ended on any node sharing one Redis: the store's scripts publish the id of every
 * session they remove on `<base>:ended`; this feed hears that channel on a connection of its own
 * (a subscribed connection cannot run other commands), opened by the first listener, and tells
 * its listeners. After its subscription was away it asks the store to catch up on what it missed.
 */
import type { RedisClient, RedisConnection } from "../connection/connection.js";

/** A session id as published on the ended channel: visible ASCII, as ids are minted. */
const ENDED_ID = /^[\x21-\x7e]{1,256}$/;

/** Options of {@link EndedFeed}. */
export interface EndedFeedOptions {
  readonly connection: RedisConnection;
  /** The channel (ioredis does not prefix channels: it carries the client's prefix already). */
  readonly channel: string;
  readonly isClosed: () => boolean;
  /** A session ended elsewhere was heard (before the listeners are told). */
  readonly heard: (id: string) => void;
  /** The subscription is live again after a gap: find the sessions that ended meanwhile. */
  readonly catchUp: () => Promise<void>;
}

/**
 * The ended channel of one store and its listeners.
 *
 * @example
 * ```ts
 * const feed = new EndedFeed({ connection, channel, isClosed, heard: forget, catchUp });
 * const stop = feed.listen((id) => closeStream(id));
 * feed.tell(id); // an end this node saw without the channel (an outage)
 * ```
 */
export class EndedFeed {
  private readonly options: EndedFeedOptions;
  private readonly listeners = new Set<(id: string) => void>();
  private subscriber: RedisClient | null = null;
  /** Whether the subscriber listened before: a later subscription must catch up. */
  private listenedBefore = false;

  constructor(options: EndedFeedOptions) {
    this.options = options;
  }

  /** Adds a listener (the first opens the subscription); returns its removal. */
  listen(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    if (this.subscriber === null && !this.options.isClosed()) this.open();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells the listeners; a listener's bug never breaks the store. */
  tell(id: string): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(id);
      } catch {
        // The listener's failure is its own.
      }
    }
  }

  /** Drops the listeners (the connection closes the subscriber). */
  clear(): void {
    this.listeners.clear();
  }

  private open(): void {
    const subscriber = this.options.connection.subscriber();
    this.subscriber = subscriber;
    subscriber.on("ready", () => void this.subscribe(subscriber));
    subscriber.on("message", (channel: string, raw: string) => {
      if (this.options.isClosed() || channel !== this.options.channel) return;
      // Hostile until validated: anyone who may PUBLISH on this Redis can send anything.
      if (typeof raw !== "string" || !ENDED_ID.test(raw)) return;
      this.options.heard(raw);
      this.tell(raw);
    });
    if (subscriber.status === "ready") void this.subscribe(subscriber);
  }

  /** (Re)subscribes; after a gap, has the store catch up on what was published meanwhile. */
  private async subscribe(subscriber: RedisClient): Promise<void> {
    if (this.options.isClosed()) return;
    try {
      await subscriber.subscribe(this.options.channel);
    } catch {
      return; // Retried on the next `ready`.
    }
    if (!this.listenedBefore) {
      this.listenedBefore = true;
      return;
    }
    await this.options.catchUp();
  }
}
