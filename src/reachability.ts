/**
 * The contract between a shared store and the server's readiness (`GET /ready`): whether the
 * service behind the store (Redis) is reachable now, and news each time that changes. The Redis
 * stores implement it from their connection's state and events, so readiness never sends a
 * command of its own; the memory stores leave it out (always reachable).
 *
 * @example
 * ```ts
 * const stop = store.reachability?.onReachabilityChange((up) => console.log("redis", up));
 * store.reachability?.reachable; // true while the connection is ready
 * ```
 */
export interface Reachability {
  /** True while the store's connection to its service is up. */
  readonly reachable: boolean;
  /** Calls `listener` with the new state each time it changes. Returns the unsubscribe. */
  onReachabilityChange(listener: (reachable: boolean) => void): () => void;
}
