/**
 * The order in which one round of the HTTP benchmark measures its rows. Every "× bare" figure is
 * a ratio of two rows in the same round, and the shared host's background load changes on a scale
 * of seconds, so the two rows of a ratio are measured back to back:
 *
 * - rows are grouped by path, each group in the targets' table order (bare first, conduit-mcp
 *   second), so bare and conduit-mcp on one path are neighbours;
 * - every other round runs each group backwards, so no target is always measured first in its
 *   group (an ABBA order: a drift that is linear in time cancels out of the median);
 * - the groups' order rotates every round, so no path always comes first or last.
 *
 * @example
 * ```ts
 * roundOrder([{ path: "a", target: 0 }, { path: "a", target: 1 }], ["a"], 1);
 * // [{ path: "a", target: 1 }, { path: "a", target: 0 }]
 * ```
 */

/** What the order needs of a row. */
export interface OrderedRow<P> {
  readonly path: P;
}

/**
 * The rows of round `round` (from 0) in the order to measure them. `rows` are in table order
 * (target by target); `paths` gives the groups' base order. Rows whose path is not in `paths` are
 * left out.
 */
export function roundOrder<P, R extends OrderedRow<P>>(
  rows: readonly R[],
  paths: readonly P[],
  round: number,
): R[] {
  const groups = paths
    .map((path) => rows.filter((row) => row.path === path))
    .filter((group) => group.length > 0);
  const order: R[] = [];
  for (let i = 0; i < groups.length; i++) {
    const group = groups[(i + round) % groups.length] as R[];
    order.push(...(round % 2 === 0 ? group : [...group].reverse()));
  }
  return order;
}
