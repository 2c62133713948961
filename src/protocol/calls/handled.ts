/**
 * The promise a request's handling hands back when the handling has already ended: the request
 * was answered (or its call settled) before the function returned. A caller may compare against
 * it to go on at once instead of waiting on it (no reaction and no microtask per request): the
 * HTTP endpoint then gives the exchange's units back in the same turn.
 *
 * @example
 * ```ts
 * const running = dispatcher.handleRequest(message, meta, sink);
 * if (running === HANDLED) release(); else running.then(release, release);
 * ```
 */
export const HANDLED: Promise<void> = Promise.resolve();
