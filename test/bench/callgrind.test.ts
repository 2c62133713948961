/**
 * `npm run bench:instructions` reads callgrind's dump of the server's main thread: the `totals:`
 * line is the count, and the self cost per function (the cost line after `calls=` is the call's
 * inclusive cost, not the caller's own) is the breakdown, with JIT code, which callgrind knows
 * only by address, named through node's `--perf-basic-prof` map (the later line wins where V8
 * reused the space). The format: https://valgrind.org/docs/manual/cl-format.html.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { namedSelfCosts, readCallgrind, topSelf, UNNAMED_CODE } from "../../bench/lib/callgrind.js";
import { CODE_KINDS, codeKind, sumByKind } from "../../bench/lib/code-kind.js";
import { simulatedCosts } from "../../bench/lib/estimated-cycles.js";
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
    { name: "helper", self: 900, costs: { Ir: 900 } },
    { name: "JS:*handle dist/http/endpoint.js:40:3", self: 380, costs: { Ir: 380 } },
    { name: "(2 other functions)", self: 177, costs: { Ir: 177 } },
  ]);
  const all = topSelf(readCallgrind(DUMP), { top: 10 });
  assert.deepEqual(
    all.map((row) => row.name),
    ["helper", UNNAMED_CODE, "main"],
  );
  assert.equal(all[1]?.self, 400);
});

// The cache simulation's events, as callgrind 3.19 writes them with `--cache-sim=yes
// --branch-sim=yes` (a shorter line leaves the last events at 0).
const SIM_DUMP = [
  "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim",
  "fn=(1) 0x1000",
  "1 100 10 5 8 2 1 0 1 0 20 4 0 0",
  "fn=(2) Builtins_LoadIC_Megamorphic",
  "1 400 50 0 1 0 0 0 0 0 30 1",
  "fn=(3) 0x1000'2",
  "2 50 0 0 2",
  "fn=(4) RegExp:^[a-z]+$",
  "1 30",
  "totals: 580 60 5 11 2 1 0 1 0 50 5 0 0",
].join("\n");

test("readCallgrind: every event's self cost per function, a missing one 0", () => {
  const profile = readCallgrind(SIM_DUMP);
  assert.deepEqual(profile.selfByEvent.get("0x1000"), [100, 10, 5, 8, 2, 1, 0, 1, 0, 20, 4, 0, 0]);
  assert.deepEqual(
    profile.selfByEvent.get("Builtins_LoadIC_Megamorphic"),
    [400, 50, 0, 1, 0, 0, 0, 0, 0, 30, 1, 0, 0],
  );
  assert.equal(profile.self.get("0x1000'2"), 50);
  // Per event, the functions' self costs add up to the totals line.
  profile.events.forEach((event, i) => {
    const sum = [...profile.selfByEvent.values()].reduce((a, costs) => a + (costs[i] ?? 0), 0);
    assert.equal(sum, profile.totalsByEvent.get(event), event);
  });
});

test("simulatedCosts: instructions + 10 × L1 misses + 100 × last-level misses + 20 × mispredictions", () => {
  const events: Record<string, number> = { Ir: 100, I1mr: 8, D1mr: 2, D1mw: 1, DLmr: 1, Bcm: 4 };
  const costs = simulatedCosts((event) => events[event] ?? 0);
  assert.deepEqual(costs, {
    instructions: 100,
    i1: 8,
    il: 0,
    d1: 3,
    dl: 1,
    branches: 4,
    cycles: 100 + 10 * (8 + 3) + 100 * 1 + 20 * 4,
  });
});

test("topSelf: ranked by what `rank` says, each row with every event's cost", () => {
  const profile = readCallgrind(SIM_DUMP);
  const map = readPerfMap("1000 40 JS:*handle file:///w/dist/http/endpoint.js:40:3\n");
  const naming = {
    nameAt: (address: number) => map.nameAt(address),
    shorten: (name: string) => name.replace("file:///w/", ""),
  };
  // By instructions the builtin leads; by estimated cycles the JIT function (its two recursion
  // levels merged: 150 instructions, 10 I1 misses, 3 D1 misses, 1 LL miss, 4 mispredictions).
  assert.deepEqual(
    topSelf(profile, { top: 3, ...naming }).map((row) => row.name),
    ["Builtins_LoadIC_Megamorphic", "JS:*handle dist/http/endpoint.js:40:3", "RegExp:^[a-z]+$"],
  );
  const cycles = (costs: Readonly<Record<string, number>>) =>
    simulatedCosts((event) => costs[event] ?? 0).cycles;
  const ranked = topSelf(profile, { top: 1, ...naming, rank: cycles });
  assert.equal(ranked[0]?.name, "JS:*handle dist/http/endpoint.js:40:3");
  assert.equal(ranked[0]?.self, 150);
  assert.equal(cycles(ranked[0]?.costs ?? {}), 150 + 10 * 13 + 100 + 20 * 4);
  assert.equal(ranked[1]?.name, "(2 other functions)");
  assert.equal(ranked[1]?.costs.Ir, 430);
  assert.equal(ranked[1]?.costs.Bcm, 1);
  // Given the costs named already, it ranks those and names nothing again.
  let lookups = 0;
  const named = namedSelfCosts(profile, {
    nameAt: (address) => {
      lookups++;
      return naming.nameAt(address);
    },
    shorten: naming.shorten,
  });
  const seen = lookups;
  assert.deepEqual(topSelf(profile, { top: 1, named, rank: cycles }), ranked);
  assert.equal(lookups, seen, "no address named a second time");
});

test("codeKind and sumByKind: the server's own, packages', node's JavaScript, builtins, regexps, native", () => {
  assert.equal(codeKind("JS:*post dist/http/core/post.js:21:27"), CODE_KINDS[0]);
  assert.equal(codeKind("JS:^listener bench/out/targets/bare-server.mjs:40:3"), CODE_KINDS[0]);
  assert.equal(codeKind("JS:*runChecks node_modules/zod/v4/core/schemas.js:34:27"), CODE_KINDS[1]);
  assert.equal(codeKind("JS:*emit node:events:471:44"), CODE_KINDS[2]);
  assert.equal(codeKind("Builtins_StoreIC"), CODE_KINDS[3]);
  assert.equal(codeKind("Builtin:CallFunction"), CODE_KINDS[3]);
  assert.equal(codeKind("RegExp:[^\\t\\x20-\\x7e]"), CODE_KINDS[4]);
  assert.equal(codeKind(UNNAMED_CODE), CODE_KINDS[5]);
  assert.equal(codeKind("uv__io_poll"), CODE_KINDS[6]);

  const profile = readCallgrind(SIM_DUMP);
  const map = readPerfMap("1000 40 JS:*handle file:///w/dist/http/endpoint.js:40:3\n");
  const named = namedSelfCosts(profile, {
    nameAt: (address) => map.nameAt(address),
    shorten: (name) => name.replace("file:///w/", ""),
  });
  const kinds = sumByKind(named, profile.events);
  assert.deepEqual(
    kinds.map((row) => row.kind),
    [...CODE_KINDS],
  );
  assert.equal(kinds[0]?.functions, 1, "two recursion levels are one function");
  assert.equal(kinds[0]?.costs.Ir, 150);
  assert.equal(kinds[3]?.costs.Ir, 400);
  assert.equal(kinds[4]?.costs.Ir, 30);
  assert.equal(kinds[6]?.functions, 0);
  assert.equal(
    kinds.reduce((sum, row) => sum + (row.costs.Ir ?? 0), 0),
    profile.totals,
  );
});
