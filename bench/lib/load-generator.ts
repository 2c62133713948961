/**
 * The HTTP load generator of every throughput benchmark: `wrk` (a native, event-driven load
 * generator; Debian/Ubuntu package `wrk`), pinned with `taskset` to a core of its own while each
 * server runs pinned to another, so the figures measure the servers and not the load generator.
 * A Lua script gives every request its own JSON-RPC id (two in-flight calls never share one, as
 * with real clients) and prints the run's figures as one JSON line, then wrk's latency histogram,
 * from which the percentiles are taken with each request counted once (bench/lib/wrk-latency.ts).
 *
 * When `wrk` is missing, autocannon (in this Node process) stands in, with a printed notice that
 * it is a fallback: it needs about as much CPU as a fast server, so on a 2-core machine it caps
 * the fast targets and the ratios between them shrink.
 *
 * @example
 * ```ts
 * const generator = loadGenerator();
 * const r = await generator.run({ url, headers, body: (id) => echoBody(id), seconds: 5, connections: 50 });
 * console.log(r.rps, r.p99);
 * ```
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";

import autocannon from "autocannon";

import { asTimed, type LatencyBuckets, percentileUs } from "./wrk-latency.js";

/** One load run's figures. */
export interface LoadResult {
  /** Requests answered per second over the run. */
  readonly rps: number;
  /**
   * Latency percentiles, ms, of the requests as the load generator timed them, each once: for
   * wrk, its histogram with its coordinated-omission correction undone (bench/lib/wrk-latency.ts
   * says why); autocannon makes no such correction.
   */
  readonly p50: number;
  readonly p99: number;
  /**
   * wrk's own p99, ms, with its coordinated-omission correction (what `wrk --latency` prints);
   * undefined for autocannon. It also counts each new connection's wait to be accepted, many
   * times over: reported beside {@link p99}, not instead of it.
   */
  readonly wrkP99?: number;
  /** Requests answered in the run. */
  readonly requests: number;
  /**
   * How often the load generator went to sleep waiting for answers, per answered request: wrk's
   * voluntary context switches over the run (`getrusage(2)`), undefined for autocannon. On
   * loopback each one is a wake-up the server's CPU pays for when it sends the next answer, and
   * a slower server leaves the client asleep more often (docs/profile.md, "Twelfth round").
   */
  readonly clientSleeps?: number;
}

/** What one run sends. */
export interface LoadSpec {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The body for one JSON-RPC id (the id must appear in it as a bare number). */
  body(id: number): string;
  readonly seconds: number;
  readonly connections: number;
  /** Names the target in error messages. */
  readonly label?: string;
}

/** A load generator. */
export interface LoadGenerator {
  /** `wrk` or `autocannon (fallback)`. */
  readonly name: string;
  /** How it ran, for the docs: binary, version, threads, pinning. */
  readonly description: string;
  /** One run; throws when any answer was not 2xx/3xx or any socket error or timeout occurred. */
  run(spec: LoadSpec): Promise<LoadResult>;
}

/** The two CPUs a run uses: the load generator's and the servers'. */
export interface CpuPlan {
  /** The load generator's CPU, or null when nothing is pinned. */
  readonly load: number | null;
  /** The servers' CPU (and anything server-side, such as redis-server), or null. */
  readonly server: number | null;
  /** Why nothing is pinned, when it is not. */
  readonly note: string;
}

/** Whether a command runs (`--version`-style probe). */
function runs(command: string, args: readonly string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch (error) {
    // wrk prints its usage and exits 1 for `--version`: it ran, so it is there.
    return (error as { status?: number | null }).status === 1;
  }
}

let plan: CpuPlan | undefined;

/**
 * Load generator on CPU 0, servers on the last CPU, when `taskset` exists and there are at least
 * two CPUs; otherwise no pinning, and the note says why.
 *
 * @example
 * ```ts
 * cpuPlan(); // { load: 0, server: 1, note: "" }
 * ```
 */
export function cpuPlan(): CpuPlan {
  if (plan !== undefined) return plan;
  const count = cpus().length;
  if (count < 2) plan = { load: null, server: null, note: "one CPU: nothing pinned" };
  else if (!runs("taskset", ["-V"])) {
    plan = {
      load: null,
      server: null,
      note: "taskset not found (Debian package util-linux): load generator and servers share every CPU",
    };
  } else plan = { load: 0, server: count - 1, note: "" };
  return plan;
}

/**
 * Pins a running process (all its threads) to one CPU with `taskset -a -p -c`; false when it
 * could not.
 *
 * @example
 * ```ts
 * pinProcess(child.pid, 1);
 * ```
 */
export function pinProcess(pid: number | undefined, cpu: number | null): boolean {
  if (pid === undefined || cpu === null) return false;
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Marks where the id goes in a body template: a number no benchmark reaches. */
const ID_MARK = 987_654_321_123;

/**
 * A Lua string literal (wrk runs LuaJIT): quotes, backslashes and every byte outside printable
 * ASCII as three-digit decimal escapes (a shorter one followed by a digit would read on).
 */
function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out +=
      byte >= 0x20 && byte < 0x7f && c !== '"' && c !== "\\"
        ? c
        : `\\${String(byte).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/**
 * The wrk script: `request` builds each POST with the next id (a per-thread counter starting at
 * `first`), `done` prints one JSON line and one line of wrk's latency histogram. No `response`
 * callback: wrk then skips parsing bodies and stays cheap; the benchmark checks answers in its
 * pre-flight before and after the load, and wrk still counts every non-2xx/3xx status. `done` also reads wrk's own voluntary context switches
 * with `getrusage(2)` through LuaJIT's FFI (x86-64 and arm64 Linux share `struct rusage`'s
 * layout); -1 when that fails.
 */
function wrkScript(spec: LoadSpec, first: number): string {
  const template = spec.body(ID_MARK);
  const at = template.indexOf(String(ID_MARK));
  if (at < 0) throw new Error("the body must carry its id as a bare number");
  const prefix = template.slice(0, at);
  const suffix = template.slice(at + String(ID_MARK).length);
  const headers = Object.entries(spec.headers)
    .map(([name, value]) => `  [${luaString(name)}] = ${luaString(value)},`)
    .join("\n");
  return `-- Generated by bench/lib/load-generator.ts for one run.
local counter = ${first}
local function sleeps()
  local ok, result = pcall(function()
    local ffi = require("ffi")
    ffi.cdef[[
      struct bench_timeval { long tv_sec; long tv_usec; };
      struct bench_rusage {
        struct bench_timeval ru_utime, ru_stime;
        long ru_maxrss, ru_ixrss, ru_idrss, ru_isrss, ru_minflt, ru_majflt, ru_nswap,
          ru_inblock, ru_oublock, ru_msgsnd, ru_msgrcv, ru_nsignals, ru_nvcsw, ru_nivcsw;
      };
      int getrusage(int who, struct bench_rusage *usage);
    ]]
    local usage = ffi.new("struct bench_rusage")
    if ffi.C.getrusage(0, usage) ~= 0 then return -1 end
    return tonumber(usage.ru_nvcsw)
  end)
  if ok then return result end
  return -1
end
-- wrk's latency histogram after its coordinated-omission correction, as "µs:count" pairs
-- (bench/lib/wrk-latency.ts undoes the correction). Read through LuaJIT's FFI from the stats
-- struct the \`latency\` userdata points to (src/stats.h: count, limit, min, max, then one
-- count per µs), because the script API's \`latency(i)\` rescans the histogram from its start on
-- every call. nil unless what it read agrees with wrk's own min, max and count.
local function histogram(latency)
  local ok, result = pcall(function()
    local ffi = require("ffi")
    local s = ffi.cast("uint64_t**", ffi.cast("void*", latency))[0]
    local count, low, high = tonumber(s[0]), tonumber(s[2]), tonumber(s[3])
    if low ~= latency.min or high ~= latency.max then return nil end
    local out, sum = {}, 0
    for us = low, high do
      local n = tonumber(s[4 + us])
      if n > 0 then
        sum = sum + n
        out[#out + 1] = us .. ":" .. n
      end
    end
    if sum ~= count then return nil end
    return table.concat(out, " ")
  end)
  if ok then return result end
  return nil
end
local headers = {
${headers}
}
local path = ${luaString(new URL(spec.url).pathname)}
local prefix = ${luaString(prefix)}
local suffix = ${luaString(suffix)}

request = function()
  counter = counter + 1
  return wrk.format("POST", path, headers, prefix .. counter .. suffix)
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%.0f,"durationUs":%.0f,"status":%.0f,"connect":%.0f,"read":%.0f,"write":%.0f,"timeout":%.0f,"p50Us":%.0f,"p99Us":%.0f,"sleeps":%.0f}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), sleeps()))
  local buckets = histogram(latency)
  if buckets ~= nil then io.write("WRK_HISTOGRAM " .. buckets .. "\\n") end
end
`;
}

interface WrkResult {
  requests: number;
  durationUs: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
  /** wrk's voluntary context switches over its run; -1 when unknown. */
  sleeps: number;
}

/**
 * The `WRK_HISTOGRAM` line of wrk's output as `[µs, count]` pairs.
 *
 * @throws Error when the script printed none (its read of wrk's histogram did not agree with
 *   wrk's own figures) or a pair is not two integers.
 */
function histogramOf(stdout: string): LatencyBuckets {
  const line = stdout.split("\n").find((l) => l.startsWith("WRK_HISTOGRAM"));
  if (line === undefined) {
    throw new Error("wrk's script could not read its latency histogram (wrk's src/stats.h layout)");
  }
  return line
    .slice("WRK_HISTOGRAM".length)
    .trim()
    .split(" ")
    .filter((pair) => pair !== "")
    .map((pair) => {
      const [us, count] = pair.split(":").map(Number);
      if (!Number.isSafeInteger(us) || !Number.isSafeInteger(count)) {
        throw new Error(`wrk's histogram has a pair that is not two integers: ${pair}`);
      }
      return [us as number, count as number] as const;
    });
}

let nextId = 1_000;

function wrkGenerator(version: string): LoadGenerator {
  const cpu = cpuPlan().load;
  const dir = mkdtempSync(join(tmpdir(), "conduit-wrk-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  let runCount = 0;
  return {
    name: "wrk",
    description: `${version}, one thread${cpu === null ? "" : `, pinned to CPU ${cpu} with taskset`}`,
    run(spec) {
      const first = nextId;
      // Ids never repeat across runs: 10 million per run is far above any run's count.
      nextId += 10_000_000;
      const script = join(dir, `run-${++runCount}.lua`);
      writeFileSync(script, wrkScript(spec, first));
      const wrkArgs = [
        "-t1",
        `-c${spec.connections}`,
        `-d${spec.seconds}s`,
        "--timeout",
        "10s",
        "-s",
        script,
        spec.url,
      ];
      const [command, args] =
        cpu === null ? ["wrk", wrkArgs] : ["taskset", ["-c", String(cpu), "wrk", ...wrkArgs]];
      return new Promise((resolve, reject) => {
        execFile(
          command as string,
          args as string[],
          // The histogram line holds one pair per µs value seen: room for a run's worst tail.
          { timeout: (spec.seconds + 30) * 1_000, maxBuffer: 64 * 1024 * 1024 },
          (error, stdout, stderr) => {
            rmSync(script, { force: true });
            if (error !== null) {
              reject(new Error(`wrk failed: ${error.message} ${stderr}`.trim()));
              return;
            }
            const line = stdout.split("\n").find((l) => l.startsWith("WRK_RESULT "));
            if (line === undefined) {
              reject(
                new Error(`wrk printed no result: ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`),
              );
              return;
            }
            const r = JSON.parse(line.slice("WRK_RESULT ".length)) as WrkResult;
            const sockets = r.connect + r.read + r.write;
            if (r.status > 0 || sockets > 0 || r.timeout > 0) {
              reject(
                new Error(
                  `${spec.label ?? spec.url}: ${r.status} non-2xx/3xx answers, ${r.timeout} wrk timeouts at 10 s, socket errors connect ${r.connect} / read ${r.read} / write ${r.write} under load`,
                ),
              );
              return;
            }
            let timed: LatencyBuckets;
            try {
              timed = asTimed({
                buckets: histogramOf(stdout),
                durationUs: r.durationUs,
                requests: r.requests,
                connections: spec.connections,
              });
            } catch (cause) {
              reject(new Error(`${spec.label ?? spec.url}: ${(cause as Error).message}`));
              return;
            }
            resolve({
              rps: r.requests / (r.durationUs / 1e6),
              p50: percentileUs(timed, 50) / 1_000,
              p99: percentileUs(timed, 99) / 1_000,
              wrkP99: r.p99Us / 1_000,
              requests: r.requests,
              ...(r.sleeps >= 0 && r.requests > 0 ? { clientSleeps: r.sleeps / r.requests } : {}),
            });
          },
        );
      });
    },
  };
}

function autocannonGenerator(): LoadGenerator {
  const cpu = cpuPlan().load;
  const pinned = pinProcess(process.pid, cpu);
  return {
    name: "autocannon (fallback)",
    description: `autocannon in the benchmark's own Node process${pinned ? `, pinned to CPU ${cpu}` : ""} — a fallback: install wrk for figures that measure the servers`,
    async run(spec) {
      const result = await autocannon({
        url: spec.url,
        method: "POST",
        headers: { ...spec.headers },
        // A fresh id per request. (autocannon's `idReplacement` keeps the Content-Length of the
        // placeholder body, so servers wait for the rest: not used.)
        requests: [
          {
            setupRequest: (request) => {
              request.body = spec.body(++nextId);
              return request;
            },
          },
        ],
        connections: spec.connections,
        duration: spec.seconds,
      });
      if (result.non2xx > 0 || result.errors > 0) {
        // autocannon counts its own 10 s request timeout among `errors`: split them out.
        const other = result.errors - result.timeouts - result.resets;
        throw new Error(
          `${spec.label ?? spec.url}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load (${result.timeouts} autocannon timeouts at 10 s, ${result.resets} resets, ${other} other connection errors)`,
        );
      }
      return {
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        requests: result.requests.total,
      };
    },
  };
}

let chosen: LoadGenerator | undefined;

/**
 * `wrk` when it is on the PATH, else autocannon with a notice on stderr saying what to install.
 * `BENCH_LOAD_GENERATOR=autocannon` forces the fallback (to compare the two).
 *
 * @example
 * ```ts
 * console.error(`load generator: ${loadGenerator().description}`);
 * ```
 */
export function loadGenerator(): LoadGenerator {
  if (chosen !== undefined) return chosen;
  const forced = process.env.BENCH_LOAD_GENERATOR === "autocannon";
  let version = "";
  if (!forced) {
    try {
      execFileSync("wrk", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (error) {
      // `wrk --version` prints its version and usage, then exits 1.
      const e = error as { status?: number | null; stdout?: string };
      if (e.status === 1) version = (e.stdout ?? "").split("\n")[0]?.split(" Copyright")[0] ?? "";
    }
  }
  if (version !== "") chosen = wrkGenerator(version.trim());
  else {
    console.error(
      forced
        ? "NOTICE: BENCH_LOAD_GENERATOR=autocannon: using the autocannon FALLBACK."
        : "NOTICE: wrk not found on the PATH. Install it for honest figures: `sudo apt-get install wrk` (Debian/Ubuntu package wrk; macOS: `brew install wrk`). FALLING BACK to autocannon, which runs in this Node process and needs about a core of its own: on a small machine it caps the fast servers, so their figures and ratios read lower than the servers' real ones.",
    );
    chosen = autocannonGenerator();
  }
  return chosen;
}
