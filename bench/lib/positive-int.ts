/**
 * A benchmark flag's value as a positive integer. A benchmark's flags come from its command line,
 * so a bad one ends the run at once with a one-line message naming the flag and what it got, and
 * exit code 2 (a usage error), before anything is started.
 *
 * @example
 * ```ts
 * const rounds = positiveInt("rounds", flags.rounds); // "5" → 5; "0" → exits 2
 * ```
 */
export function positiveInt(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer; got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}
