// The parameter check (scripts/check-params.ts) on small throwaway source trees: it passes a
// function of four parameters and fails, through the same command CI runs, on one of five under
// src/http/ — whatever kind of function it is — while its allow-list exempts only functions
// outside src/http/.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { checkParams, longSignatures } from "../../scripts/check-params.js";
import { scriptCheck } from "../helpers/script-check.js";

const { tree, runCli } = scriptCheck("check-params.ts");

const FOUR =
  "export function four(a: number, b: number, c: number, d: number) { return a + b + c + d; }\n";
const FIVE =
  "export function reply(a: number, b: number, c: number, d: number, e?: number) { return a + b + c + d + (e ?? 0); }\n";

describe("check-params", () => {
  it("passes four parameters, and the repository's own src/", () => {
    const report = checkParams(tree({ "http/ok.ts": FOUR }), { allowed: new Set() });
    assert.deepEqual(report, { problems: [], unused: [] });
    const run = runCli("src");
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /no function under src\/ takes more than 4 parameters/);
  });

  it("fails on a five-parameter function under src/http/, naming its file, line and name", () => {
    const root = tree({ "http/ok.ts": FOUR, "http/core/answers.ts": `// one\n${FIVE}` });
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /http\/core\/answers\.ts:2 reply takes 5 parameters \(at most 4\)/);
    assert.match(run.stderr, /1 problem\(s\)/);
  });

  it("counts every kind of function, and neither `this` nor a type's signature", () => {
    const five = "a: 1, b: 2, c: 3, d: 4, e: 5".replace(/: \d/g, ": number");
    const found = longSignatures(
      [
        `export const arrow = (${five}) => a;`,
        `export const expression = function named(${five}) { return a; };`,
        `export class Door { constructor(${five}) {} method(${five}) { return a; } }`,
        `export const object = { shorthand(${five}) { return a; } };`,
        `export function rest(a: number, b: number, c: number, d: number, ...more: number[]) { return a; }`,
        // Not over the limit: a `this` parameter is not an argument; a signature has no body.
        `export function bound(this: object, a: number, b: number, c: number, d: number) { return a; }`,
        `export interface Shape { method(${five}): void }`,
        `export type Fn = (${five}) => void;`,
      ].join("\n"),
    ).map(({ name, line, count }) => `${line} ${name} ${count}`);
    assert.deepEqual(found, [
      "1 arrow 5",
      "2 named 5",
      "3 Door.constructor 5",
      "3 Door.method 5",
      "4 shorthand 5",
      "5 rest 5",
    ]);
  });

  it("exempts an allowed name outside src/http/ only, and tells of an allowance no longer needed", () => {
    const root = tree({ "protocol/dispatcher.ts": FIVE, "http/write.ts": FIVE });
    const report = checkParams(root, { allowed: new Set(["reply", "gone"]) });
    assert.deepEqual(
      report.problems.map((problem) => `${problem.file} ${problem.name}`),
      ["http/write.ts reply"],
    );
    assert.deepEqual(report.unused, ["gone"]);
    const outside = checkParams(tree({ "protocol/dispatcher.ts": FIVE }), { allowed: new Set() });
    assert.equal(
      outside.problems.length,
      1,
      "without the allowance it fails outside src/http/ too",
    );
  });
});
