/**
 * Isolation: isolated tools run in a bounded pool of worker threads, so a kill at the stream
 * cancel timeout terminates CPU-bound code that never checks its signal (README, "Serving your own tools").
 *
 * @example
 * ```ts
 * import { isolatedHandler, WorkerPool } from "./isolation/index.js";
 * const pool = new WorkerPool();
 * const task = pool.start(isolatedHandler(new URL("./crunch.js", import.meta.url), "crunch"), { n: 5 });
 * console.log(await task.result);
 * await pool.close();
 * ```
 */
export {
  IsolatedToolError,
  ToolKilledError,
  WorkerPoolClosedError,
  WorkerPoolFullError,
} from "../errors.js";
export type { IsolatedToolContext, IsolatedToolFunction } from "./isolated-context.js";
export { type IsolatedHandler, isIsolatedHandler, isolatedHandler } from "./isolated-handler.js";
export type { ResolvedPoolOptions, WorkerPoolOptions } from "./pool-options.js";
export {
  type IsolatedRunOptions,
  type IsolatedTask,
  type IsolatedTaskState,
  WorkerPool,
} from "./worker-pool.js";
