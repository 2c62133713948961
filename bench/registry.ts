/**
 * Registry benchmark (issue 2, "Must show"): ops/s of the per-request path (track + untrack +
 * clear), of `cancel` under the cap, of `cancel` at the cap for maxRows 10 000 / 100 000 /
 * 1 000 000 (steady state: every insert at the cap, a batch evicted every maxRows / 20 inserts),
 * and heap bytes per stored row. Several rounds per figure; the table gives medians.
 *
 * Run: `npm run bench:registry` (`node --expose-gc --import tsx bench/registry.ts`).
 * Flags: `--no-write` prints only; `--quick` runs fewer rounds (not written to the docs).
 * The results table is printed and written to the "## Registry" section of docs/benchmarks.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";

import { MemoryCancellationStore } from "../src/cancellation/memory-store.js";
import { CancellationRegistry } from "../src/cancellation/registry.js";
import { replaceSection } from "./lib/markdown-section.js";
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

/** Times `ops` iterations of an async body; returns ops/s. */
async function rate(
  ops: number,
  body: (i: number) => Promise<unknown>,
  offset = 0,
): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await body(offset + i);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return ops / seconds;
}

/** The request path of every tools/call: track, untrack, then clear (never cancelled). */
async function perRequestPath(): Promise<number[]> {
  const registry = new CancellationRegistry({ janitor: false });
  const scope = "ip:203.0.113.9";
  const ops = 200_000;
  const body = async (i: number) => {
    const handle = await registry.track(i, scope);
    await registry.untrack(handle);
    await registry.clear(i, scope);
  };
  await rate(ops, body); // warm-up
  const results: number[] = [];
  for (let r = 0; r < ROUNDS; r++) results.push(await rate(ops, body, (r + 1) * ops));
  await registry.close();
  return results;
}

/** `cancel` into a table that never reaches its cap, 1 000 scopes round-robin. */
async function cancelUnderCap(): Promise<number[]> {
  const results: number[] = [];
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
async function cancelAtCap(maxRows: number, scopes: number): Promise<number[]> {
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
  const results: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    results.push(await rate(ops, cancel, next));
    next += ops;
  }
  if ((await registry.size()) > maxRows) throw new Error("the cap did not hold");
  await registry.close();
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
  const rows: Array<[string, number[]]> = [];
  const log = (label: string, values: number[]) => {
    rows.push([label, values]);
    console.error(
      `${label}: median ${format(median(values))} ops/s (${values.map(format).join(", ")})`,
    );
  };

  log("per-request path (track + untrack + clear)", await perRequestPath());
  log("cancel under the cap", await cancelUnderCap());
  const atCap: Record<string, number> = {};
  for (const [scopes, label] of [
    [1, "one scope"],
    [1_000, "1 000 scopes"],
  ] as const) {
    for (const maxRows of [10_000, 100_000, 1_000_000]) {
      const values = await cancelAtCap(maxRows, scopes);
      atCap[`${scopes}:${maxRows}`] = median(values);
      log(`cancel at the cap, maxRows ${format(maxRows)}, ${label}`, values);
      collect();
    }
  }
  const bytes = await bytesPerRow(200_000);
  const seconds = (Date.now() - started) / 1000;

  const table = [
    "| measurement | median ops/s | rounds (ops/s) |",
    "| --- | ---: | --- |",
    ...rows.map(
      ([label, values]) =>
        `| ${label} | ${format(median(values))} | ${values.map(format).join(", ")} |`,
    ),
    `| heap bytes per stored row (200 000 rows, 100 scopes) | ${bytes.toFixed(0)} B | |`,
  ].join("\n");
  const ratio = (scopes: number) =>
    ((atCap[`${scopes}:10000`] ?? 0) / (atCap[`${scopes}:1000000`] ?? 1)).toFixed(2);
  const ratios = `At-cap slowdown from maxRows 10 000 to 1 000 000: ${ratio(1)}x (one scope), ${ratio(1_000)}x (1 000 scopes); the limit is 2x.`;
  console.log(`\n${table}\n\n${ratios}\n`);

  if (!quick && !flags.has("--no-write")) {
    const section = `In-process figures of \`CancellationRegistry\` over the default \`MemoryCancellationStore\`
(no janitor), each operation awaited one after another. Medians over ${ROUNDS} rounds after a warm-up.

- Command: \`npm run bench:registry\` (\`node --expose-gc --import tsx bench/registry.ts\`), ${seconds.toFixed(0)} s
- Date: ${new Date().toISOString().slice(0, 10)}
- Machine: ${machine()}

${table}

${ratios}

- *Per-request path*: \`track(i, scope)\`, \`untrack(handle)\`, \`clear(i, scope)\` for a request that was
  never cancelled, 200 000 per round.
- *Under the cap*: \`cancel(i, "bench", scope)\` with 1 000 scopes, 100 000 rows per round into a fresh table.
- *At the cap*: the table is filled to \`maxRows\` (quota \`Infinity\`), then every \`cancel\` hits the cap
  and each \`maxRows / 20\`-th one evicts a batch; a round is a whole number of batches (at least
  200 000 inserts), so it pays its reclaims. With one scope every batch is that scope's oldest
  rows; with 1 000 equal scopes every batch is a k-way merge across them.
- *Bytes per row*: heap growth (after \`global.gc()\`) per row of a 200 000-row store, including the
  row object, its id string and its entry in its scope's Map.
`;
    const path = "docs/benchmarks.md";
    let doc = "";
    try {
      doc = readFileSync(path, "utf8");
    } catch {
      doc = "# Benchmarks\n";
    }
    writeFileSync(path, replaceSection(doc, "Registry", section));
    console.error(`wrote the "## Registry" section of ${path}`);
  }
}

main().catch((error: unknown) => {
  console.error(
    `bench:registry failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  process.exitCode = 1;
});
