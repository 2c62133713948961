/**
 * Closes a connection that has not sent a byte `ms` after it opened (node's own header timeout
 * starts only with a request's first byte, so a silent socket would otherwise stay open).
 *
 * One timer for every connection, not one each: every connection gets the same delay, so their
 * deadlines come in the order they opened, and a `Map` in insertion order is a deadline queue.
 * The one timer is armed for the oldest deadline; when it fires, every connection whose deadline
 * has come is checked (closed if silent) and forgotten, and the timer is armed for the next one.
 * A connection that closes first is forgotten at once. Each connection is checked exactly at its
 * own deadline, as a timer of its own would; what it holds while open is one `Map` entry instead
 * of a timer, its callback and a `close` listener (the per-connection bytes of thousands of
 * long-lived calls or streams: docs/benchmarks.md, "Scale: 10 000 calls in flight").
 */
import type { Socket } from "node:net";

/**
 * The `'connection'` listener of a server that closes silent connections after `ms`.
 *
 * @example
 * ```ts
 * server.on("connection", closeIfSilent(10_000));
 * ```
 */
export function closeIfSilent(ms: number): (socket: Socket) => void {
  /** Open connections not checked yet, oldest first, each with its deadline (ms, an integer). */
  const pending = new Map<Socket, number>();
  let timer: NodeJS.Timeout | null = null;
  // One listener shared by every socket (`this` is the socket that closed).
  function forget(this: Socket): void {
    pending.delete(this);
  }
  const arm = (delay: number): void => {
    timer = setTimeout(check, Math.max(0, delay));
    timer.unref();
  };
  const check = (): void => {
    timer = null;
    const now = Math.ceil(performance.now());
    for (const [socket, deadline] of pending) {
      if (deadline > now) {
        arm(deadline - now);
        return;
      }
      pending.delete(socket);
      socket.removeListener("close", forget);
      if (socket.bytesRead === 0) socket.destroy();
    }
  };
  return (socket) => {
    pending.set(socket, Math.ceil(performance.now()) + ms);
    socket.on("close", forget);
    if (timer === null) arm(ms);
  };
}
