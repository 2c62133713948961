import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { isTaskId, newTaskId, TASK_ID_LENGTH } from "../../src/tasks/task-id.js";
import { runTaskStoreContract } from "./task-store-contract.js";

runTaskStoreContract("MemoryTaskStore", (options) => new MemoryTaskStore(options));

describe("MemoryTaskStore", () => {
  it("defaults to the documented bounds: 100 per scope, 10 000 in all, 1 MiB results", () => {
    const store = new MemoryTaskStore();
    assert.equal(store.maxTasksPerScope, 100);
    assert.equal(store.maxTasks, 10_000);
    assert.equal(store.maxResultBytes, 1_048_576);
    assert.match(store.nodeId, /^[0-9a-f-]{36}$/);
    assert.equal(new MemoryTaskStore({ nodeId: "node-a" }).nodeId, "node-a");
  });

  it("rejects bad bounds at construction", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, "10", null]) {
      assert.throws(() => new MemoryTaskStore({ maxTasks: bad as number }), InvalidOptionError);
      assert.throws(
        () => new MemoryTaskStore({ maxTasksPerScope: bad as number }),
        InvalidOptionError,
      );
      assert.throws(
        () => new MemoryTaskStore({ maxResultBytes: bad as number }),
        InvalidOptionError,
      );
    }
    assert.throws(
      () => new MemoryTaskStore({ maxResultBytes: Number.POSITIVE_INFINITY }),
      InvalidOptionError,
    );
    assert.throws(() => new MemoryTaskStore({ nodeId: "" }), InvalidOptionError);
  });
});

describe("task ids", () => {
  it("are 22 base64url characters, distinct, and recognised", () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const id = newTaskId();
      assert.equal(id.length, TASK_ID_LENGTH);
      assert.ok(isTaskId(id));
      ids.add(id);
    }
    assert.equal(ids.size, 1_000);
  });

  it("refuses anything else before a store is asked", () => {
    for (const bad of [
      undefined,
      null,
      7,
      "",
      "short",
      `${newTaskId()}x`,
      "a".repeat(21) + "=",
      {},
    ]) {
      assert.equal(isTaskId(bad), false, String(bad));
    }
  });
});
