/**
 * The long fuzz run (`npm run fuzz`): the properties of test/fuzz/ with more cases.
 *
 *   node --import tsx scripts/fuzz.ts [--runs 20000] [--seed N]
 *
 * `--runs` is per property (five properties). Prints each property's time; exits 1 on the first
 * failing property, with fast-check's counterexample and seed.
 */
import {
  fuzzCancelled,
  fuzzHeaders,
  fuzzJsonBodies,
  fuzzRawBodies,
  fuzzRawHeaders,
  startFuzzTarget,
} from "../test/helpers/fuzz-properties.js";

function option(name: string, fallback: number | undefined): number | undefined {
  const at = process.argv.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value)) throw new Error(`fuzz: ${name} needs an integer`);
  return value;
}

const runs = option("--runs", 20_000) as number;
const seed = option("--seed", undefined);
const properties = [
  ["JSON bodies", fuzzJsonBodies],
  ["raw bodies", fuzzRawBodies],
  ["headers", fuzzHeaders],
  ["raw headers", fuzzRawHeaders],
  ["notifications/cancelled", fuzzCancelled],
] as const;

const target = await startFuzzTarget();
let failed = false;
try {
  for (const [name, property] of properties) {
    const started = performance.now();
    try {
      await property(target, runs, seed);
      console.log(
        `PASS  ${name.padEnd(24)} ${runs} cases in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    } catch (error) {
      failed = true;
      console.log(`FAIL  ${name}\n${error instanceof Error ? error.message : String(error)}`);
      break;
    }
  }
} finally {
  await target.close();
}
process.exit(failed ? 1 : 0);
