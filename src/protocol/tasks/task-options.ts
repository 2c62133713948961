/**
 * The `tasks` options of `createMcpServer`: what they are, their defaults, and reading them once
 * into the settings of the task service (the store, given or a bounded memory store; retention;
 * polling; the janitor's interval).
 */
import { InvalidOptionError } from "../../errors.js";
import { OPTION, readOption } from "../../option-schema.js";
import { MemoryTaskStore } from "../../tasks/memory-task-store.js";
import type { TaskStore } from "../../tasks/task-store.js";
import { isPlainObject } from "../wire/index.js";

/** Task options of `createMcpServer({ tasks })`; every one has a documented default. */
export interface TaskOptions {
  /**
   * Where tasks are kept. Default: a {@link MemoryTaskStore} with the three bounds below;
   * `RedisTaskStore` (`conduit-mcp/redis`) shares them across nodes (the bounds are then its own
   * options).
   */
  readonly store?: TaskStore;
  /** Tasks one scope may hold (running or finished; a finished one makes room). Default 100. */
  readonly maxTasksPerScope?: number;
  /** Tasks the server holds in all. Default 10 000. */
  readonly maxTasks?: number;
  /** Largest result or error a task keeps, in bytes of JSON. Default 1 048 576 (1 MiB). */
  readonly maxResultBytes?: number;
  /**
   * Bytes of results, errors, questions and status messages one bucket's tasks may hold. Default
   * 8 MiB.
   */
  readonly maxTaskBytesPerScope?: number;
  /** Bytes of every task together. Default 128 MiB. */
  readonly maxTaskBytes?: number;
  /** How long a finished task is kept when the client asks for nothing else (ms). Default 3 600 000 (1 h). */
  readonly defaultTtlMs?: number;
  /** The longest retention a 2025-era client may ask for (`params.task.ttl`, ms). Default 86 400 000 (24 h). */
  readonly maxTtlMs?: number;
  /** The polling interval suggested to clients (ms). Default 1 000. */
  readonly pollIntervalMs?: number;
  /** How often expired tasks are removed (ms); 0 turns the janitor off. Default 60 000. */
  readonly sweepIntervalMs?: number;
}

/** The defaults of {@link TaskOptions}. */
export const TASK_DEFAULTS = Object.freeze({
  defaultTtlMs: 3_600_000,
  maxTtlMs: 86_400_000,
  pollIntervalMs: 1_000,
  sweepIntervalMs: 60_000,
});

/** {@link TaskOptions} read and checked. */
export interface TaskSettings {
  readonly store: TaskStore;
  readonly defaultTtlMs: number;
  readonly maxTtlMs: number;
  readonly pollIntervalMs: number;
  /** 0: no janitor. */
  readonly sweepIntervalMs: number;
}

/**
 * Reads the `tasks` options (undefined: every default); an invalid one throws
 * {@link InvalidOptionError} naming it (`tasks.<name>`).
 *
 * @example
 * ```ts
 * const settings = readTaskOptions({ maxTasksPerScope: 10 });
 * settings.store; // a MemoryTaskStore holding at most 10 tasks per scope
 * ```
 */
export function readTaskOptions(options: TaskOptions | undefined): TaskSettings {
  const given: TaskOptions = options ?? {};
  if (!isPlainObject(given as unknown)) {
    throw new InvalidOptionError("tasks", "an options object or false", given);
  }
  const defaultTtlMs = readOption(
    OPTION.durationMs,
    "tasks.defaultTtlMs",
    given.defaultTtlMs,
    TASK_DEFAULTS.defaultTtlMs,
  );
  const maxTtlMs = readOption(
    OPTION.durationMs,
    "tasks.maxTtlMs",
    given.maxTtlMs,
    TASK_DEFAULTS.maxTtlMs,
  );
  const pollIntervalMs = readOption(
    OPTION.positiveInteger,
    "tasks.pollIntervalMs",
    given.pollIntervalMs,
    TASK_DEFAULTS.pollIntervalMs,
  );
  const sweepIntervalMs = readOption(
    OPTION.timerOrZeroMs,
    "tasks.sweepIntervalMs",
    given.sweepIntervalMs,
    TASK_DEFAULTS.sweepIntervalMs,
  );
  if (given.store !== undefined && !isTaskStore(given.store)) {
    throw new InvalidOptionError(
      "tasks.store",
      "a TaskStore (src/tasks/task-store.ts)",
      given.store,
    );
  }
  const store =
    given.store ??
    new MemoryTaskStore({
      ...(given.maxTasksPerScope === undefined ? {} : { maxTasksPerScope: given.maxTasksPerScope }),
      ...(given.maxTasks === undefined ? {} : { maxTasks: given.maxTasks }),
      ...(given.maxResultBytes === undefined ? {} : { maxResultBytes: given.maxResultBytes }),
      ...(given.maxTaskBytesPerScope === undefined
        ? {}
        : { maxTaskBytesPerScope: given.maxTaskBytesPerScope }),
      ...(given.maxTaskBytes === undefined ? {} : { maxTaskBytes: given.maxTaskBytes }),
    });
  return { store, defaultTtlMs, maxTtlMs, pollIntervalMs, sweepIntervalMs };
}

const STORE_METHODS = [
  "create",
  "get",
  "list",
  "update",
  "finish",
  "cancel",
  "cancelScope",
  "sweep",
  "onChange",
] as const;

/** Whether `value` has every method of a {@link TaskStore}. */
function isTaskStore(value: unknown): value is TaskStore {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return STORE_METHODS.every((name) => typeof candidate[name] === "function");
}
