/**
 * Closes a connection that has not sent a byte `ms` after it opened (node's own header timeout
 * starts only with a request's first byte, so a silent socket would otherwise stay open).
 *
 * One timer for every connection, not one each: every connection gets the same delay, so their
 * deadlines come in the order they opened, and a `Map` in insertion order is a deadline queue.
 * The one timer is armed for the oldest deadline; when it fires, every connection whose deadline
 * has come is checked (closed if silent) and forgotten, and the timer is armed for the next one.
 * A connection that closes first is forgotten at once, by the connection bounds' one `close`
 * listener (connection-bounds.ts), not a listener of its own. Each connection is checked exactly
 * at its own deadline, as a timer of its own would; what it holds while open is one `Map` entry
 * (the per-connection bytes of thousands of long-lived calls or streams: docs/benchmarks.md,
 * "Scale: 10 000 calls in flight").
 */
import type { Socket } from "node:net";

/**
 * The silent-connection check of one server.
 *
 * @example
 * ```ts
 * const silent = new SilentConnections(10_000);
 * silent.watch(socket); // on `connection`
 * silent.forget(socket); // on its `close`
 * ```
 */
export class SilentConnections {
  private readonly ms: number;
  /** Open connections not checked yet, oldest first, each with its deadline (ms, an integer). */
  private readonly pending = new Map<Socket, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(ms: number) {
    this.ms = ms;
  }

  /** A new connection: closed at its deadline unless it sent a byte by then. */
  watch(socket: Socket): void {
    this.pending.set(socket, Math.ceil(performance.now()) + this.ms);
    if (this.timer === null) this.arm(this.ms);
  }

  /** `socket` closed: nothing to check. */
  forget(socket: Socket): void {
    this.pending.delete(socket);
  }

  /** Connections waiting for their check. */
  get size(): number {
    return this.pending.size;
  }

  private arm(delay: number): void {
    const timer = setTimeout(checkSilent, Math.max(0, delay), this);
    timer.unref();
    this.timer = timer;
  }

  /** The timer: checks every connection whose deadline has come, then arms for the next. */
  check(): void {
    this.timer = null;
    const now = Math.ceil(performance.now());
    for (const [socket, deadline] of this.pending) {
      if (deadline > now) {
        this.arm(deadline - now);
        return;
      }
      this.pending.delete(socket);
      if (socket.bytesRead === 0) socket.destroy();
    }
  }
}

function checkSilent(silent: SilentConnections): void {
  silent.check();
}
