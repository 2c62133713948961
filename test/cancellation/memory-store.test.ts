import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { MemoryCancellationStore } from "../../src/cancellation/memory-store.js";
import { InvalidOptionError } from "../../src/errors.js";
import {
  applyOp,
  historyArbitrary,
  ReferenceModel,
  runCancellationStoreContract,
} from "./store-contract.js";

runCancellationStoreContract(
  "MemoryCancellationStore",
  (options) => new MemoryCancellationStore(options),
);

describe("MemoryCancellationStore", () => {
  it("defaults to the documented bounds: 10 000 rows, 256 per scope", () => {
    const store = new MemoryCancellationStore();
    assert.equal(store.maxRows, 10_000);
    assert.equal(store.maxRowsPerScope, 256);
  });

  it("rejects bad bounds and clocks at construction", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.NEGATIVE_INFINITY, "10", null, 2 ** 53]) {
      assert.throws(
        () => new MemoryCancellationStore({ maxRows: bad as number }),
        (error) => {
          assert.ok(error instanceof InvalidOptionError);
          assert.equal(error.option, "maxRows");
          return true;
        },
      );
      assert.throws(
        () => new MemoryCancellationStore({ maxRowsPerScope: bad as number }),
        (error) => error instanceof InvalidOptionError && error.option === "maxRowsPerScope",
      );
    }
    assert.throws(
      () => new MemoryCancellationStore({ clock: 5 as unknown as () => number }),
      (error) => error instanceof InvalidOptionError && error.option === "clock",
    );
    const open = new MemoryCancellationStore({
      maxRows: Number.POSITIVE_INFINITY,
      maxRowsPerScope: Number.POSITIVE_INFINITY,
    });
    assert.equal(open.maxRows, Number.POSITIVE_INFINITY);
  });

  it("stamps rows with a clock that never goes back", async () => {
    let now = 1_000;
    const store = new MemoryCancellationStore({ clock: () => now });
    await store.record({ scope: "s", requestId: "1", reason: null, cancelledAt: 0 }, "library");
    now = 400; // the clock steps back
    await store.record({ scope: "s", requestId: "2", reason: "r", cancelledAt: 0 }, "library");
    assert.deepEqual(
      store.rows().map((row) => [row.requestId, row.cancelledAt, row.reason]),
      [
        ["1", 1_000, null],
        ["2", 1_000, "r"],
      ],
    );
    // cleanup is relative to the stamps: at 1 500 with a 499 ms TTL both are stale.
    assert.equal((await store.cleanup(499, 1_500)).removed, 2);
  });

  it("rows() lists the table oldest first, a refreshed row last", async () => {
    let now = 10;
    const store = new MemoryCancellationStore({ clock: () => now });
    for (const id of ["a", "b", "c"]) {
      await store.record({ scope: "s", requestId: id, reason: null, cancelledAt: now }, "library");
      now++;
    }
    await store.record(
      { scope: "s", requestId: "a", reason: "again", cancelledAt: now },
      "library",
    );
    assert.deepEqual(
      store.rows().map((row) => row.requestId),
      ["b", "c", "a"],
    );
  });

  it("cleanup stops at the first fresh row (does not look past it)", async () => {
    let now = 0;
    const store = new MemoryCancellationStore({ clock: () => now, maxRowsPerScope: 10_000 });
    for (let i = 0; i < 5_000; i++) {
      await store.record(
        { scope: "s", requestId: String(i), reason: null, cancelledAt: now },
        "library",
      );
      now++;
    }
    const started = performance.now();
    for (let i = 0; i < 2_000; i++) await store.cleanup(1_000_000, now);
    // 2 000 no-op sweeps over a 5 000-row table: a full scan each would be 10 M row visits.
    assert.ok(performance.now() - started < 500, "no-op sweeps are O(1)");
    assert.equal((await store.cleanup(10, now)).removed, 4_990);
  });

  it("evicts exactly the model's rows on larger random histories (many scopes, long runs)", async () => {
    const scopes = ["a", "b", "c", "d", "e", "f", "\uFFFF", "\u{1F600}"];
    const ids = ["1", "2", "3", "4", "5", "6", "\uE000", "\u{10000}"];
    await fc.assert(
      fc.asyncProperty(
        historyArbitrary(scopes, ids, 150),
        async ({ maxRows, maxRowsPerScope, ops }) => {
          let now = 0;
          const store = new MemoryCancellationStore({ maxRows, maxRowsPerScope, clock: () => now });
          const model = new ReferenceModel(maxRows, maxRowsPerScope);
          for (const op of ops) {
            now += op.dt;
            await applyOp(store, model, op, now);
            const actual = store.rows().map((row) => [row.scope, row.requestId, row.cancelledAt]);
            const expected = model.rows.map((row) => [row.scope, row.id, row.at]);
            assert.deepEqual(actual, expected);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
