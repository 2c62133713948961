/**
 * Task status notifications on the streams a client holds open.
 *
 * - 2026-07-28 `notifications/tasks` (the `io.modelcontextprotocol/tasks` extension, SEP-2663,
 *   "Task Status Notifications": https://modelcontextprotocol.io/extensions/tasks/overview): a
 *   `subscriptions/listen` stream that named task ids in `notifications.taskIds` hears each
 *   status change of those tasks as the full `DetailedTask`, as `tasks/get` would answer it at
 *   that moment, tagged with the stream's subscription id.
 * - 2025-11-25 `notifications/tasks/status` on the GET stream of the session that owns the task.
 *
 * A change is only a hint (a task id and its scope): each stream re-reads the task under its own
 * scope, so none hears of a task its scope cannot get; a listen stream is told a state (status and
 * `lastUpdatedAt`) once even when two paths (the store's announcement and the change feed) report
 * it.
 */
import type { TaskStore } from "../../tasks/task-store.js";
import {
  type ChangeListener,
  type ChangeListeners,
  SUBSCRIPTION_ID_KEY,
} from "../subscriptions/index.js";
import { notificationJson } from "../wire/index.js";
import { detailedTask, legacyTask } from "./task-wire.js";

/** The task a change names: its id and the scope it belongs to. */
export interface ChangedTask {
  readonly taskId: string;
  readonly scope: string;
}

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
 * await notifyTaskListeners(listeners, store, { taskId, scope });
 * ```
 */
export async function notifyTaskListeners(
  listeners: ChangeListeners,
  store: TaskStore,
  changed: ChangedTask,
): Promise<void> {
  const { taskId } = changed;
  // Only listeners of the task's own scope could have been acknowledged for it.
  const targets = listeners.listenersOfTask(taskId).filter((l) => l.scope === changed.scope);
  await Promise.all(targets.map((listener) => notifyTaskListener(listener, store, taskId)));
}

/**
 * Tells one listener the current state of task `taskId`, read under the listener's scope, when
 * it was acknowledged for the task and was last told another state. A listener whose
 * acknowledgement is not sent yet only notes the change ({@link ChangeListener.heldTasks}): it
 * is read again once that is sent. Never rejects.
 *
 * @example
 * ```ts
 * await notifyTaskListener(listener, store, taskId);
 * ```
 */
export async function notifyTaskListener(
  listener: ChangeListener,
  store: TaskStore,
  taskId: string,
): Promise<void> {
  if (listener.heldTasks !== null) {
    listener.heldTasks.add(taskId);
    return;
  }
  if (!listener.taskStatuses.has(taskId)) return;
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
}

/**
 * The session id of a 2025-era session scope (`session:<id>`), or null for any other scope.
 *
 * @example
 * ```ts
 * sessionOfScope("session:abc"); // "abc"
 * ```
 */
export function sessionOfScope(scope: string): string | null {
  return scope.startsWith(SESSION_PREFIX) ? scope.slice(SESSION_PREFIX.length) : null;
}

const SESSION_PREFIX = "session:";

/**
 * 2025-11-25 `notifications/tasks/status` on a session's GET stream
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, "Task Status
 * Notification": optional, the full `Task`, without the related-task `_meta`; "clients SHOULD
 * expect messages to be delivered on any SSE stream, including the HTTP GET stream"): the task's
 * current state, read under its own (session) scope, is written with `send`. Never rejects.
 *
 * @example
 * ```ts
 * await notifySessionStream(store, { taskId, scope: "session:abc" }, (json) => streams.send("abc", json));
 * ```
 */
export async function notifySessionStream(
  store: TaskStore,
  changed: ChangedTask,
  send: (json: string) => unknown,
): Promise<void> {
  let task: Awaited<ReturnType<TaskStore["get"]>>;
  try {
    task = await store.get(changed.scope, changed.taskId);
  } catch {
    return;
  }
  if (task === undefined) return;
  try {
    send(notificationJson("notifications/tasks/status", legacyTask(task)));
  } catch {
    // The stream is its own to cut.
  }
}
