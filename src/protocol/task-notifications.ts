/**
 * 2026-07-28 `notifications/tasks` (the `io.modelcontextprotocol/tasks` extension, SEP-2663, "Task
 * Status Notifications": https://modelcontextprotocol.io/extensions/tasks/overview): a
 * `subscriptions/listen` stream that named task ids in `notifications.taskIds` hears each status
 * change of those tasks as the full `DetailedTask`, as `tasks/get` would answer it at that moment,
 * tagged with the stream's subscription id.
 *
 * A change is only a hint (a task id): each listener re-reads the task under its own scope, so a
 * listener never hears of a task its scope cannot get, and a state (status and `lastUpdatedAt`) is
 * sent once per listener even when two paths (the store's announcement and the change feed)
 * report it.
 */
import type { TaskStore } from "../tasks/task-store.js";
import { type ChangeListeners, SUBSCRIPTION_ID_KEY } from "./change-listeners.js";
import { detailedTask } from "./task-wire.js";

/** What a listener was last told of a task: its status and when it last changed. */
export function taskStateKey(task: {
  readonly status: string;
  readonly lastUpdatedAt: number;
}): string {
  return `${task.status}@${task.lastUpdatedAt}`;
}

/**
 * Tells the listeners of this node that named `taskId` its current state, when it differs from
 * what each was last told. Resolves once every read is done; never rejects (a read that fails
 * sends nothing: polling stays the client's fallback).
 *
 * @example
 * ```ts
 * await notifyTaskListeners(listeners, store, taskId);
 * ```
 */
export async function notifyTaskListeners(
  listeners: ChangeListeners,
  store: TaskStore,
  taskId: string,
): Promise<void> {
  const targets = listeners.listenersOfTask(taskId);
  await Promise.all(
    targets.map(async (listener) => {
      let task: Awaited<ReturnType<TaskStore["get"]>>;
      try {
        task = await store.get(listener.scope, taskId);
      } catch {
        return;
      }
      if (task === undefined) return;
      const state = taskStateKey(task);
      if (listener.taskStatuses.get(taskId) === state) return;
      listener.taskStatuses.set(taskId, state);
      const params = {
        ...detailedTask(task),
        _meta: { [SUBSCRIPTION_ID_KEY]: JSON.parse(listener.subscriptionIdJson) as unknown },
      };
      try {
        listener.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/tasks", params }));
      } catch {
        // A failing stream is its own (its exchange cuts and removes it).
      }
    }),
  );
}
