/**
 * A bounded pool of worker threads for isolated tools. Node cannot kill a promise, but it can
 * terminate a thread (https://nodejs.org/api/worker_threads.html#workerterminate): a tool
 * that runs here and ignores its signal still stops when its task is killed, and process CPU
 * time stops growing. One worker runs one task at a time; a dead worker is replaced lazily (the
 * next task that needs one spawns it); idle workers are retired after `idleTimeoutMs` and never
 * keep the process alive. Fair between tenants: a scope holds at most `maxWorkersPerScope`
 * workers and `maxQueuePerScope` waiting tasks, and freed workers go round-robin over scopes.
 */
import type { Worker } from "node:worker_threads";

import type { RequestId } from "../cancellation/types.js";
import {
  IsolatedToolError,
  RequestCancelledError,
  ToolKilledError,
  WorkerPoolClosedError,
  WorkerPoolFullError,
} from "../errors.js";
import type { LoggingLevel } from "../logging-levels.js";
import { nodeBuiltin } from "../runtime.js";
import type { IsolatedHandler } from "./isolated-handler.js";
import type { CancelReason, FromWorkerMessage, SerializedError } from "./messages.js";
import {
  type ResolvedPoolOptions,
  resolvePoolOptions,
  type WorkerPoolOptions,
} from "./pool-options.js";
import { type WorkerScript, workerScript } from "./worker-script.js";

/** Per-run options of {@link WorkerPool.start} and {@link WorkerPool.run}. */
export interface IsolatedRunOptions {
  /**
   * The request's signal. Aborting it while the task waits removes it from the queue (the run
   * rejects with `signal.reason`); while it runs, the worker's `ctx.signal` aborts (cooperative:
   * the worker keeps running until the tool returns or the task is killed).
   */
  readonly signal?: AbortSignal;
  /** Receives the tool's `ctx.progress` calls, e.g. `(p, t, m) => ctx.progress(p, t, m)`. */
  readonly onProgress?: (progress: number, total?: number, message?: string) => unknown;
  /** Receives the tool's `ctx.log` calls with a valid level, e.g. `(l, d) => ctx.log(l, d)`. */
  readonly onLog?: (level: LoggingLevel, data: unknown) => unknown;
  /** Shown to the tool as `ctx.requestId`. Default null. */
  readonly requestId?: RequestId | null;
  /** Shown to the tool as `ctx.scope`. Default `"global"`. */
  readonly scope?: string;
}

/** Where a task is: waiting for a worker, running in one, or finished either way. */
export type IsolatedTaskState = "queued" | "running" | "settled";

/**
 * One isolated run, with the handle that kills it.
 *
 * @example
 * ```ts
 * const task = pool.start(handler, args, { signal });
 * const timer = setTimeout(() => task.kill(), 5_000);
 * try { return await task.result; } finally { clearTimeout(timer); }
 * ```
 */
export interface IsolatedTask {
  /**
   * The tool's structured-cloned result. Rejects with `ToolKilledError` (killed or pool closed
   * while running), `IsolatedToolError` (the tool threw, or its worker died), `signal.reason`
   * (aborted while queued, or the tool failed after the abort), `WorkerPoolFullError` or
   * `WorkerPoolClosedError`.
   */
  readonly result: Promise<unknown>;
  /** The task's current state. */
  readonly state: IsolatedTaskState;
  /**
   * Ends the task now: the run rejects with `ToolKilledError` at once. A running task's worker
   * is terminated (and replaced when the next task needs one); a queued task leaves the queue.
   * Returns whether a worker was terminated; false when the task was queued or had settled.
   */
  kill(): boolean;
}

/** One worker thread and what it is doing. */
interface Slot {
  readonly worker: Worker;
  task: Task | null;
  idleTimer: NodeJS.Timeout | null;
  /** Set once `terminate()` was asked for; the slot still counts until the thread exits. */
  terminating: boolean;
  /** The last `error` event: the cause reported when the worker dies under a task. */
  error: unknown;
  readonly exited: Promise<void>;
}

/** A task's bookkeeping. */
interface Task {
  readonly id: number;
  readonly handler: IsolatedHandler;
  readonly args: unknown;
  readonly options: IsolatedRunOptions;
  state: IsolatedTaskState;
  slot: Slot | null;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  onAbort: (() => void) | null;
}

/** Started once per module: the entry script is the same for every worker. */
let script: WorkerScript | undefined;

/**
 * The pool. Create one per server (or per process) and close it on shutdown.
 *
 * @example
 * ```ts
 * const pool = new WorkerPool({ maxWorkers: 2 });
 * const crunch = isolatedHandler(new URL("./crunch.js", import.meta.url), "crunch");
 * const task = pool.start(crunch, { n: 1e9 }, { signal: ctx.signal });
 * setTimeout(() => task.kill(), 5_000).unref();
 * console.log(await task.result);
 * await pool.close();
 * ```
 */
export class WorkerPool {
  readonly #options: ResolvedPoolOptions;
  /** Every live thread, terminating ones included: its size is bounded by maxWorkers. */
  readonly #workers = new Set<Slot>();
  /** Idle threads, most recently used last (taken first, so the others can time out). */
  readonly #idle: Slot[] = [];
  /**
   * Waiting tasks per scope, each in arrival order (a Set: O(1) removal when one aborts); the
   * scopes in round-robin order, so a freed worker goes to the next tenant, not the busiest.
   */
  readonly #queues = new Map<string, Set<Task>>();
  #queued = 0;
  /** Tasks running per scope (entries deleted at 0). */
  readonly #running = new Map<string, number>();
  #nextTaskId = 1;
  #closed = false;

  /** Node's `Worker`, loaded with the first pool (never by importing the package). */
  readonly #Worker: typeof Worker;

  constructor(options: WorkerPoolOptions = {}) {
    this.#options = resolvePoolOptions(options);
    this.#Worker = nodeBuiltin<typeof import("node:worker_threads")>("node:worker_threads", {
      feature: "isolated tools (worker threads)",
      instead:
        "declare the tool without `isolated` (its handler must then honour ctx.signal), or serve it from Node.js, Bun or Deno",
    }).Worker;
  }

  /** Live worker threads (busy, idle or terminating); never more than `maxWorkers`. */
  get size(): number {
    return this.#workers.size;
  }

  /** Tasks running in a worker now. */
  get busy(): number {
    let busy = 0;
    for (const slot of this.#workers) if (slot.task !== null) busy += 1;
    return busy;
  }

  /** Tasks waiting for a worker. */
  get queued(): number {
    return this.#queued;
  }

  /** The options in force, defaults applied. */
  get options(): ResolvedPoolOptions {
    return this.#options;
  }

  /**
   * Runs an isolated tool; same as `start(...).result`, for callers that never kill.
   *
   * @example
   * ```ts
   * const value = await pool.run(handler, { n: 10 }, { signal: ctx.signal });
   * ```
   */
  run(handler: IsolatedHandler, args: unknown, options: IsolatedRunOptions = {}): Promise<unknown> {
    return this.start(handler, args, options).result;
  }

  /**
   * Starts an isolated tool in a free worker, a new one (below `maxWorkers`), or the queue.
   * `args` must be structured-cloneable (JSON values are).
   *
   * @example
   * ```ts
   * const task = pool.start(handler, args, { signal: ctx.signal, onProgress: (p, t, m) => ctx.progress(p, t, m) });
   * ```
   */
  start(handler: IsolatedHandler, args: unknown, options: IsolatedRunOptions = {}): IsolatedTask {
    let resolve!: (value: unknown) => void;
    let reject!: (error: unknown) => void;
    const result = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const task: Task = {
      id: this.#nextTaskId++,
      handler,
      args,
      options,
      state: "queued",
      slot: null,
      resolve,
      reject,
      onAbort: null,
    };
    const handle: IsolatedTask = {
      result,
      get state() {
        return task.state;
      },
      kill: () => this.#kill(task),
    };

    const { signal } = options;
    if (this.#closed) {
      this.#settle(task, false, new WorkerPoolClosedError());
    } else if (signal?.aborted) {
      // An aborted signal is checked before any work starts.
      this.#settle(task, false, signal.reason);
    } else {
      if (signal !== undefined) {
        task.onAbort = () => this.#abort(task);
        signal.addEventListener("abort", task.onAbort, { once: true });
      }
      this.#dispatch(task);
    }
    return handle;
  }

  /**
   * Closes the pool: queued tasks reject with `WorkerPoolClosedError`, running ones with
   * `ToolKilledError`, every thread is terminated; resolves once all have exited. Idempotent.
   *
   * @example
   * ```ts
   * process.once("SIGTERM", () => void pool.close());
   * ```
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      for (const queue of this.#queues.values()) {
        for (const task of queue) this.#settle(task, false, new WorkerPoolClosedError());
      }
      this.#queues.clear();
      this.#queued = 0;
      for (const slot of this.#workers) {
        const task = slot.task;
        slot.task = null;
        if (task !== null) this.#settle(task, false, new ToolKilledError());
        this.#retire(slot);
      }
    }
    await Promise.all(Array.from(this.#workers, (slot) => slot.exited));
  }

  /** Gives a task a worker now, or queues it (bounded per scope, then in all). */
  #dispatch(task: Task): void {
    const scope = scopeOf(task);
    let slot: Slot | undefined;
    // A scope holding its share of workers waits, even when a worker is free.
    const mayRun = this.#belowShare(scope);
    if (mayRun) slot = this.#idle.pop();
    if (slot === undefined && mayRun && this.#workers.size < this.#options.maxWorkers) {
      try {
        slot = this.#spawn();
      } catch (error) {
        this.#settle(task, false, new IsolatedToolError(true, null, error));
        return;
      }
    }
    if (slot !== undefined) {
      this.#assign(slot, task);
      return;
    }
    const queue = this.#queues.get(scope);
    if (this.#queued >= this.#options.maxQueue) {
      this.#settle(task, false, new WorkerPoolFullError(this.#options.maxQueue));
    } else if (
      scope !== "" &&
      queue !== undefined &&
      queue.size >= this.#options.maxQueuePerScope
    ) {
      this.#settle(task, false, new WorkerPoolFullError(this.#options.maxQueuePerScope));
    } else {
      if (queue === undefined) this.#queues.set(scope, new Set([task]));
      else queue.add(task);
      this.#queued += 1;
    }
  }

  /**
   * Takes the next waiting task a worker may run: the first of the first scope (round-robin)
   * below its worker share; that scope then moves to the back of the order.
   */
  #takeNext(): Task | undefined {
    for (const [scope, queue] of this.#queues) {
      if (!this.#belowShare(scope)) continue;
      const next = first(queue);
      if (next === undefined) continue;
      this.#dequeue(next);
      const rest = this.#queues.get(scope);
      if (rest !== undefined) {
        this.#queues.delete(scope);
        this.#queues.set(scope, rest);
      }
      return next;
    }
    return undefined;
  }

  /** Whether `scope` holds fewer workers than its share (a scopeless task always does). */
  #belowShare(scope: string): boolean {
    return scope === "" || (this.#running.get(scope) ?? 0) < this.#options.maxWorkersPerScope;
  }

  /** Removes a waiting task from its scope's queue. */
  #dequeue(task: Task): void {
    const scope = scopeOf(task);
    const queue = this.#queues.get(scope);
    if (queue === undefined || !queue.delete(task)) return;
    this.#queued -= 1;
    if (queue.size === 0) this.#queues.delete(scope);
  }

  #spawn(): Slot {
    script ??= workerScript();
    const worker = new this.#Worker(script.specifier, {
      eval: script.eval,
      ...(script.execArgv === undefined ? {} : { execArgv: script.execArgv }),
      ...(this.#options.resourceLimits === undefined
        ? {}
        : { resourceLimits: this.#options.resourceLimits }),
    });
    let markExited!: () => void;
    const slot: Slot = {
      worker,
      task: null,
      idleTimer: null,
      terminating: false,
      error: null,
      exited: new Promise<void>((res) => {
        markExited = res;
      }),
    };
    this.#workers.add(slot);
    worker.on("message", (message: FromWorkerMessage) => this.#onMessage(slot, message));
    worker.on("messageerror", (error) => {
      const task = slot.task;
      if (task !== null) this.#finish(slot, task, false, new IsolatedToolError(false, null, error));
    });
    // Without an `error` listener an uncaught exception in the worker would crash this process.
    worker.on("error", (error) => {
      slot.error = error;
    });
    worker.on("exit", (code) => {
      this.#onExit(slot, code);
      markExited();
    });
    return slot;
  }

  #assign(slot: Slot, task: Task): void {
    if (slot.idleTimer !== null) {
      clearTimeout(slot.idleTimer);
      slot.idleTimer = null;
    }
    slot.task = task;
    task.slot = slot;
    task.state = "running";
    const scope = scopeOf(task);
    this.#running.set(scope, (this.#running.get(scope) ?? 0) + 1);
    // A busy worker keeps the process alive like any pending I/O; an idle one does not.
    slot.worker.ref();
    try {
      slot.worker.postMessage({
        type: "run",
        taskId: task.id,
        moduleUrl: task.handler.moduleUrl,
        exportName: task.handler.exportName,
        args: task.args,
        requestId: task.options.requestId ?? null,
        scope: task.options.scope ?? "global",
      });
    } catch (error) {
      // Arguments that cannot be structured-cloned: the worker never saw the task.
      this.#finish(slot, task, false, new IsolatedToolError(false, null, error));
    }
  }

  #onMessage(slot: Slot, message: FromWorkerMessage): void {
    const task = slot.task;
    // A message of an earlier (finished or killed) task is ignored.
    if (task === null || message.taskId !== task.id) return;
    switch (message.type) {
      case "progress":
        notify(() => task.options.onProgress?.(message.progress, message.total, message.message));
        break;
      case "log":
        notify(() => task.options.onLog?.(message.level as LoggingLevel, message.data));
        break;
      case "result":
        this.#finish(slot, task, true, message.value);
        break;
      case "error": {
        const { signal } = task.options;
        // After a cancellation the tool typically throws its abort reason: report the abort.
        const failure = signal?.aborted
          ? signal.reason
          : new IsolatedToolError(false, null, rebuildError(message.error));
        this.#finish(slot, task, false, failure);
        break;
      }
    }
  }

  /** The task ended in its worker, which is free again. */
  #finish(slot: Slot, task: Task, ok: boolean, value: unknown): void {
    slot.task = null;
    this.#settle(task, ok, value);
    this.#release(slot);
  }

  /** Hands a free worker the next queued task, or parks it idle with an unref'd timer. */
  #release(slot: Slot): void {
    if (slot.terminating) return;
    if (this.#closed) {
      this.#retire(slot);
      return;
    }
    const next = this.#takeNext();
    if (next !== undefined) {
      this.#assign(slot, next);
      return;
    }
    slot.worker.unref();
    this.#idle.push(slot);
    if (this.#options.idleTimeoutMs !== Number.POSITIVE_INFINITY) {
      slot.idleTimer = setTimeout(() => this.#retire(slot), this.#options.idleTimeoutMs);
      slot.idleTimer.unref();
    }
  }

  /** Terminates a worker; it leaves the pool when its `exit` event fires. */
  #retire(slot: Slot): void {
    if (slot.terminating) return;
    slot.terminating = true;
    if (slot.idleTimer !== null) {
      clearTimeout(slot.idleTimer);
      slot.idleTimer = null;
    }
    removeItem(this.#idle, slot);
    slot.worker.terminate().catch(() => {
      // terminate() only rejects for a thread that is already gone; `exit` covers it.
    });
  }

  #onExit(slot: Slot, exitCode: number): void {
    this.#workers.delete(slot);
    removeItem(this.#idle, slot);
    if (slot.idleTimer !== null) clearTimeout(slot.idleTimer);
    const task = slot.task;
    slot.task = null;
    if (task !== null) {
      // The worker died under its task: uncaught exception, process.exit(), out of memory.
      const cause = slot.error ?? new Error(`worker exited with code ${exitCode}`);
      this.#settle(task, false, new IsolatedToolError(true, exitCode, cause));
    }
    this.#pump();
  }

  /** Starts queued tasks on replacement workers once capacity is back. */
  #pump(): void {
    while (!this.#closed && this.#queued > 0) {
      if (this.#idle.length === 0 && this.#workers.size >= this.#options.maxWorkers) return;
      const next = this.#takeNext();
      if (next === undefined) return;
      this.#dispatch(next);
    }
  }

  #kill(task: Task): boolean {
    if (task.state === "queued") {
      this.#dequeue(task);
      this.#settle(task, false, new ToolKilledError());
      return false;
    }
    const slot = task.slot;
    if (task.state !== "running" || slot === null || slot.task !== task) return false;
    slot.task = null;
    this.#settle(task, false, new ToolKilledError());
    this.#retire(slot);
    return true;
  }

  #abort(task: Task): void {
    const { signal } = task.options;
    if (signal === undefined) return;
    if (task.state === "queued") {
      this.#dequeue(task);
      this.#settle(task, false, signal.reason);
    } else if (task.state === "running" && task.slot !== null) {
      task.slot.worker.postMessage({
        type: "cancel",
        taskId: task.id,
        reason: cancelReason(signal.reason),
      });
    }
  }

  #settle(task: Task, ok: boolean, value: unknown): void {
    if (task.state === "settled") return;
    if (task.state === "running") {
      const scope = scopeOf(task);
      const running = (this.#running.get(scope) ?? 1) - 1;
      if (running <= 0) this.#running.delete(scope);
      else this.#running.set(scope, running);
    }
    task.state = "settled";
    task.slot = null;
    if (task.onAbort !== null) {
      task.options.signal?.removeEventListener("abort", task.onAbort);
      task.onAbort = null;
    }
    if (ok) task.resolve(value);
    else task.reject(value);
  }
}

/** Calls a caller's callback; its failure must not corrupt the pool's bookkeeping. */
function notify(callback: () => unknown): void {
  try {
    const returned = callback();
    if (returned instanceof Promise) returned.catch(() => {});
  } catch {
    // The callback's own bug; the task goes on.
  }
}

/** What the worker's `ctx.signal.reason` is rebuilt from. */
function cancelReason(reason: unknown): CancelReason {
  if (reason instanceof RequestCancelledError) {
    return { source: reason.source, reason: reason.reason };
  }
  return { source: null, reason: typeof reason === "string" ? reason : null };
}

/** The tool's error, rebuilt for local logs (the `cause` of an `IsolatedToolError`). */
function rebuildError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack !== null) error.stack = serialized.stack;
  return error;
}

/** The scope a task counts against; "" for a task started without one (not bounded per scope). */
function scopeOf(task: Task): string {
  return task.options.scope ?? "";
}

function first<T>(set: Set<T>): T | undefined {
  for (const item of set) return item;
  return undefined;
}

function removeItem<T>(items: T[], item: T): void {
  const index = items.indexOf(item);
  if (index !== -1) items.splice(index, 1);
}
