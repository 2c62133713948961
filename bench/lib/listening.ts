/**
 * The line a benchmark target prints once it listens, so the parent knows its URL without racing
 * for a port (every target listens on 127.0.0.1 port 0).
 *
 * @example
 * ```ts
 * announce(`http://127.0.0.1:${port}/mcp`); // stdout: "BENCH_LISTENING http://127.0.0.1:4321/mcp"
 * ```
 */

/** Prefix of the announcement line. */
export const LISTENING_PREFIX = "BENCH_LISTENING ";

/**
 * Prints the announcement line and makes SIGTERM/SIGINT exit at once (a benchmark target holds no
 * state worth a graceful shutdown).
 *
 * @example
 * ```ts
 * server.listen(0, "127.0.0.1", () => announce(urlOf(server)));
 * ```
 */
export function announce(url: string): void {
  process.stdout.write(`${LISTENING_PREFIX}${url}\n`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => process.exit(0));
}
