/**
 * The flags of a benchmark measured in rounds of samples: `--rounds N`, `--samples N` (per
 * target per round) and `--no-write` (print only, leave docs/benchmarks.md alone).
 *
 * @example
 * ```ts
 * const { rounds, samples, write } = readRoundFlags({ rounds: 5, samples: 40 });
 * ```
 */
import { parseArgs } from "node:util";

import { positiveInt } from "./positive-int.js";

/** The parsed flags. */
export interface RoundFlags {
  readonly rounds: number;
  readonly samples: number;
  /** False with `--no-write`. */
  readonly write: boolean;
}

/** Reads the process's arguments; a flag that is not a positive integer ends the run (positiveInt). */
export function readRoundFlags(defaults: { rounds: number; samples: number }): RoundFlags {
  const { values } = parseArgs({
    options: {
      rounds: { type: "string", default: String(defaults.rounds) },
      samples: { type: "string", default: String(defaults.samples) },
      "no-write": { type: "boolean", default: false },
    },
  });
  return {
    rounds: positiveInt("rounds", values.rounds),
    samples: positiveInt("samples", values.samples),
    write: !values["no-write"],
  };
}
