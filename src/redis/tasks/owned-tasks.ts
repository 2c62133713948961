/**
 * The running tasks a node created, as the Redis task store keeps them locally: enough to write a
 * task again when Redis lost it (restarted without persistence), and what its handlers wrote while
 * Redis was away, to be written when it is back. Bounded: a task whose end this node never heard
 * of (its handler never finished it, the change message was missed) cannot make it grow without
 * end.
 */
import type { NewTask, TaskOutcome, TaskUpdate } from "../../tasks/index.js";

/** A running task this node created. */
export interface OwnedTask {
  readonly task: NewTask;
  readonly createdAt: number;
  /** The shard's epoch when it was written (see task-scripts.ts `epochOf`). */
  epoch: string;
}

/** What this node's handlers wrote while Redis was away, written when it is back. */
export interface PendingWrite {
  readonly scope: string;
  readonly taskId: string;
  update: TaskUpdate | null;
  /** The first terminal write (a later one would find the task terminal anyway). */
  end:
    | { readonly kind: "finish"; readonly outcome: TaskOutcome }
    | { readonly kind: "cancel"; readonly statusMessage: string | null }
    | null;
}

/**
 * The owned tasks and their pending writes, oldest first.
 *
 * @example
 * ```ts
 * const owned = new OwnedTasks(10_000);
 * owned.add({ task, createdAt, epoch });
 * owned.keep(scope, taskId, (p) => ((p.update = { ...p.update, ...update }), true));
 * ```
 */
export class OwnedTasks {
  private readonly owned = new Map<string, OwnedTask>();
  private readonly pending = new Map<string, PendingWrite>();
  private readonly limit: number;

  /** `limit`: the most tasks kept (the oldest is dropped, with its pending write, past it). */
  constructor(limit: number) {
    this.limit = limit;
  }

  add(owned: OwnedTask): void {
    this.owned.set(ownedKey(owned.task.scope, owned.task.taskId), owned);
    if (this.owned.size > this.limit) {
      const oldest = this.owned.keys().next().value as string;
      this.owned.delete(oldest);
      this.pending.delete(oldest);
    }
  }

  get(scope: string, taskId: string): OwnedTask | undefined {
    return this.owned.get(ownedKey(scope, taskId));
  }

  has(scope: string, taskId: string): boolean {
    return this.owned.has(ownedKey(scope, taskId));
  }

  /** The task ended (finished, cancelled, evicted, here or elsewhere): nothing left to write again. */
  forget(scope: string, taskId: string): void {
    this.owned.delete(ownedKey(scope, taskId));
  }

  /** A snapshot of the owned tasks, oldest first. */
  list(): OwnedTask[] {
    return [...this.owned.values()];
  }

  /**
   * Keeps a write of a task this node runs for when Redis is back: `change` edits its pending
   * write and says whether it took the write. False when this node does not run the task.
   */
  keep(scope: string, taskId: string, change: (pending: PendingWrite) => boolean): boolean {
    const key = ownedKey(scope, taskId);
    if (!this.owned.has(key)) return false;
    let pending = this.pending.get(key);
    if (pending === undefined) {
      pending = { scope, taskId, update: null, end: null };
      this.pending.set(key, pending);
    }
    return change(pending);
  }

  /** A snapshot of the pending writes, oldest first. */
  pendingWrites(): PendingWrite[] {
    return [...this.pending.values()];
  }

  /** A pending write was written. */
  written(pending: PendingWrite): void {
    this.pending.delete(ownedKey(pending.scope, pending.taskId));
  }

  clear(): void {
    this.owned.clear();
    this.pending.clear();
  }
}

/** The key of both maps: unambiguous for any scope (a task id has no space). */
function ownedKey(scope: string, taskId: string): string {
  return `${taskId} ${scope}`;
}
