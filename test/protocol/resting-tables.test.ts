/**
 * The per-scope tables of the request path keep the one scope table that last emptied (so calls
 * that follow one another do not rebuild it) and no other: the scope limiter's counters, the
 * registry's handles and the memory store's in-flight entries stay bounded by the scopes holding
 * something plus one, and every count reads as before.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { CancellationRegistry, MemoryCancellationStore } from "../../src/cancellation/index.js";
import { ACQUIRED, SCOPE_LIMIT, ScopeLimiter } from "../../src/protocol/asking/scope-limiter.js";

/** The size of a private table (the bound under test has no public reading). */
function tableSize(owner: object, field: string): number {
  return (owner as unknown as Record<string, Map<unknown, unknown>>)[field]?.size ?? -1;
}

test("scope limiter: a scope back at 0 rests in place of the last one; bounds and counts unchanged", () => {
  const limiter = new ScopeLimiter(2, 3);
  for (let i = 0; i < 1_000; i++) {
    const scope = `ip:10.0.${i >> 8}.${i & 255}`;
    assert.equal(limiter.tryAcquire(scope), ACQUIRED);
    limiter.release(scope);
    assert.ok(tableSize(limiter, "counts") <= 1, "at most the one resting entry");
  }
  assert.equal(limiter.scopes, 0);
  assert.equal(limiter.total, 0);
  // The resting scope comes back: counted from 0, bounded as any other.
  assert.equal(limiter.tryAcquire("ip:10.0.3.231"), ACQUIRED);
  assert.equal(limiter.tryAcquire("ip:10.0.3.231"), ACQUIRED);
  assert.equal(limiter.tryAcquire("ip:10.0.3.231"), SCOPE_LIMIT);
  assert.equal(limiter.scopes, 1);
  assert.equal(limiter.count("ip:10.0.3.231"), 2);
  limiter.release("ip:10.0.3.231");
  limiter.release("ip:10.0.3.231");
  limiter.release("ip:10.0.3.231"); // one too many: never below 0
  assert.equal(limiter.count("ip:10.0.3.231"), 0);
  assert.equal(limiter.total, 0);
  assert.equal(limiter.scopes, 0);
  // A release of a scope that rests does not free a unit of another.
  assert.equal(limiter.tryAcquire("ip:a"), ACQUIRED);
  limiter.release("ip:10.0.3.231");
  assert.equal(limiter.total, 1);
  assert.equal(limiter.scopes, 1);
});

test("registry and memory store: one empty scope table at most, cancels still reach the calls", async () => {
  const store = new MemoryCancellationStore();
  const registry = new CancellationRegistry({ store, janitor: false });
  for (let i = 0; i < 500; i++) {
    const handle = await registry.track(i, `ip:scope-${i}`);
    await registry.untrack(handle);
    assert.ok(tableSize(registry, "handles") <= 1);
    assert.ok(tableSize(store, "inFlight") <= 1);
  }
  assert.equal(registry.inFlightCount, 0);
  // The resting scope and a new one: tracked, in flight, cancelled as ever.
  const again = await registry.track(7, "ip:scope-499");
  const other = await registry.track(7, "ip:scope-new");
  assert.equal(await registry.isInFlight(7, "ip:scope-499"), true);
  assert.equal(await store.isInFlight("ip:scope-499", "7"), true);
  await registry.cancel(7, "stop", "ip:scope-499");
  assert.equal(again.aborted, true);
  assert.equal(other.aborted, false, "another scope's namesake keeps running");
  await registry.untrack(again);
  await registry.untrack(other);
  assert.equal(await registry.isInFlight(7, "ip:scope-new"), false);
  assert.equal(await store.isInFlight("ip:scope-new", "7"), false);
  assert.ok(tableSize(registry, "handles") <= 1);
  assert.ok(tableSize(store, "inFlight") <= 1);
  await registry.close();
});
