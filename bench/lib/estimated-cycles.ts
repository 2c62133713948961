/**
 * Cycles estimated from callgrind's simulation of the caches and the branch predictor
 * (`--cache-sim=yes --branch-sim=yes`), with valgrind's own rough costs (Cachegrind manual,
 * https://valgrind.org/docs/manual/cg-manual.html: an L1 miss about 10 cycles, a last-level miss
 * up to 200, a misprediction 10 to 30): one per instruction, 10 per L1 miss, 100 per last-level
 * miss, 20 per misprediction. A weighting to compare two targets, or two functions, on one
 * machine model, not a prediction of time.
 *
 * @example
 * ```ts
 * const { cycles, i1 } = simulatedCosts((event) => profile.totalsByEvent.get(event) ?? 0);
 * ```
 */

export const CYCLE_WEIGHTS = { l1: 10, ll: 100, branch: 20 } as const;

/** The weighting in words, for a table's caption. */
export const CYCLE_WEIGHTS_TEXT = `instructions + ${CYCLE_WEIGHTS.l1} × L1 misses + ${CYCLE_WEIGHTS.ll} × last-level misses + ${CYCLE_WEIGHTS.branch} × branch mispredictions`;

/** The misses of each kind and the estimated cycles, from callgrind's events. */
export interface SimulatedCosts {
  readonly instructions: number;
  /** First-level instruction cache misses (`I1mr`). */
  readonly i1: number;
  /** Last-level misses on instruction fetch (`ILmr`). */
  readonly il: number;
  /** First-level data cache misses, reads and writes (`D1mr` + `D1mw`). */
  readonly d1: number;
  /** Last-level data misses, reads and writes (`DLmr` + `DLmw`). */
  readonly dl: number;
  /** Mispredicted conditional and indirect branches (`Bcm` + `Bim`). */
  readonly branches: number;
  readonly cycles: number;
}

/**
 * The costs from a reader of callgrind's event figures (an event it did not count reads 0).
 *
 * @example
 * ```ts
 * simulatedCosts((event) => ({ Ir: 100, I1mr: 2 })[event] ?? 0).cycles; // 120
 * ```
 */
export function simulatedCosts(event: (name: string) => number): SimulatedCosts {
  const instructions = event("Ir");
  const i1 = event("I1mr");
  const il = event("ILmr");
  const d1 = event("D1mr") + event("D1mw");
  const dl = event("DLmr") + event("DLmw");
  const branches = event("Bcm") + event("Bim");
  const cycles =
    instructions +
    CYCLE_WEIGHTS.l1 * (i1 + d1) +
    CYCLE_WEIGHTS.ll * (il + dl) +
    CYCLE_WEIGHTS.branch * branches;
  return { instructions, i1, il, d1, dl, branches, cycles };
}
