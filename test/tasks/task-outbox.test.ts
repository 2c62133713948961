/**
 * TaskOutbox (src/protocol/tasks/task-outbox.ts), the sink of a 2025-11-25 task's asks, against a
 * memory task store: what it writes to the task's record.
 *
 * - a question parks the task (`input_required`, the question listed with the related-task
 *   `_meta`);
 * - a question withdrawn unanswered is told twice at once by its asker (the ask ended, then its
 *   `notifications/cancelled`): one write, the task `working` with the question listed as
 *   withdrawn, which `storedWithdrawals` reads back as the `notifications/cancelled` to send.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  storedQuestions,
  storedWithdrawals,
  TaskOutbox,
} from "../../src/protocol/tasks/task-outbox.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import type { TaskUpdate } from "../../src/tasks/task-store.js";

/** Counts the updates it is asked to write. */
class CountingStore extends MemoryTaskStore {
  readonly updates: TaskUpdate[] = [];
  override update(scope: string, taskId: string, update: TaskUpdate): Promise<boolean> {
    this.updates.push(update);
    return super.update(scope, taskId, update);
  }
}

describe("TaskOutbox", () => {
  test("a withdrawal is one write, read back as the notifications/cancelled to send", async () => {
    const store = new CountingStore();
    const scope = "principal:alice";
    const taskId = newTaskId();
    const created = await store.create({ scope, taskId, ttlMs: 60_000, pollIntervalMs: 1_000 });
    assert.equal(created.ok, true);
    let changes = 0;
    const outbox = new TaskOutbox({ store, scope, taskId, changed: () => changes++ });

    await outbox.notify(
      JSON.stringify({ jsonrpc: "2.0", id: "n.q1", method: "roots/list", params: {} }),
    );
    let task = await store.get(scope, taskId);
    assert.equal(task?.status, "input_required");
    const asked = storedQuestions(task?.inputRequests ?? null);
    assert.deepEqual(JSON.parse(asked.get("n.q1") as string).params._meta, {
      "io.modelcontextprotocol/related-task": { taskId },
    });
    assert.equal(store.updates.length, 1);

    // As the asker tells a timeout: the ask ended, then the client is told it is withdrawn.
    outbox.answered("n.q1");
    await outbox.notify(
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: "n.q1", reason: "timeout" },
      }),
    );
    assert.equal(store.updates.length, 2, JSON.stringify(store.updates));
    assert.equal(changes, 2);
    task = await store.get(scope, taskId);
    assert.equal(task?.status, "working");
    assert.equal(storedQuestions(task?.inputRequests ?? null).size, 0);
    assert.deepEqual(
      [...storedWithdrawals(task?.inputRequests ?? null, taskId)].map(([id, json]) => [
        id,
        JSON.parse(json),
      ]),
      [
        [
          "n.q1",
          {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: {
              requestId: "n.q1",
              reason: "timeout",
              _meta: { "io.modelcontextprotocol/related-task": { taskId } },
            },
          },
        ],
      ],
    );
    outbox.close();
  });
});
