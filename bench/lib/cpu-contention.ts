/**
 * A noisy neighbour on demand: a process pinned to the servers' CPU that keeps it busy `percent`
 * % of every 20 ms period, so that the HTTP benchmark can measure every row under the same
 * competition for its CPU (`npm run bench:http -- --contend 50`) instead of whatever the host's
 * other tenants happen to run. Linux's scheduler then shares the CPU between the neighbour and the
 * measured server's threads, the main thread and V8's helper threads alike, as it does on a busy
 * shared host (docs/profile.md, "Eleventh round").
 *
 * The neighbour is `node -e` with a busy loop that sleeps the rest of each period in
 * `Atomics.wait` (no event loop, no timers), started under `taskset -c <cpu>`.
 *
 * @example
 * ```ts
 * const neighbour = startContention({ cpu: 1, percent: 50 });
 * // ... measure ...
 * await neighbour.stop();
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";

/** The period the neighbour's busy share is taken of, ms. */
export const CONTENTION_PERIOD_MS = 20;

/** Where and how hard to compete. */
export interface ContentionOptions {
  /** The CPU to pin the neighbour to (the servers'). */
  readonly cpu: number;
  /** Share of every period spent busy, 1-100. */
  readonly percent: number;
}

/** A running neighbour. */
export interface Contention {
  /** Its process id. */
  readonly pid: number;
  /** What it does, for a run's notes. */
  readonly description: string;
  /** Kills it; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * The neighbour's program: busy `busyMs`, then asleep for the rest of the period, forever.
 * `Atomics.wait` blocks the thread without spinning (Node docs, "Atomics.wait" is allowed on
 * the main thread).
 */
function neighbourSource(busyMs: number): string {
  const idleMs = CONTENTION_PERIOD_MS - busyMs;
  return [
    "const cell = new Int32Array(new SharedArrayBuffer(4));",
    "for (;;) {",
    "  const start = performance.now();",
    `  while (performance.now() - start < ${busyMs});`,
    idleMs > 0 ? `  Atomics.wait(cell, 0, 0, ${idleMs});` : "",
    "}",
  ].join("\n");
}

/**
 * Starts a neighbour; throws a RangeError for a `percent` outside 1-100 or a negative `cpu`.
 *
 * @example
 * ```ts
 * const neighbour = startContention({ cpu: 1, percent: 50 });
 * ```
 */
export function startContention(options: ContentionOptions): Contention {
  const { cpu, percent } = options;
  if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
    throw new RangeError(`contention must be a whole percent from 1 to 100; got ${percent}`);
  }
  if (!Number.isInteger(cpu) || cpu < 0) {
    throw new RangeError(`contention needs a CPU number; got ${cpu}`);
  }
  const busyMs = (CONTENTION_PERIOD_MS * percent) / 100;
  const child: ChildProcess = spawn(
    "taskset",
    ["-c", String(cpu), process.execPath, "-e", neighbourSource(busyMs)],
    { stdio: "ignore" },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error("the contention process did not start (taskset missing?)");
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A benchmark that dies must not leave a busy loop behind on the servers' CPU.
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);
  return {
    pid,
    description: `a busy loop pinned to CPU ${cpu}, busy ${percent} % of every ${CONTENTION_PERIOD_MS} ms`,
    async stop() {
      process.removeListener("exit", killOnExit);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
