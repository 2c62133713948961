/**
 * IntrusiveList (src/protocol/wire/intrusive-list.ts), the dispatcher's list of running calls: adds
 * and removes from the head, the middle and the tail, keeps its size, ignores a second add or
 * delete, and copies its items so that they can be removed while the copy is walked.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { IntrusiveList, type Listed } from "../../src/protocol/wire/intrusive-list.js";

class Item implements Listed<Item> {
  listPrev: Item | null = null;
  listNext: Item | null = null;
  listed = false;
  constructor(readonly n: number) {}
}

const numbers = (list: IntrusiveList<Item>) => list.toArray().map((item) => item.n);

test("add, delete anywhere, size, and no double add or delete", () => {
  const list = new IntrusiveList<Item>();
  const items = [0, 1, 2, 3, 4].map((n) => new Item(n));
  for (const item of items) list.add(item);
  list.add(items[2] as Item); // already in
  assert.equal(list.size, 5);
  assert.deepEqual(numbers(list), [4, 3, 2, 1, 0], "newest first");
  assert.equal(list.delete(items[2] as Item), true); // middle
  assert.equal(list.delete(items[4] as Item), true); // head
  assert.equal(list.delete(items[0] as Item), true); // tail
  assert.equal(list.delete(items[0] as Item), false, "not in the list any more");
  assert.deepEqual(numbers(list), [3, 1]);
  assert.equal(list.size, 2);
  list.add(items[0] as Item); // back in, at the head
  assert.deepEqual(numbers(list), [0, 3, 1]);
  for (const item of list.toArray()) list.delete(item); // removed while the copy is walked
  assert.equal(list.size, 0);
  assert.deepEqual(numbers(list), []);
  assert.ok(
    items.every((item) => !item.listed && item.listPrev === null && item.listNext === null),
  );
});

test("many calls in and out keep the count and the links right", () => {
  const list = new IntrusiveList<Item>();
  const live = new Set<Item>();
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed;
  };
  const pool = Array.from({ length: 40 }, (_, n) => new Item(n));
  for (let step = 0; step < 5_000; step++) {
    const item = pool[next() % pool.length] as Item;
    if (live.has(item)) {
      assert.equal(list.delete(item), true);
      live.delete(item);
    } else {
      list.add(item);
      live.add(item);
    }
    assert.equal(list.size, live.size);
  }
  assert.deepEqual(new Set(list.toArray()), live);
});
