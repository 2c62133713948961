/**
 * The task runs of one node: each task whose handler runs here, with its sink, its handle in the
 * cancellation registry and, for a 2026-07-28 task, the asker its `tasks/update` answers go to.
 * Aborting a task's run goes through the registry under the task's key (`task:<id>`, never
 * reachable by `notifications/cancelled`), which aborts the handle on whichever node runs it.
 */
import type { CancellationRegistry } from "../../cancellation/registry.js";
import type { RequestHandle } from "../../cancellation/types.js";
import { RequestCancelledError } from "../../errors.js";
import type { TaskAsker } from "./task-asker.js";
import type { TaskSink } from "./task-sink.js";

/** The registry key of a task's run. */
export function taskKey(taskId: string): string {
  return `task:${taskId}`;
}

/** One run of this node. */
export interface TaskRun {
  readonly sink: TaskSink;
  readonly handle: RequestHandle;
  /** Where `tasks/update` answers go (2026-07-28), or null. */
  readonly asker: TaskAsker | null;
}

/**
 * The runs, by task id (task ids are unique across scopes; each lookup checks the scope too).
 *
 * @example
 * ```ts
 * const runs = new TaskRuns(registry);
 * runs.add(taskId, { sink, handle, asker });
 * await runs.abort(scope, taskId, "The task was cancelled by request.");
 * ```
 */
export class TaskRuns {
  private readonly registry: CancellationRegistry;
  private readonly runs = new Map<string, TaskRun>();

  constructor(registry: CancellationRegistry) {
    this.registry = registry;
  }

  /** Runs on this node now. */
  get size(): number {
    return this.runs.size;
  }

  add(taskId: string, run: TaskRun): void {
    this.runs.set(taskId, run);
  }

  /** The run of the task here, if it belongs to `scope`. */
  get(scope: string, taskId: string): TaskRun | undefined {
    const run = this.runs.get(taskId);
    return run?.sink.scope === scope ? run : undefined;
  }

  /** A run that never started (its task was refused or not stored): its handle is untracked. */
  async drop(taskId: string, handle: RequestHandle): Promise<void> {
    this.runs.delete(taskId);
    await this.registry.untrack(handle);
  }

  /** The run of `sink` ended here; a cancel row it left (`tasks/cancel`) is cleared. */
  settled(sink: TaskSink): void {
    const run = this.runs.get(sink.taskId);
    if (run?.sink !== sink) return;
    this.runs.delete(sink.taskId);
    if (run.handle.aborted) this.registry.clear(taskKey(sink.taskId), sink.scope).catch(ignore);
  }

  /**
   * Aborts the run of a task: records the cancel in the registry (which aborts the handle here,
   * or on the node that runs it), and aborts a local run directly if the registry refused.
   */
  async abort(scope: string, taskId: string, reason: string): Promise<void> {
    const elsewhere = !this.runs.has(taskId);
    try {
      await this.registry.cancel(taskKey(taskId), reason, scope, "library");
      // The cancel was published when its row was written; for a run on another node the row
      // has no reader, and that node cannot clear it (its run may end before the row lands), so
      // it goes now instead of counting against the scope's row quota until its TTL.
      if (elsewhere) await this.registry.clear(taskKey(taskId), scope);
    } catch {
      // Fail-open: the local abort below and the store's announcement still reach the run.
    }
    this.abortHere(scope, taskId, reason);
  }

  /** Aborts a run of this node without writing a row (the task's status records the cancel). */
  abortHere(scope: string, taskId: string, reason: string): void {
    const run = this.get(scope, taskId);
    if (run === undefined || run.handle.aborted) return;
    run.handle.abort(new RequestCancelledError("library", reason));
  }
}

function ignore(): void {}
