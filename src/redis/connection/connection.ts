/**
 * The Redis connection every Redis store and bus holds, set up one way: a URL gives an owned,
 * fail-fast connection (never buffering, retrying forever), an ioredis `Redis` / `Cluster` is
 * borrowed (a `lazyConnect` one is connected, and only the caller may close it); outages are
 * reported once through the store's {@link OutageMonitor}; SUBSCRIBE gets dedicated duplicates
 * (a subscribed connection cannot run other commands); its reachability (for `GET /ready`) is read
 * from the command connection's events; `close()` removes every listener put on a borrowed client
 * and quits, within `commandTimeoutMs`, what the connection owns.
 */
import { Cluster, Redis, type RedisOptions } from "ioredis";
import { InvalidOptionError } from "../../errors.js";
import type { Reachability } from "../../reachability.js";
import { ConnectionWatch } from "./connection-watch.js";
import type { OutageMonitor } from "./outage-monitor.js";
import { refuseSharedConnections } from "./runtime-check.js";

/** A command or subscriber connection: ioredis `Redis` or `Cluster`. */
export type RedisClient = Redis | Cluster;

/** Options of {@link RedisConnection}. */
export interface RedisConnectionOptions {
  /** The store's `redis` option: a Redis URL, or an ioredis `Redis` / `Cluster` the caller owns. */
  readonly redis: unknown;
  /** Upper bound on one command and on quitting at close (ms, already validated). */
  readonly timeoutMs: number;
  /** Where outages of the command connection are reported. */
  readonly monitor: OutageMonitor;
}

/**
 * A store's command connection and its subscriber connections.
 *
 * @example
 * ```ts
 * const connection = new RedisConnection({ redis: "redis://127.0.0.1:6379", timeoutMs: 1_000, monitor });
 * connection.on("ready", () => monitor.up());
 * const subscriber = connection.subscriber();
 * subscriber.on("message", (channel: string, raw: string) => hear(channel, raw));
 * connection.connect();
 * await connection.close();
 * ```
 */
export class RedisConnection {
  /** The command connection. */
  readonly client: RedisClient;
  /** Whether the connection was made from a URL here (and is quit by {@link close}). */
  readonly owned: boolean;
  /** The client's ioredis `keyPrefix` (`""` when none): channel names must carry it themselves. */
  readonly keyPrefix: string;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly watch: ConnectionWatch;
  private readonly timeoutMs: number;
  private readonly monitor: OutageMonitor;
  private readonly subscribers: RedisClient[] = [];
  private readonly detach: Array<() => void> = [];
  private closing = false;

  constructor(options: RedisConnectionOptions) {
    refuseSharedConnections();
    const { redis, timeoutMs, monitor } = options;
    this.timeoutMs = timeoutMs;
    this.monitor = monitor;
    if (typeof redis === "string" && redis.length > 0) {
      this.client = new Redis(redis, ownClientOptions(timeoutMs));
      this.owned = true;
    } else if (redis instanceof Redis || redis instanceof Cluster) {
      this.client = redis;
      this.owned = false;
    } else {
      throw new InvalidOptionError("redis", "a Redis URL, an ioredis Redis or Cluster", redis);
    }
    this.keyPrefix = (this.client.options as { keyPrefix?: string }).keyPrefix ?? "";
    this.watch = new ConnectionWatch(this.client);
    this.reachability = this.watch;
    this.on("error", (error: unknown) => monitor.down(error));
    this.on("close", () => {
      if (!this.closing) monitor.down(new Error("connection closed"));
    });
  }

  /** Listens on the command connection until {@link close} (the client may be the caller's). */
  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter listeners take any arguments.
  on(event: string, handler: (...args: any[]) => void): void {
    this.client.on(event, handler);
    this.detach.push(() => this.client.off(event, handler));
  }

  /**
   * A new connection for SUBSCRIBE, owned here. It does not resubscribe by itself: the store
   * subscribes on each of its `ready` events, so it can tell when delivery is live again and
   * read what it missed. Its errors are not reported: an outage is reported once, from the
   * command connection.
   */
  subscriber(connectionName?: string): RedisClient {
    const subscriber =
      this.client instanceof Cluster
        ? this.client.duplicate()
        : this.client.duplicate({
            enableOfflineQueue: false,
            autoResubscribe: false,
            maxRetriesPerRequest: 1,
            lazyConnect: false,
            ...(connectionName === undefined ? {} : { connectionName }),
          });
    subscriber.on("error", noop);
    this.subscribers.push(subscriber);
    // ioredis emits its events later, so the caller's listeners added after this are in time.
    connectIfLazy(subscriber, this.monitor);
    return subscriber;
  }

  /**
   * Connects a command connection created with `lazyConnect` (ours never is); without this,
   * cross-node work would be silently off. Call it once the store listens.
   */
  connect(): void {
    connectIfLazy(this.client, this.monitor);
  }

  /** Removes this connection's listeners, quits the subscribers, and the client when owned. */
  async close(): Promise<void> {
    this.closing = true;
    this.watch.stop();
    for (const undo of this.detach.splice(0)) undo();
    await Promise.all(
      this.subscribers.splice(0).map((subscriber) => {
        subscriber.removeAllListeners("message");
        return quit(subscriber, this.timeoutMs);
      }),
    );
    if (this.owned) await quit(this.client, this.timeoutMs);
  }
}

/** Connects a client still waiting for `connect()` (ioredis `lazyConnect`); failures are an outage. */
function connectIfLazy(client: RedisClient, monitor: OutageMonitor): void {
  if (client.status !== "wait") return;
  client.connect().catch((error: unknown) => monitor.down(error));
}

/** ioredis options for a connection a store owns: fail fast, never buffer, retry forever. */
function ownClientOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(timeoutMs, 2_000),
    retryStrategy: (times: number) => Math.min(50 * times, 1_000),
    lazyConnect: false,
  };
}

/** Quits a connection within a bound, then drops it regardless. */
async function quit(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      client.quit().catch(noop),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
  client.disconnect();
}

function noop(): void {
  // Nothing to do.
}
