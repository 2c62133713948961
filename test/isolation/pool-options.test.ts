import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { WorkerPool } from "../../src/isolation/index.js";
import { resolvePoolOptions } from "../../src/isolation/pool-options.js";

test("defaults: one core fewer than available (at least 1), queue 1000 (16 per scope), half the workers per scope, idle 30 s, no limits", () => {
  const maxWorkers = Math.max(1, availableParallelism() - 1);
  assert.deepEqual(resolvePoolOptions(), {
    maxWorkers,
    maxQueue: 1000,
    maxWorkersPerScope: Math.ceil(maxWorkers / 2),
    maxQueuePerScope: 16,
    idleTimeoutMs: 30_000,
    resourceLimits: undefined,
  });
  // Constructing a pool starts no thread.
  assert.equal(new WorkerPool().size, 0);
});

test("accepted values", () => {
  const options = resolvePoolOptions({
    maxWorkers: 3,
    maxQueue: 0,
    idleTimeoutMs: Number.POSITIVE_INFINITY,
    resourceLimits: { maxOldGenerationSizeMb: 64, stackSizeMb: 4 },
  });
  assert.equal(options.maxWorkers, 3);
  assert.equal(options.maxQueue, 0);
  assert.equal(options.idleTimeoutMs, Number.POSITIVE_INFINITY);
  assert.deepEqual(options.resourceLimits, { maxOldGenerationSizeMb: 64, stackSizeMb: 4 });
  assert.equal(
    resolvePoolOptions({ maxQueue: Number.POSITIVE_INFINITY }).maxQueue,
    Number.POSITIVE_INFINITY,
  );
  assert.equal(resolvePoolOptions({ idleTimeoutMs: 0 }).idleTimeoutMs, 0);
});

test("bad values fail at construction with InvalidOptionError naming the option", () => {
  const bad: Array<[string, unknown]> = [
    ["maxWorkers", 0],
    ["maxWorkers", 1.5],
    ["maxWorkers", Number.POSITIVE_INFINITY],
    ["maxWorkers", "2"],
    ["maxQueue", -1],
    ["maxQueue", Number.NaN],
    ["idleTimeoutMs", -1],
    ["idleTimeoutMs", 2 ** 31],
    ["idleTimeoutMs", Number.NaN],
    ["resourceLimits", 64],
    ["resourceLimits", []],
  ];
  for (const [option, value] of bad) {
    assert.throws(
      () => new WorkerPool({ [option]: value }),
      (error) => error instanceof InvalidOptionError && error.option === option,
      `${option} = ${String(value)}`,
    );
  }
  assert.throws(
    () => new WorkerPool({ resourceLimits: { maxOldGenerationSizeMb: -1 } }),
    (error) =>
      error instanceof InvalidOptionError &&
      error.option === "resourceLimits.maxOldGenerationSizeMb",
  );
  assert.throws(
    () => new WorkerPool({ resourceLimits: { heapMb: 1 } as never }),
    (error) => error instanceof InvalidOptionError && error.option === "resourceLimits.heapMb",
  );
  assert.throws(() => new WorkerPool(null as never), InvalidOptionError);
});
