/**
 * The messages between the pool (main thread) and a worker. Each carries the task id, so a
 * message a finished task still sends (a stray timer calling `ctx.progress`) is ignored.
 * Internal: not exported from the package.
 */
import type { RequestId } from "../cancellation/types.js";
import type { CancellationSource } from "../errors.js";

/** Why the main thread cancels: enough to rebuild a `RequestCancelledError` in the worker. */
export interface CancelReason {
  readonly source: CancellationSource | null;
  readonly reason: string | null;
}

/** An error reduced to cloneable text, for local logs only. */
export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | null;
}

/** Main thread → worker. */
export type ToWorkerMessage =
  | {
      readonly type: "run";
      readonly taskId: number;
      readonly moduleUrl: string;
      readonly exportName: string;
      readonly args: unknown;
      readonly requestId: RequestId | null;
      readonly scope: string;
    }
  | { readonly type: "cancel"; readonly taskId: number; readonly reason: CancelReason };

/** Worker → main thread. */
export type FromWorkerMessage =
  | {
      readonly type: "progress";
      readonly taskId: number;
      readonly progress: number;
      readonly total: number | undefined;
      readonly message: string | undefined;
    }
  | {
      readonly type: "log";
      readonly taskId: number;
      readonly level: string;
      readonly data: unknown;
    }
  | { readonly type: "result"; readonly taskId: number; readonly value: unknown }
  | { readonly type: "error"; readonly taskId: number; readonly error: SerializedError };
