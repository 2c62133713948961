/**
 * Time to stop a never-checking CPU-bound tool, measured inside the server
 * (bench/lib/probe-server.ts, `streamCancelTimeoutMs` 100 ms by default): an isolated `spin` tool
 * runs `for (;;) {}` in a worker thread; a `notifications/cancelled` POST arrives; the call is
 * answered -32800 at once, the tool never notices, and after the stream cancel timeout conduit
 * terminates the worker. The figure is the time from the cancel POST's arrival to the
 * `conduit-mcp:tool:killed` event (worker terminated). The process CPU share (all threads) while
 * spinning and after the kill shows the CPU really stopped. Used by bench/report.ts.
 *
 * @example
 * ```ts
 * const { stopMs, cpuSpinning, cpuAfter } = await measureCpuStop(url, 20);
 * ```
 */
import { cancelBody, headersFor, post, probe, toolCallBody, until } from "./lib/http-client.js";

/** Result of {@link measureCpuStop}. */
export interface CpuStopResult {
  /** Cancel arrival → worker terminated, ms, per sample. */
  readonly stopMs: number[];
  /** Whether every kill terminated a worker (not merely abandoned a promise). */
  readonly allTerminated: boolean;
  /** Process CPU share (1 = one core) over 200 ms while the tool spins (first sample). */
  readonly cpuSpinning: number;
  /** Process CPU share over 200 ms starting 50 ms after the last kill. */
  readonly cpuAfter: number;
  /**
   * Samples retried because no kill followed: the cancel reached the call before its worker had
   * started the tool, so there was nothing to kill (conduit ends such a call without a worker).
   */
  readonly misses: number;
}

let nextId = 20_000_000;
/** Longest wait for the kill after the -32800 (the timeout under test is ~100 ms). */
const STREAM_CANCEL_GRACE_MS = 3_000;
/** Most retried samples before the run fails: a few are scheduling luck, many are a bug. */
const MAX_MISSES = 5;

interface Sample {
  cancelArrived?: number;
  killed?: number;
  terminated?: boolean;
}

const inFlight = async (url: string): Promise<number> =>
  (await probe<{ inFlight: number }>(url, "/bench/stats")).inFlight;
const cpu = async (url: string, ms: number): Promise<number> =>
  (await probe<{ share: number }>(url, `/bench/cpu?ms=${ms}`)).share;

/** Thrown when a cancelled call had no running worker to kill (see {@link CpuStopResult.misses}). */
class NoKill extends Error {}

async function once(
  url: string,
  measureSpin: boolean,
): Promise<{ ms: number; terminated: boolean; spin: number }> {
  const id = nextId++;
  // The probe records both the cancel arrival and the kill under `spin:<request id>`.
  const key = `spin:${id}`;
  // A clean slate: the previous sample's handle is released before this call starts, so "in
  // flight" below means this call.
  await until(async () => ((await inFlight(url)) === 0 ? true : undefined), "idle server", 5_000);
  const call = post(url, toolCallBody(id, "spin", {}), headersFor("2025", "spin"));
  // Observed at once: if a wait below gives up, the call's later hang-up must not end the whole
  // report as an unhandled rejection (the await further down still sees its outcome).
  call.answer.catch(() => {});
  await until(async () => ((await inFlight(url)) > 0 ? true : undefined), "spin in flight", 5_000);
  // Cancel only once the worker really spins (the process uses most of a core): a cancel that
  // overtook the worker's start would stop a tool that never ran, and time nothing.
  await new Promise((resolve) => setTimeout(resolve, 100));
  await until(
    async () => ((await cpu(url, 100)) > 0.8 ? true : undefined),
    "the worker spinning",
    5_000,
  );
  const spin = measureSpin ? await cpu(url, 200) : Number.NaN;
  const cancel = await post(url, cancelBody(id), { ...headersFor("2025"), "x-bench-cancel": key })
    .answer;
  if (cancel.status !== 202) throw new Error(`cancel answered HTTP ${cancel.status}`);
  const answer = await call.answer;
  if (answer.status !== 200 || !answer.body.includes("-32800")) {
    throw new Error(`cancelled spin answered ${answer.status} ${answer.body.slice(0, 200)}`);
  }
  const s = await until(
    async () => {
      const v = await probe<Sample>(url, `/bench/sample?key=${encodeURIComponent(key)}`);
      return v.killed === undefined ? undefined : v;
    },
    `kill of ${key}`,
    STREAM_CANCEL_GRACE_MS,
  ).catch(() => {
    throw new NoKill(`no kill of ${key}`);
  });
  if (s.cancelArrived === undefined || s.killed === undefined) {
    throw new Error(`${key}: missing timestamp ${JSON.stringify(s)}`);
  }
  return { ms: s.killed - s.cancelArrived, terminated: s.terminated === true, spin };
}

/**
 * `count` sequential spin-then-cancel samples against a probe server.
 *
 * @example
 * ```ts
 * await measureCpuStop("http://127.0.0.1:4000/mcp", 10);
 * ```
 */
export async function measureCpuStop(url: string, count: number): Promise<CpuStopResult> {
  const stopMs: number[] = [];
  let allTerminated = true;
  let cpuSpinning = Number.NaN;
  let misses = 0;
  for (let i = 0; i < count; i++) {
    let r: Awaited<ReturnType<typeof once>>;
    try {
      r = await once(url, i === 0);
    } catch (error) {
      if (!(error instanceof NoKill) || ++misses > MAX_MISSES) throw error;
      i--;
      continue;
    }
    if (i === 0) cpuSpinning = r.spin;
    stopMs.push(r.ms);
    allTerminated &&= r.terminated;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  const cpuAfter = await cpu(url, 200);
  return { stopMs, allTerminated, cpuSpinning, cpuAfter, misses };
}
