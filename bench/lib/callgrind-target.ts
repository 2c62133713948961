/**
 * A benchmark target run under valgrind's callgrind
 * (https://valgrind.org/docs/manual/cl-manual.html), counting only between two commands sent
 * with `callgrind_control`: `--instr-atstart=no` leaves start-up and warm-up out,
 * `callgrind_control -i on|off <pid>` switches the counting, `callgrind_control -d <pid>` dumps
 * it. `--separate-threads=yes` writes one file per thread, so the main thread's (thread 1, the
 * one that runs JavaScript) is read apart from V8's compiler and GC threads;
 * `--smc-check=all-non-file` makes valgrind notice the code V8 writes and rewrites.
 *
 * @example
 * ```ts
 * requireCallgrind();
 * const target = await startUnderCallgrind({ script: "bench/lib/bare-server.ts", outDir });
 * await target.instrument(true);
 * // … the calls to count …
 * await target.instrument(false);
 * const profile = readCallgrind(await target.dump());
 * await target.stop();
 * ```
 */
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

import { startTarget } from "./child.js";

const run = promisify(execFile);

/** The flags valgrind runs node with (the output file's name is added). */
export const CALLGRIND_FLAGS: readonly string[] = [
  "--tool=callgrind",
  "--instr-atstart=no",
  "--separate-threads=yes",
  "--smc-check=all-non-file",
];

/**
 * Throws a one-line Error saying what to install unless `valgrind` and `callgrind_control` both
 * run; returns valgrind's version line otherwise.
 *
 * @example
 * ```ts
 * requireCallgrind(); // "valgrind-3.19.0"
 * ```
 */
export function requireCallgrind(): string {
  let version = "";
  for (const tool of ["valgrind", "callgrind_control"]) {
    try {
      const out = execFileSync(tool, ["--version"], { encoding: "utf8", stdio: "pipe" }).trim();
      if (tool === "valgrind") version = out;
    } catch {
      throw new Error(
        `${tool} not found: install valgrind (Debian/Ubuntu: apt-get install -y valgrind), which brings callgrind_control`,
      );
    }
  }
  return version;
}

/** How to start it. */
export interface CallgrindTargetOptions {
  /** The target script, run as `node --import tsx <script>` (bench/lib/child.ts). */
  readonly script: string;
  /** Where callgrind writes its files (`cg.out.<pid>…`). */
  readonly outDir: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Extra `node` flags, e.g. `--perf-basic-prof`. */
  readonly nodeArgs?: readonly string[];
  /** Extra callgrind flags, e.g. `--cache-sim=yes` (https://valgrind.org/docs/manual/cl-manual.html). */
  readonly toolArgs?: readonly string[];
  /** What `node` runs instead of the script, and its URL line (bench/lib/child.ts). */
  readonly argv?: readonly string[];
  readonly announcement?: string;
  /** Give up when it has not announced its URL by then (ms; 180 s: valgrind starts slowly). */
  readonly timeoutMs?: number;
}

/** A target running under callgrind. */
export interface CallgrindTarget {
  readonly url: string;
  /** Node's pid (valgrind runs it in its own process). */
  readonly pid: number;
  /** Switches the counting on or off. */
  instrument(on: boolean): Promise<void>;
  /** Dumps the counts since the last dump; resolves to the main thread's file's text. */
  dump(): Promise<string>;
  /** SIGTERM (the target exits at once), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts `script` under callgrind, counting nothing until {@link CallgrindTarget.instrument}.
 *
 * @example
 * ```ts
 * const target = await startUnderCallgrind({ script, outDir, env: { BENCH_CONDUIT_BUILD: dist } });
 * ```
 */
export async function startUnderCallgrind(
  options: CallgrindTargetOptions,
): Promise<CallgrindTarget> {
  const target = await startTarget(options.script, {
    timeoutMs: options.timeoutMs ?? 180_000,
    wrapper: [
      "valgrind",
      "--quiet",
      ...CALLGRIND_FLAGS,
      ...(options.toolArgs ?? []),
      `--callgrind-out-file=${join(options.outDir, "cg.out.%p")}`,
    ],
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
    ...(options.argv === undefined ? {} : { argv: options.argv }),
    ...(options.announcement === undefined ? {} : { announcement: options.announcement }),
  });
  const pid = target.child.pid as number;
  const control = async (...args: string[]): Promise<void> => {
    try {
      await run("callgrind_control", [...args, String(pid)], { encoding: "utf8" });
    } catch (error) {
      const why = (error as { stderr?: string; stdout?: string; message: string }).stdout?.trim();
      throw new Error(`callgrind_control ${args.join(" ")} ${pid} failed: ${why || String(error)}`);
    }
  };
  let dumps = 0;
  return {
    url: target.url,
    pid,
    instrument: (on) => control("-i", on ? "on" : "off"),
    async dump() {
      await control("-d");
      dumps++;
      // `<file>.<dump number>-<thread>`; the main thread is thread 1.
      const file = join(options.outDir, `cg.out.${pid}.${dumps}-01`);
      for (let waited = 0; waited < 30_000; waited += 200) {
        let text = "";
        try {
          text = readFileSync(file, "utf8");
        } catch {
          // Not there yet.
        }
        if (/^totals:/m.test(text)) return text;
        await sleep(200);
      }
      throw new Error(`callgrind wrote no complete ${file} within 30 s of the dump`);
    },
    stop: () => target.stop(),
  };
}
