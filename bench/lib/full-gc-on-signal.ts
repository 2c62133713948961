/**
 * Preloaded into a benchmark target by bench/after-idle.ts (`node --expose-gc --import <this,
 * bundled>`): on SIGUSR2 the process runs two full collections, as V8's memory reducer does in a
 * server's idle time (Node docs, "Command-line options": `--expose-gc`), and prints how long they
 * took on stderr. Nothing else in the target changes.
 */
process.on("SIGUSR2", () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("full-gc-on-signal needs node --expose-gc");
  const started = performance.now();
  gc();
  gc();
  process.stderr.write(`full-gc-on-signal: ${(performance.now() - started).toFixed(1)} ms\n`);
});
