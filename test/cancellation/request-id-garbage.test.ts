/**
 * A numeric request id's key text (src/cancellation/request-id.ts) is garbage as soon as its
 * call ends: it is not made through V8's number-to-string cache (`String(n)`, a template
 * literal), which would keep each new id's text alive for thousands of later numbers, so that
 * under load every call's text outlived two young-generation collections and was copied into
 * the old generation. Measured in a child node with V8's `--trace-gc-nvp` (Node.js docs, "V8
 * options"): the bytes each young-generation collection promotes while ids are normalized.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";

/**
 * Normalizes 60 000 sequential ids, ten alive at a time, each beside about 12 KB of short-lived
 * garbage (what a served call allocates), so that a young-generation collection comes every
 * thousand ids or so, as under load; prints a marker where the loop starts.
 */
const CHILD = `
const { normalizeRequestId } = await import(${JSON.stringify(new URL("../../src/cancellation/request-id.ts", import.meta.url).href)});
const keys = new Array(10).fill(null);
const junk = new Array(10).fill(null);
console.log("LOOP");
for (let i = 0; i < 60_000; i++) {
  keys[i % 10] = normalizeRequestId(1_000_000 + i);
  junk[i % 10] = new Array(1_500).fill(i);
}
`;

test("numeric request ids leave nothing for young-generation collections to promote", () => {
  const trace = execFileSync(
    process.execPath,
    ["--trace-gc-nvp", "--import", "tsx", "--input-type=module", "-e", CHILD],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const promoted = trace
    .slice(trace.indexOf("LOOP"))
    .split("\n")
    .filter((line) => line.includes("gc=s "))
    .map((line) => Number(/ promoted=(\d+)/.exec(line)?.[1]))
    .filter(Number.isFinite);
  assert.ok(promoted.length >= 10, `too few young-generation collections: ${promoted.join(", ")}`);
  // The first collections of the loop may still promote what the start-up left young.
  const steady = promoted.slice(5);
  const total = steady.reduce((sum, bytes) => sum + bytes, 0);
  // One id's text is about 24 bytes: through the cache, most ids' texts were promoted.
  assert.ok(total < 60_000, `promoted per collection: ${steady.join(", ")} bytes`);
});
