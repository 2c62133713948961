/**
 * `npm run bench:instructions` reads callgrind's dump of the server's main thread: the `totals:`
 * line is the count, and the self cost per function (the cost line after `calls=` is the call's
 * inclusive cost, not the caller's own) is the breakdown, with JIT code, which callgrind knows
 * only by address, named through node's `--perf-basic-prof` map (the later line wins where V8
 * reused the space). The format: https://valgrind.org/docs/manual/cl-format.html.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { readCallgrind, topSelf, UNNAMED_CODE } from "../../bench/lib/callgrind.js";
import { readPerfMap } from "../../bench/lib/perf-map.js";

// Written by hand in the shape callgrind 3.19 dumps with `--separate-threads=yes`: compressed
// names (`fn=(2)` refers to the name `cfn=(2) helper` defined), relative positions, two calls
// whose inclusive costs must not count as `main`'s own, JIT code named by address, a recursion
// level (`helper'2`), and a file id (`fl=(1)`) that shares its number with a function id.
const DUMP = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  node --import tsx bench/lib/bare-server.ts
part: 1
thread: 1

desc: Trigger: dump

positions: line
events: Ir
summary: 0


ob=(1) /usr/bin/node
fl=(1) ./src/main.c
fn=(1) main
10 100
+2 50
cfl=(1)
cfn=(2) helper
calls=3 20
* 900
-1 7
cfn=(3) 0x0000000000001010
calls=1 0
12 400

fn=(2)
20 300
cfn=(4) helper'2
calls=1 21
* 600

fn=(4)
21 600

fn=(3)
0 380

fn=(5) 0x0000000000002000'2
0 20

totals: 1457
`;

test("readCallgrind: totals, and self costs without the calls' inclusive costs", () => {
  const profile = readCallgrind(DUMP);
  assert.deepEqual(profile.events, ["Ir"]);
  assert.equal(profile.totals, 1457);
  assert.deepEqual(Object.fromEntries(profile.self), {
    main: 157,
    helper: 300,
    "helper'2": 600,
    "0x0000000000001010": 380,
    "0x0000000000002000'2": 20,
  });
  // Self costs add up to the totals: nothing counted twice, nothing lost.
  assert.equal(
    [...profile.self.values()].reduce((a, b) => a + b, 0),
    profile.totals,
  );
});

test("readCallgrind: the costs stand after every position column; a missing cost is 0", () => {
  const text = [
    "positions: instr line",
    "events: Ir Dr",
    "fn=(1) f",
    "0x10 5 30 4",
    "+4 * 12",
    "+2 6",
    "totals: 42 4",
  ].join("\n");
  const profile = readCallgrind(text);
  assert.deepEqual(profile.events, ["Ir", "Dr"]);
  assert.equal(profile.totals, 42);
  assert.equal(profile.self.get("f"), 42);
});

test("readCallgrind: every event's total by name (cache simulation), a missing one 0", () => {
  const text = ["events: Ir Dr Dw I1mr D1mr", "fn=(1) f", "3 10 4 2 1", "totals: 10 4 2 1"].join(
    "\n",
  );
  const profile = readCallgrind(text);
  assert.equal(profile.totals, 10);
  assert.deepEqual(
    [...profile.totalsByEvent],
    [
      ["Ir", 10],
      ["Dr", 4],
      ["Dw", 2],
      ["I1mr", 1],
      ["D1mr", 0],
    ],
  );
});

test("readCallgrind: a dump without totals (cut short) is an error", () => {
  assert.throws(() => readCallgrind(DUMP.replace(/^totals:.*$/m, "")), /no totals/);
});

test("readPerfMap: the code covering an address, the later line where two cover it", () => {
  const map = readPerfMap(
    [
      "1000 20 JS:*handle file:///w/dist/http/endpoint.js:40:3",
      "2000 100 JS:~old file:///w/dist/a.js:1:1",
      "not a map line",
      "2040 10 JS:*new file:///w/dist/b.js:2:2",
      "0x3000 0x8 Builtin:CallFunction",
    ].join("\n"),
  );
  assert.equal(map.size, 4);
  assert.equal(map.nameAt(0x1000), "JS:*handle file:///w/dist/http/endpoint.js:40:3");
  assert.equal(map.nameAt(0x101f), "JS:*handle file:///w/dist/http/endpoint.js:40:3");
  assert.equal(map.nameAt(0x1020), null, "the end is exclusive");
  assert.equal(map.nameAt(0xfff), null);
  // 0x2045 lies in both the long old entry and the newer one written over part of it.
  assert.equal(map.nameAt(0x2045), "JS:*new file:///w/dist/b.js:2:2");
  assert.equal(map.nameAt(0x2050), "JS:~old file:///w/dist/a.js:1:1");
  assert.equal(map.nameAt(0x2030), "JS:~old file:///w/dist/a.js:1:1");
  assert.equal(map.nameAt(0x3007), "Builtin:CallFunction");
  assert.equal(readPerfMap("").nameAt(0x1000), null);
});

test("readPerfMap: an older line does not win over a later one that starts at the same place", () => {
  const map = readPerfMap("5000 40 JS:~first\n5000 40 JS:*second\n");
  assert.equal(map.nameAt(0x5010), "JS:*second");
});

test("topSelf: recursion levels merged, JIT code named through the map, the rest summed", () => {
  const map = readPerfMap(
    "1000 20 JS:*handle file:///w/dist/http/endpoint.js:40:3\n2000 10 JS:~tiny x.js:1:1\n",
  );
  const rows = topSelf(readCallgrind(DUMP), {
    top: 2,
    nameAt: (address) => (address === 0x2000 ? null : map.nameAt(address)),
    shorten: (name) => name.replace("file:///w/", ""),
  });
  assert.deepEqual(rows, [
    { name: "helper", self: 900 },
    { name: "JS:*handle dist/http/endpoint.js:40:3", self: 380 },
    { name: "(2 other functions)", self: 177 },
  ]);
  const all = topSelf(readCallgrind(DUMP), { top: 10 });
  assert.deepEqual(
    all.map((row) => row.name),
    ["helper", UNNAMED_CODE, "main"],
  );
  assert.equal(all[1]?.self, 400);
});
