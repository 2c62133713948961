/**
 * SteadyMap and SteadySet (src/steady-table.ts) read exactly as a Map and a Set would, while
 * their hidden entry keeps the hash table when they empty: size, lookups and iteration never show
 * it, through any number of fill-and-empty cycles.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { SteadyMap, SteadySet } from "../src/steady-table.js";

test("SteadyMap: size, get, has, set, delete and iteration read as a Map's", () => {
  const map = new SteadyMap<string, number>();
  const plain = new Map<string, number>();
  assert.equal(map.size, 0);
  assert.deepEqual([...map.values()], []);
  assert.deepEqual([...map.entries()], []);
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i <= round % 7; i++) {
      map.set(`k${i}`, round * 10 + i);
      plain.set(`k${i}`, round * 10 + i);
    }
    assert.equal(map.size, plain.size);
    assert.deepEqual([...map.entries()], [...plain.entries()]);
    assert.deepEqual([...map.values()], [...plain.values()]);
    assert.equal(map.get("k0"), plain.get("k0"));
    assert.equal(map.has("k0"), true);
    for (const key of [...plain.keys()]) {
      assert.equal(map.delete(key), plain.delete(key));
    }
    assert.equal(map.delete("k0"), false, "already gone");
    assert.equal(map.size, 0);
    assert.deepEqual([...map.values()], []);
    assert.equal(map.has("k0"), false);
    assert.equal(map.get("k0"), undefined);
  }
});

test("SteadySet: size, has, add, delete and iteration read as a Set's", () => {
  const set = new SteadySet<object>();
  const calls = [{}, {}, {}];
  assert.equal(set.size, 0);
  assert.deepEqual([...set], []);
  for (let round = 0; round < 50; round++) {
    for (const call of calls) set.add(call);
    set.add(calls[0] as object); // a second add changes nothing
    assert.equal(set.size, 3);
    assert.deepEqual([...set], calls, "insertion order, no hidden entry");
    assert.deepEqual([...set.values()], calls);
    assert.equal(set.has(calls[1] as object), true);
    for (const call of calls) assert.equal(set.delete(call), true);
    assert.equal(set.delete(calls[0] as object), false);
    assert.equal(set.size, 0);
    assert.deepEqual([...set], []);
  }
});

test("SteadySet: iterating while deleting (as abortAll's listeners may) visits what a Set would", () => {
  const set = new SteadySet<number>();
  for (let i = 0; i < 5; i++) set.add(i);
  const seen: number[] = [];
  for (const value of set) {
    seen.push(value);
    set.delete(value);
  }
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.equal(set.size, 0);
});
