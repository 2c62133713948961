// The layer check (scripts/check-layers.ts) run on small throwaway source trees: it must pass a
// tree that points down and fail, through the same command CI runs, on a cycle, an upward or
// sideways import, and a directory missing from its table.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { checkLayers } from "../../scripts/check-layers.js";
import { scriptCheck } from "../helpers/script-check.js";

const { tree, runCli } = scriptCheck("check-layers.ts");

const DOWNWARD = {
  "errors.ts": "export class E extends Error {}\n",
  "protocol/dispatcher.ts":
    'import { E } from "../errors.js";\nimport type { R } from "../cancellation/registry.js";\nexport const d = (r: R) => new E(String(r));\n',
  "cancellation/registry.ts": 'import { E } from "../errors.js";\nexport type R = E;\n',
};

describe("check-layers", () => {
  it("passes a tree whose imports point down, and the repository's own src/", () => {
    assert.deepEqual(checkLayers(tree(DOWNWARD)), []);
    const run = runCli("src");
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /layers point down, no cycles/);
  });

  it("fails on an upward import, type-only included", () => {
    const root = tree({
      ...DOWNWARD,
      "cancellation/registry.ts":
        'import type { d } from "../protocol/dispatcher.js";\nexport type R = typeof d;\n',
    });
    const kinds = checkLayers(root).map((p) => p.kind);
    assert.ok(kinds.includes("upward"), kinds.join());
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(
      run.stderr,
      /cancellation\/registry\.ts .* imports protocol\/dispatcher\.ts .*upward/,
    );
  });

  it("fails on a cycle inside one layer", () => {
    const root = tree({
      "sessions/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
      "sessions/b.ts": 'export { a as b } from "./a.js";\n',
    });
    const problems = checkLayers(root);
    assert.deepEqual(
      problems.map((p) => p.kind),
      ["cycle"],
    );
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /import cycle: sessions\/a\.ts -> sessions\/b\.ts -> sessions\/a\.ts/);
  });

  it("fails on an import between sibling layers (protocol and isolation once did both ways)", () => {
    const root = tree({
      "http/a.ts": 'import { s } from "../stdio/s.js";\nexport const a = s;\n',
      "stdio/s.ts": "export const s = 1;\n",
    });
    assert.deepEqual(
      checkLayers(root).map((p) => p.kind),
      ["sideways"],
    );
    assert.equal(runCli(root).status, 1);
  });

  it("fails on an import past a room's face, and passes the same import through it", () => {
    const files = {
      "protocol/wire/json-rpc.ts": "export const j = 1;\n",
      "protocol/wire/index.ts": 'export { j } from "./json-rpc.js";\n',
      "protocol/calls/call.ts": 'import { j } from "../wire/json-rpc.js";\nexport const c = j;\n',
    };
    const problems = checkLayers(tree(files));
    assert.deepEqual(
      problems.map((p) => p.kind),
      ["face"],
    );
    assert.match(problems[0]?.message ?? "", /enter protocol\/wire through its face/);
    const run = runCli(tree(files));
    assert.equal(run.status, 1);
    assert.match(run.stderr, /protocol\/calls\/call\.ts imports protocol\/wire\/json-rpc\.ts/);
    const throughFace = {
      ...files,
      "protocol/calls/call.ts": 'import { j } from "../wire/index.js";\nexport const c = j;\n',
    };
    assert.deepEqual(checkLayers(tree(throughFace)), []);
  });

  it("fails on a protocol room importing a room above it (wire below calls)", () => {
    const root = tree({
      "protocol/calls/index.ts": "export const c = 1;\n",
      "protocol/wire/json-rpc.ts": 'import { c } from "../calls/index.js";\nexport const j = c;\n',
    });
    assert.deepEqual(
      checkLayers(root).map((p) => p.kind),
      ["upward"],
    );
  });

  it("fails on a directory missing from the layer table", () => {
    const root = tree({ "telemetry-x/span.ts": "export const span = 1;\n" });
    const problems = checkLayers(root);
    assert.equal(problems[0]?.kind, "unlisted");
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /telemetry-x\/span\.ts: not in the layer table/);
  });
});
