/**
 * SteadyMap (src/steady-table.ts) reads exactly as a Map would, while its hidden entry keeps the
 * hash table when it empties: size, lookups and iteration never show it, through any number of
 * fill-and-empty cycles.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { SteadyMap } from "../src/steady-table.js";

test("SteadyMap: size, get, has, set, delete and iteration read as a Map's", () => {
  const map = new SteadyMap<string, number>();
  const plain = new Map<string, number>();
  assert.equal(map.size, 0);
  assert.deepEqual([...map.values()], []);
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i <= round % 7; i++) {
      map.set(`k${i}`, round * 10 + i);
      plain.set(`k${i}`, round * 10 + i);
    }
    assert.equal(map.size, plain.size);
    assert.deepEqual([...map.values()], [...plain.values()], "values in insertion order");
    for (const key of plain.keys()) assert.equal(map.get(key), plain.get(key));
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
