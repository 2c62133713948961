/**
 * The contract every {@link CancellationStore} must meet, as a reusable suite: one shared
 * suite runs against the memory and the Redis store (docs/architecture.md, "How to add…"). It talks to the
 * store only through the interface, and controls time only through the `clock` it hands to
 * `makeStore` (every row it records carries `cancelledAt: clock()` as well).
 *
 * The bounds and eviction order it checks are those of docs/cancellation.md ("The cancellation registry").
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";
import type { CancellationStore, RecordOutcome } from "../../src/cancellation/types.js";
import type { CancellationSource } from "../../src/errors.js";

/** What a contract test asks of the store factory. */
export interface StoreFactoryOptions {
  maxRows?: number;
  maxRowsPerScope?: number;
  clock?: () => number;
}

/** Builds a fresh, empty store. */
export type StoreFactory = (
  options: StoreFactoryOptions,
) => Promise<CancellationStore> | CancellationStore;

/** A controllable clock: `clock.now` is the time, `clock.advance(ms)` moves it. */
interface TestClock {
  (): number;
  now: number;
  advance(ms: number): void;
}

function testClock(start = 1_700_000_000_000): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  clock.advance = (ms: number) => {
    clock.now += ms;
  };
  return clock;
}

/**
 * Registers the store contract tests under `describe(name)`.
 *
 * @example
 * ```ts
 * runCancellationStoreContract("MemoryCancellationStore", (o) => new MemoryCancellationStore(o));
 * ```
 */
export function runCancellationStoreContract(name: string, makeStore: StoreFactory): void {
  /** Runs `body` with a fresh store and a test clock, closing the store afterwards. */
  async function withStore(
    options: Omit<StoreFactoryOptions, "clock">,
    body: (store: CancellationStore, clock: TestClock, record: Recorder) => Promise<void>,
  ): Promise<void> {
    const clock = testClock();
    const store = await makeStore({ ...options, clock });
    const record: Recorder = (scope, requestId, reason = null, source = "library") =>
      store.record({ scope, requestId, reason, cancelledAt: clock() }, source);
    try {
      await body(store, clock, record);
    } finally {
      await store.close();
    }
  }

  /** Records `ids` in `scope`, one ms apart. */
  async function seed(
    record: Recorder,
    clock: TestClock,
    scope: string,
    ids: readonly string[],
  ): Promise<void> {
    for (const id of ids) {
      assert.equal(await record(scope, id), "recorded");
      clock.advance(1);
    }
  }

  function range(prefix: string, from: number, to: number): string[] {
    const out: string[] = [];
    for (let i = from; i <= to; i++) out.push(`${prefix}${i}`);
    return out;
  }

  describe(`${name}: CancellationStore contract`, () => {
    describe("rows", () => {
      it("records a row: has, reason, size", async () => {
        await withStore({}, async (store, _clock, record) => {
          assert.equal(await store.has("s", "1"), false);
          assert.equal(await store.reason("s", "1"), undefined);
          assert.equal(await record("s", "1", "timeout"), "recorded");
          assert.equal(await store.has("s", "1"), true);
          assert.equal(await store.reason("s", "1"), "timeout");
          assert.equal(await record("s", "2", null), "recorded");
          assert.equal(await store.reason("s", "2"), null, "a row without a reason answers null");
          assert.equal(await store.size(), 2);
        });
      });

      it("keys rows on (scope, id): the same id in another scope is another row", async () => {
        await withStore({}, async (store, _clock, record) => {
          await record("session:A", "1", "a");
          assert.equal(await store.has("session:A", "1"), true);
          assert.equal(await store.has("session:B", "1"), false);
          await record("session:B", "1", "b");
          assert.equal(await store.reason("session:A", "1"), "a");
          assert.equal(await store.reason("session:B", "1"), "b");
        });
      });

      it("never confuses keys whose scope and id concatenate alike", async () => {
        await withStore({}, async (store, _clock, record) => {
          await record("a:b", "c");
          await record("a\u0000b", "c");
          for (const [scope, id] of [
            ["a", "b:c"],
            ["a:", "bc"],
            ["a:b:", "c"],
            ["a", "\u0000b:c"],
            ["", "a:bc"],
          ] as const) {
            assert.equal(await store.has(scope, id), false, `${JSON.stringify([scope, id])}`);
          }
          assert.equal(await store.size(), 2);
        });
      });

      it("re-recording a key refreshes its reason and time, keeping one row", async () => {
        await withStore({}, async (store, clock, record) => {
          await record("s", "1", "first");
          clock.advance(60_000);
          await record("s", "1", "second");
          assert.equal(await store.reason("s", "1"), "second");
          assert.equal(await store.size(), 1);
          // Refreshed 0 ms ago, so a 30 s TTL keeps it (it would be 60 s old otherwise).
          assert.equal((await store.cleanup(30_000, clock())).removed, 0);
          assert.equal(await store.has("s", "1"), true);
        });
      });

      it("clear removes only that key and says whether it removed a row", async () => {
        await withStore({}, async (store, _clock, record) => {
          await record("A", "x");
          await record("B", "x");
          assert.equal(await store.clear("A", "x"), true);
          assert.equal(await store.clear("A", "x"), false, "idempotent");
          assert.equal(await store.clear("C", "nope"), false);
          assert.equal(await store.has("A", "x"), false);
          assert.equal(await store.has("B", "x"), true);
          assert.equal(await store.size(), 1);
        });
      });

      it("accepts the empty string and long, non-ASCII ids and scopes", async () => {
        await withStore({}, async (store, _clock, record) => {
          const long = "é".repeat(128);
          await record("", "");
          await record("principal:\u{1F600}", long);
          assert.equal(await store.has("", ""), true);
          assert.equal(await store.has("principal:\u{1F600}", long), true);
        });
      });
    });

    describe("per-scope quota", () => {
      it("rejects past the quota; other scopes are still served", async () => {
        await withStore({ maxRowsPerScope: 3 }, async (store, clock, record) => {
          await seed(record, clock, "attacker", ["flood-1", "flood-2", "flood-3"]);
          assert.equal(await record("attacker", "flood-4"), "limit_reached");
          assert.equal(await store.has("attacker", "flood-4"), false);
          assert.equal(await record("victim", "mine"), "recorded");
          assert.equal(await store.has("victim", "mine"), true);
        });
      });

      it("a scope at quota cannot even refresh one of its rows", async () => {
        await withStore({ maxRowsPerScope: 2 }, async (store, _clock, record) => {
          await record("s", "1", "old");
          await record("s", "2");
          assert.equal(await record("s", "1", "new"), "limit_reached");
          assert.equal(await store.reason("s", "1"), "old");
        });
      });

      it("a cleared row frees quota", async () => {
        await withStore({ maxRowsPerScope: 1 }, async (store, _clock, record) => {
          await record("s", "1");
          assert.equal(await record("s", "2"), "limit_reached");
          await store.clear("s", "1");
          assert.equal(await record("s", "2"), "recorded");
        });
      });

      it("Infinity disables the quota (300 rows in one scope)", async () => {
        await withStore(
          { maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, _clock, record) => {
            for (let i = 0; i < 300; i++) assert.equal(await record("s", `r${i}`), "recorded");
            assert.equal(await store.size(), 300);
          },
        );
      });

      it("quota is checked before the cap: 6 x 20 attacker rows under a cap of 100", async () => {
        await withStore({ maxRows: 100, maxRowsPerScope: 20 }, async (store, clock, record) => {
          for (let a = 1; a <= 6; a++)
            await seed(record, clock, `attacker-${a}`, range("f", 1, 20));
          assert.ok((await store.size()) <= 100);
          assert.equal(await record("victim", "mine"), "recorded");
          assert.equal(await store.has("victim", "mine"), true);
          await seed(record, clock, "victim", range("v", 1, 19));
          assert.equal(await record("victim", "v-over"), "limit_reached");
        });
      });
    });

    describe("global cap and eviction order", () => {
      it("max_rows=2: a, b, c all recorded; a is evicted (batch 1), c present", async () => {
        await withStore(
          { maxRows: 2, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "s", ["a", "b", "c"]);
            assert.equal(await store.size(), 2);
            assert.equal(await store.has("s", "a"), false);
            assert.equal(await store.has("s", "b"), true);
            assert.equal(await store.has("s", "c"), true);
          },
        );
      });

      it("Infinity disables the cap", async () => {
        await withStore(
          { maxRows: Number.POSITIVE_INFINITY, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "s", range("r", 1, 5));
            assert.equal(await store.size(), 5);
          },
        );
      });

      it("bystander/hog: the largest scope loses its oldest rows, the older bystander keeps its own", async () => {
        await withStore(
          { maxRows: 100, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "bystander", ["bystander-1", "bystander-2"]);
            await seed(record, clock, "hog", range("hog-", 1, 98));
            assert.equal(await record("small", "small-1"), "recorded");
            assert.equal(await store.size(), 96);
            assert.equal(await store.has("bystander", "bystander-1"), true);
            assert.equal(await store.has("bystander", "bystander-2"), true);
            for (let i = 1; i <= 5; i++) assert.equal(await store.has("hog", `hog-${i}`), false);
            for (let i = 6; i <= 98; i++) assert.equal(await store.has("hog", `hog-${i}`), true);
            assert.equal(await store.has("small", "small-1"), true);
          },
        );
      });

      it("spills into the next-largest scope; older single-row scopes are kept", async () => {
        await withStore(
          { maxRows: 100, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            for (let i = 1; i <= 91; i++) await seed(record, clock, `single-${i}`, ["only"]);
            await seed(record, clock, "small", ["small-1", "small-2"]);
            await seed(record, clock, "mid", ["mid-1", "mid-2", "mid-3"]);
            await seed(record, clock, "big", range("big-", 1, 4));
            assert.equal(await store.size(), 100);
            assert.equal(await record("caller", "mine"), "recorded");
            assert.equal(await store.size(), 96);
            for (let i = 1; i <= 4; i++) assert.equal(await store.has("big", `big-${i}`), false);
            assert.equal(await store.has("mid", "mid-1"), false);
            assert.equal(await store.has("mid", "mid-2"), true);
            assert.equal(await store.has("mid", "mid-3"), true);
            assert.equal(await store.has("small", "small-1"), true);
            assert.equal(await store.has("small", "small-2"), true);
            for (let i = 1; i <= 91; i++) {
              assert.equal(await store.has(`single-${i}`, "only"), true, `single-${i}`);
            }
            assert.equal(await store.has("caller", "mine"), true);
          },
        );
      });

      it("all one-row scopes: eviction is purely oldest-first", async () => {
        await withStore(
          { maxRows: 100, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            // Recorded newest-name-first would still evict by age: use a shuffled name order.
            const order = range("", 1, 100).map(Number);
            for (let i = 0; i < order.length; i++) {
              const j = (i * 37) % order.length;
              [order[i], order[j]] = [order[j] as number, order[i] as number];
            }
            const ageRank = new Map<number, number>();
            for (const [rank, n] of order.entries()) {
              ageRank.set(n, rank);
              await seed(record, clock, `scope-${n}`, ["id"]);
            }
            await record("caller", "mine");
            assert.equal(await store.size(), 96);
            for (const [n, rank] of ageRank) {
              assert.equal(await store.has(`scope-${n}`, "id"), rank >= 5, `scope-${n}`);
            }
          },
        );
      });

      it("the caller's own scope is evicted first when it is the largest", async () => {
        await withStore(
          { maxRows: 20, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "other", ["o1", "o2"]);
            await seed(record, clock, "me", range("m", 1, 18));
            assert.equal(await record("me", "m19"), "recorded");
            assert.equal(await store.has("me", "m1"), false, "batch = 1: my oldest row goes");
            assert.equal(await store.has("other", "o1"), true);
            assert.equal(await store.size(), 20);
          },
        );
      });

      it("re-recording at the cap still evicts a batch, then refreshes the row", async () => {
        await withStore(
          { maxRows: 3, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "s", ["a", "b", "c"]);
            assert.equal(await record("s", "c", "again"), "recorded");
            assert.equal(await store.has("s", "a"), false);
            assert.equal(await store.reason("s", "c"), "again");
            assert.equal(await store.size(), 2);
          },
        );
      });

      it("equal-sized scopes: the older row goes first, whatever the scope name", async () => {
        await withStore(
          { maxRows: 4, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            await seed(record, clock, "z", ["old"]);
            await seed(record, clock, "a", ["1"]);
            await seed(record, clock, "z", ["new"]);
            await seed(record, clock, "a", ["2"]);
            await record("caller", "x");
            assert.equal(await store.has("z", "old"), false);
            assert.equal(await store.has("a", "1"), true);
          },
        );
      });

      it("equal sizes and times: the scope breaks the tie, by code point (not UTF-16 units)", async () => {
        await withStore(
          { maxRows: 4, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            // One millisecond for all four rows. By UTF-16 units "\u{1F600}" < "\uFFFF"; by
            // code point (and UTF-8 bytes, the stores' order) "\uFFFF" is smaller.
            for (const scope of ["\u{1F600}", "\uFFFF"]) {
              await record(scope, "1");
              await record(scope, "2");
            }
            clock.advance(1);
            await record("caller", "x");
            assert.equal(await store.has("\uFFFF", "1"), false);
            assert.equal(await store.has("\u{1F600}", "1"), true);
            assert.equal(await store.size(), 4);
          },
        );
      });

      it("same scope and time: the id breaks the tie, by code point", async () => {
        await withStore(
          { maxRows: 4, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            for (const id of ["\u{10001}", "\u{10000}", "\uE001", "\uE000"]) await record("s", id);
            clock.advance(1);
            await record("caller", "x");
            assert.equal(await store.has("s", "\uE000"), false);
            assert.equal(await store.has("s", "\u{10000}"), true);
            clock.advance(1);
            await record("caller", "y");
            assert.equal(await store.has("s", "\uE001"), false);
            assert.equal(await store.has("s", "\u{10000}"), true);
          },
        );
      });

      it("equal sizes: the batch merges the oldest rows across the tied scopes", async () => {
        await withStore(
          { maxRows: 40, maxRowsPerScope: Number.POSITIVE_INFINITY },
          async (store, clock, record) => {
            // Scopes p, q, r hold 10 rows each, interleaved in time; s holds 10 newer ones.
            for (let i = 0; i < 10; i++) {
              for (const scope of ["r", "q", "p"]) {
                await record(scope, `${i}`);
                clock.advance(1);
              }
            }
            await seed(record, clock, "s", range("", 0, 9));
            await record("caller", "x"); // batch 2: (r,0) then (q,0)
            assert.equal(await store.has("r", "0"), false);
            assert.equal(await store.has("q", "0"), false);
            assert.equal(await store.has("p", "0"), true);
            assert.equal(await store.has("s", "0"), true);
            assert.equal(await store.size(), 39);
          },
        );
      });
    });

    describe("in-flight entries", () => {
      it("add, check, remove; the key is (scope, id)", async () => {
        await withStore({}, async (store) => {
          await store.addInFlight("a", "7", "h1");
          assert.equal(await store.isInFlight("a", "7"), true);
          assert.equal(await store.isInFlight("b", "7"), false);
          assert.equal(await store.isInFlight("a", "70"), false);
          await store.removeInFlight("a", "7", "h1");
          assert.equal(await store.isInFlight("a", "7"), false);
        });
      });

      it("several handles share a key; removing one leaves the others in flight", async () => {
        await withStore({}, async (store) => {
          await store.addInFlight("s", "dup", "h1");
          await store.addInFlight("s", "dup", "h2");
          await store.addInFlight("s", "dup", "h3");
          await store.removeInFlight("s", "dup", "h2");
          assert.equal(await store.isInFlight("s", "dup"), true);
          await store.removeInFlight("s", "dup", "h1");
          assert.equal(await store.isInFlight("s", "dup"), true);
          await store.removeInFlight("s", "dup", "h3");
          assert.equal(await store.isInFlight("s", "dup"), false);
        });
      });

      it("removing an unknown handle or key is a no-op", async () => {
        await withStore({}, async (store) => {
          await store.addInFlight("s", "k", "h1");
          await store.removeInFlight("s", "k", "other");
          await store.removeInFlight("s", "nope", "h1");
          await store.removeInFlight("nope", "k", "h1");
          assert.equal(await store.isInFlight("s", "k"), true);
          await store.removeInFlight("s", "k", "h1");
          await store.removeInFlight("s", "k", "h1");
          assert.equal(await store.isInFlight("s", "k"), false);
        });
      });

      it("in-flight entries are not cancellation rows", async () => {
        await withStore({}, async (store) => {
          await store.addInFlight("s", "k", "h1");
          assert.equal(await store.has("s", "k"), false);
          assert.equal(await store.size(), 0);
        });
      });
    });

    describe("cleanup", () => {
      it("removes rows strictly older than the TTL and counts them", async () => {
        await withStore({}, async (store, clock, record) => {
          await record("s", "stale");
          clock.advance(30_000);
          await record("s", "edge");
          clock.advance(30_000);
          await record("s", "fresh");
          // stale is 60 s old, edge exactly 30 s: only stale goes (strictly greater).
          const result = await store.cleanup(30_000, clock());
          assert.equal(result.removed, 1);
          assert.equal(await store.has("s", "stale"), false);
          assert.equal(await store.has("s", "edge"), true);
          assert.equal(await store.has("s", "fresh"), true);
          clock.advance(1);
          assert.equal((await store.cleanup(30_000, clock())).removed, 1);
          assert.equal(await store.has("s", "edge"), false);
          assert.equal(await store.size(), 1);
        });
      });

      it("cleanup frees quota and keeps in-flight entries of live handles", async () => {
        await withStore({ maxRowsPerScope: 1 }, async (store, clock, record) => {
          await store.addInFlight("s", "1", "h1");
          await record("s", "1");
          clock.advance(10);
          assert.equal((await store.cleanup(5, clock())).removed, 1);
          assert.equal(await record("s", "2"), "recorded");
          assert.equal(await store.isInFlight("s", "1"), true);
        });
      });
    });

    describe("lifecycle", () => {
      it("never announces its own cancellations as remote ones", async () => {
        await withStore({}, async (store, _clock, record) => {
          const heard: unknown[] = [];
          const unsubscribe = store.onRemoteCancellation((event) => heard.push(event));
          assert.equal(typeof unsubscribe, "function");
          await record("s", "1", "why", "notification");
          await new Promise((resolve) => setTimeout(resolve, 50));
          unsubscribe();
          assert.deepEqual(heard, []);
        });
      });

      it("close is idempotent; afterwards operations reject with CONDUIT_ERR_STORE_CLOSED", async () => {
        const clock = testClock();
        const store = await makeStore({ clock });
        await store.close();
        await store.close();
        await assert.rejects(
          store.record(
            { scope: "s", requestId: "1", reason: null, cancelledAt: clock() },
            "library",
          ),
          { code: "CONDUIT_ERR_STORE_CLOSED" },
        );
      });
    });

    describe("property: random histories against a naive sort-based model", () => {
      it("holds the cap, the quota, serves scopes under quota and evicts the model's rows", async () => {
        await fc.assert(
          fc.asyncProperty(historyArbitrary(), async ({ maxRows, maxRowsPerScope, ops }) => {
            await withStore({ maxRows, maxRowsPerScope }, async (store, clock) => {
              const model = new ReferenceModel(maxRows, maxRowsPerScope);
              for (const op of ops) {
                clock.advance(op.dt);
                await applyOp(store, model, op, clock());
                for (const scope of SCOPES) {
                  for (const id of IDS) {
                    assert.equal(
                      await store.has(scope, id),
                      model.has(scope, id),
                      `row (${JSON.stringify(scope)}, ${JSON.stringify(id)})`,
                    );
                  }
                }
                assert.equal(await store.size(), model.size);
              }
            });
          }),
          { numRuns: 60 },
        );
      });
    });
  });
}

type Recorder = (
  scope: string,
  requestId: string,
  reason?: string | null,
  source?: CancellationSource,
) => Promise<RecordOutcome>;

/** Scopes and ids of the random histories: few, so keys collide and ties happen. */
export const SCOPES = ["a", "b", "\uFFFF", "\u{1F600}"] as const;
export const IDS = ["1", "2", "x", "\uE000", "\u{10000}"] as const;

/** One step of a random history. `dt` moves the clock first (negative: it steps back). */
export interface HistoryOp {
  readonly kind: "cancel" | "clear";
  readonly scope: string;
  readonly id: string;
  readonly dt: number;
}

/** A random configuration plus history over {@link SCOPES} × {@link IDS}. */
export function historyArbitrary(
  scopes: readonly string[] = SCOPES,
  ids: readonly string[] = IDS,
  maxLength = 40,
): fc.Arbitrary<{ maxRows: number; maxRowsPerScope: number; ops: HistoryOp[] }> {
  const limit = (max: number) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max }) },
      { weight: 1, arbitrary: fc.constant(Number.POSITIVE_INFINITY) },
    );
  return fc.record({
    maxRows: limit(Math.max(2, Math.floor((scopes.length * ids.length) / 2))),
    maxRowsPerScope: limit(ids.length),
    ops: fc.array(
      fc.record({
        kind: fc.oneof(
          { weight: 4, arbitrary: fc.constant("cancel" as const) },
          { weight: 1, arbitrary: fc.constant("clear" as const) },
        ),
        scope: fc.constantFrom(...scopes),
        id: fc.constantFrom(...ids),
        // Mostly 0 or 1 ms (ties), sometimes a step back (the store clamps it).
        dt: fc.constantFrom(0, 0, 0, 1, 1, 2, 5, -3),
      }),
      { maxLength },
    ),
  });
}

/**
 * Applies one history step to the store and the model, checking the outcome and the
 * invariants: the cap holds, no scope exceeds its quota, a scope under quota is served.
 */
export async function applyOp(
  store: CancellationStore,
  model: ReferenceModel,
  op: HistoryOp,
  now: number,
): Promise<void> {
  if (op.kind === "clear") {
    assert.equal(await store.clear(op.scope, op.id), model.clear(op.scope, op.id));
    return;
  }
  const underQuota = model.count(op.scope) < model.maxRowsPerScope;
  const expected = model.record(op.scope, op.id, now);
  const outcome = await store.record(
    { scope: op.scope, requestId: op.id, reason: null, cancelledAt: now },
    "library",
  );
  assert.equal(outcome, expected, `record(${JSON.stringify(op)})`);
  if (underQuota) assert.equal(outcome, "recorded", "a scope under its quota is always served");
  assert.ok(model.size <= model.maxRows, "the table never exceeds the cap");
  for (const scope of new Set(model.rows.map((row) => row.scope))) {
    assert.ok(model.count(scope) <= model.maxRowsPerScope, "no scope exceeds its quota");
  }
}

interface ModelRow {
  scope: string;
  id: string;
  at: number;
}

/** Code points of a string (lone surrogates as their own): the model's string order. */
function codePoints(text: string): number[] {
  return Array.from(text, (char) => char.codePointAt(0) ?? 0);
}

function compareArrays(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * The reference model, written as plainly as possible: on a
 * cancel, the quota check, then at the cap a full sort by `(-count, at, scope, id)` and the
 * deletion of the first `max(1, floor(maxRows / 20))` rows, then the upsert. Stamps are
 * `max(clock, last stamp)`, the stores' non-decreasing clock.
 */
export class ReferenceModel {
  rows: ModelRow[] = [];
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly maxRows: number,
    readonly maxRowsPerScope: number,
  ) {}

  get size(): number {
    return this.rows.length;
  }

  count(scope: string): number {
    return this.rows.filter((row) => row.scope === scope).length;
  }

  has(scope: string, id: string): boolean {
    return this.rows.some((row) => row.scope === scope && row.id === id);
  }

  clear(scope: string, id: string): boolean {
    const before = this.rows.length;
    this.rows = this.rows.filter((row) => !(row.scope === scope && row.id === id));
    return this.rows.length !== before;
  }

  record(scope: string, id: string, now: number): RecordOutcome {
    if (this.count(scope) >= this.maxRowsPerScope) return "limit_reached";
    if (this.rows.length >= this.maxRows) {
      const counts = new Map<string, number>();
      for (const row of this.rows) counts.set(row.scope, (counts.get(row.scope) ?? 0) + 1);
      const sorted = [...this.rows].sort(
        (x, y) =>
          (counts.get(y.scope) ?? 0) - (counts.get(x.scope) ?? 0) ||
          x.at - y.at ||
          compareArrays(codePoints(x.scope), codePoints(y.scope)) ||
          compareArrays(codePoints(x.id), codePoints(y.id)),
      );
      const batch = Math.max(1, Math.floor(this.maxRows / 20));
      const evicted = new Set(sorted.slice(0, batch));
      this.rows = this.rows.filter((row) => !evicted.has(row));
    }
    this.lastAt = Math.max(now, this.lastAt);
    this.clear(scope, id);
    this.rows.push({ scope, id, at: this.lastAt });
    return "recorded";
  }
}
