/**
 * A {@link CloseSignal} that several events may trip, once: the doors whose way back is not a
 * node `ServerResponse` (a web `Response` stream, a framework's reply) close it from whichever
 * comes first — the request's `AbortSignal`, the response stream being cancelled, the
 * connection's `'close'`.
 */
import { type CloseListener, type CloseSignal, notifyClosed } from "../transport.js";

/**
 * A close signal tripped by {@link CloseLatch.close}.
 *
 * @example
 * ```ts
 * const latch = new CloseLatch();
 * request.signal.addEventListener("abort", () => latch.close(), { once: true });
 * latch.onClose(() => console.log("client gone"));
 * ```
 */
export class CloseLatch implements CloseSignal {
  closed = false;
  private listeners: Array<(() => void) | CloseListener> | null = null;

  onClose(listener: (() => void) | CloseListener): void {
    if (this.closed) {
      notifyClosed(listener);
      return;
    }
    if (this.listeners === null) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  /** Trips the latch: every listener is called once, now; later calls do nothing. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners !== null) for (const listener of listeners) notifyClosed(listener);
  }
}
