/**
 * One Redis call bounded in time: the fail-open stores never let a request wait on a Redis that
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
