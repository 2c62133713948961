/**
 * Options of {@link WorkerPool}, checked at construction so a misconfiguration fails at start-up,
 * never mid-request (see src/option-schema.ts).
 */
import type { ResourceLimits } from "node:worker_threads";

import { z } from "zod";

import { InvalidOptionError } from "../errors.js";
import { MAX_TIMER_MS, OPTION, optionKind, readOption } from "../option-schema.js";
import { optionalBuiltin } from "../runtime.js";

/** What `new WorkerPool(options)` takes; every field is optional. */
export interface WorkerPoolOptions {
  /**
   * Most worker threads alive at once, terminating ones included. Default
   * `max(1, os.availableParallelism() - 1)`: one core stays with the event loop serving HTTP.
   */
  readonly maxWorkers?: number;
  /**
   * Most tasks waiting for a worker; one more is refused at once with `WorkerPoolFullError`.
   * Default 1 000; `0` refuses whenever every worker is busy; `Infinity` disables the bound.
   */
  readonly maxQueue?: number;
  /**
   * Most workers one scope (the task's `scope`) may hold at once; its further tasks wait even
   * when workers are free. Default `ceil(maxWorkers / 2)`: one tenant never holds every worker
   * (unless there is only one).
   */
  readonly maxWorkersPerScope?: number;
  /**
   * Most tasks one scope may have waiting; one more is refused with `WorkerPoolFullError`.
   * Default 16, so one tenant cannot fill the global queue.
   */
  readonly maxQueuePerScope?: number;
  /**
   * An idle worker is terminated after this many milliseconds (timers are unref'd). Default
   * 30 000; `Infinity` keeps idle workers (they never keep the process alive either way).
   */
  readonly idleTimeoutMs?: number;
  /** V8 heap and stack limits of every worker; exceeding them kills that worker only. */
  readonly resourceLimits?: ResourceLimits;
}

/** The options with defaults applied. */
export interface ResolvedPoolOptions {
  readonly maxWorkers: number;
  readonly maxQueue: number;
  readonly maxWorkersPerScope: number;
  readonly maxQueuePerScope: number;
  readonly idleTimeoutMs: number;
  readonly resourceLimits: ResourceLimits | undefined;
}

/** Idle timeouts are timer delays (Infinity: no timer at all). */
const IDLE_TIMEOUT = optionKind(
  z.union([z.number().min(0).max(MAX_TIMER_MS), z.literal(Number.POSITIVE_INFINITY)]),
  `milliseconds from 0 to ${MAX_TIMER_MS}, or Infinity`,
);

const RESOURCE_LIMIT_KEYS = [
  "maxOldGenerationSizeMb",
  "maxYoungGenerationSizeMb",
  "codeRangeSizeMb",
  "stackSizeMb",
] as const;

/**
 * Applies defaults and checks every option.
 *
 * @example
 * ```ts
 * resolvePoolOptions({ maxWorkers: 2 }).maxQueue; // 1000
 * ```
 */
export function resolvePoolOptions(options: WorkerPoolOptions = {}): ResolvedPoolOptions {
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptionError("WorkerPool options", "an object", options);
  }
  const { maxWorkers, maxQueue, idleTimeoutMs, resourceLimits } = options;
  const workers = checkMaxWorkers(maxWorkers);
  return {
    maxWorkers: workers,
    maxQueue: checkMaxQueue(maxQueue),
    maxWorkersPerScope: checkPositive(
      "maxWorkersPerScope",
      options.maxWorkersPerScope,
      Math.ceil(workers / 2),
    ),
    maxQueuePerScope: checkPositive("maxQueuePerScope", options.maxQueuePerScope, 16),
    idleTimeoutMs: checkIdleTimeout(idleTimeoutMs),
    resourceLimits: checkResourceLimits(resourceLimits),
  };
}

function checkMaxWorkers(value: unknown): number {
  const fallback = Math.max(1, parallelism() - 1);
  return readOption(OPTION.positiveInteger, "maxWorkers", value, fallback);
}

function checkPositive(option: string, value: unknown, fallback: number): number {
  return readOption(OPTION.positiveLimit, option, value, fallback);
}

function checkMaxQueue(value: unknown): number {
  return readOption(OPTION.nonNegativeLimit, "maxQueue", value, 1000);
}

function checkIdleTimeout(value: unknown): number {
  return readOption(IDLE_TIMEOUT, "idleTimeoutMs", value, 30_000);
}

function checkResourceLimits(value: unknown): ResourceLimits | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptionError("resourceLimits", "an object", value);
  }
  const limits: Record<string, number> = {};
  for (const [key, limit] of Object.entries(value)) {
    if (!(RESOURCE_LIMIT_KEYS as readonly string[]).includes(key)) {
      throw new InvalidOptionError(
        `resourceLimits.${key}`,
        `one of ${RESOURCE_LIMIT_KEYS.join(", ")}`,
        key,
      );
    }
    if (limit === undefined) continue;
    if (typeof limit !== "number" || !Number.isFinite(limit) || limit <= 0) {
      throw new InvalidOptionError(
        `resourceLimits.${key}`,
        "a positive number of megabytes",
        limit,
      );
    }
    limits[key] = limit;
  }
  return Object.freeze(limits);
}

/**
 * `os.availableParallelism()` where node:os exists; the web's `navigator.hardwareConcurrency`
 * elsewhere (the package entry loads no node:os: docs/runtimes.md); else 1.
 */
function parallelism(): number {
  const os = optionalBuiltin<typeof import("node:os")>("node:os");
  if (os !== undefined) return os.availableParallelism();
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator
    ?.hardwareConcurrency;
  return typeof cores === "number" && Number.isSafeInteger(cores) && cores > 0 ? cores : 1;
}
