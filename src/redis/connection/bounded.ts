/**
 * One Redis call bounded in time (and a bounded wait for readiness): the fail-open stores never let a request wait on a Redis that
 * stalls (no unbounded waiting, no unbounded buffering).
 */

/**
 * Resolves as `call` does, or rejects once `timeoutMs` has passed; the timer is always cleared.
 *
 * @example
 * ```ts
 * const value = await bounded(client.get(key), 1_000);
 * ```
 */
export async function bounded<T>(call: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Redis call timed out after ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `state` every 10 ms until it says `"ready"` (resolves true) or `"closed"` (false), or
 * `timeoutMs` has passed (false): the `ready()` of the Redis stores and the reply bus.
 *
 * @example
 * ```ts
 * const ok = await readyWithin(2_000, () => (closed ? "closed" : client.status === "ready" ? "ready" : "wait"));
 * ```
 */
export async function readyWithin(
  timeoutMs: number,
  state: () => "ready" | "closed" | "wait",
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = state();
    if (now !== "wait") return now === "ready";
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
