/**
 * A store's {@link Reachability}, read from its ioredis command connection: reachable while the
 * connection is `ready`, unreachable from its `close` (Redis stopped, the socket dropped) until
 * its next `ready`. Only connection events move it, so a slow command never takes a node out of
 * rotation and a reconnect always puts it back, whatever traffic the node gets meanwhile.
 */
import type { Cluster, Redis } from "ioredis";

import type { Reachability } from "../../reachability.js";

/**
 * @example
 * ```ts
 * const watch = new ConnectionWatch(client);
 * watch.onReachabilityChange((up) => console.log(up ? "back" : "gone"));
 * watch.stop(); // when the store closes
 * ```
 */
export class ConnectionWatch implements Reachability {
  private up: boolean;
  private stopped = false;
  private readonly client: Redis | Cluster;
  private readonly listeners = new Set<(reachable: boolean) => void>();
  private readonly onReady = (): void => this.set(true);
  private readonly onLost = (): void => this.set(false);

  constructor(client: Redis | Cluster) {
    this.client = client;
    this.up = client.status === "ready";
    client.on("ready", this.onReady);
    client.on("close", this.onLost);
    client.on("end", this.onLost);
  }

  get reachable(): boolean {
    return this.up && !this.stopped;
  }

  onReachabilityChange(listener: (reachable: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Detaches from the client (the store is closing); reads unreachable from then on. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.client.off("ready", this.onReady);
    this.client.off("close", this.onLost);
    this.client.off("end", this.onLost);
    this.listeners.clear();
  }

  private set(up: boolean): void {
    if (this.stopped || up === this.up) return;
    this.up = up;
    for (const listener of [...this.listeners]) {
      try {
        listener(up);
      } catch {
        // A listener's fault must not break the store's connection handling.
      }
    }
  }
}
