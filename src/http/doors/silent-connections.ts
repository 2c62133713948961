/**
 * Closes a connection that has not sent a byte `ms` after it opened (node's own header timeout
 * starts only with a request's first byte, so a silent socket would otherwise stay open).
 *
 * Every connection waits the same `ms`, so the check is a {@link KeepAliveClock} that ticks each
 * connection once: one timer for every connection, each checked at its own deadline, one `Map`
 * entry per connection while it waits. A connection that closes first is taken out at once, by
 * the connection bounds' one `close` listener (connection-bounds.ts), not a listener of its own
 * (the per-connection bytes of thousands of long-lived calls or streams: docs/benchmarks.md,
 * "Scale: 10 000 calls in flight").
 */
import type { Socket } from "node:net";

import { KeepAliveClock } from "../keep-alive-clock.js";

/** A connection at its deadline: closed if it has sent nothing. */
function closeIfSilent(socket: Socket): void {
  if (socket.bytesRead === 0) socket.destroy();
}

/**
 * The silent-connection check of one server: `add` a connection as it opens, `remove` it when it
 * closes.
 *
 * @example
 * ```ts
 * const silent = silentConnectionCheck(10_000);
 * silent.add(socket); // on `connection`
 * silent.remove(socket); // on its `close`
 * ```
 */
export function silentConnectionCheck(ms: number): KeepAliveClock<Socket> {
  return new KeepAliveClock<Socket>(ms, false, closeIfSilent);
}
