/**
 * The entry file of every pool worker thread: imports an isolated tool's module, calls its
 * named export as `(args, ctx)` one task at a time, forwards `ctx.progress` / `ctx.log` to the
 * main thread, and aborts `ctx.signal` when the main thread forwards a cancellation. A kill is
 * not handled here: the main thread terminates the whole thread, which is the point: CPU-bound
 * code that never checks its signal really stops at the stream cancel timeout.
 *
 * @example
 * ```ts
 * // Never imported directly: the pool starts it with `new Worker(workerEntryUrl)`.
 * ```
 */
import { parentPort, receiveMessageOnPort } from "node:worker_threads";

import { RequestCancelledError } from "../errors.js";
import { isLoggingLevel } from "../logging-levels.js";
import type { IsolatedToolContext, IsolatedToolFunction } from "./isolated-context.js";
import type {
  CancelReason,
  FromWorkerMessage,
  SerializedError,
  ToWorkerMessage,
} from "./messages.js";

if (parentPort === null) {
  throw new Error("conduit-mcp: worker-entry must run in a worker thread");
}
const port = parentPort;

/** The running task's controller; the pool sends one task at a time, a Map keeps it simple. */
const controllers = new Map<number, AbortController>();

port.on("message", handle);

function handle(message: ToWorkerMessage): void {
  if (message.type === "run") {
    void runTask(message);
  } else if (message.type === "cancel") {
    controllers.get(message.taskId)?.abort(cancelReason(message.reason));
  }
}

/**
 * Takes waiting messages off the port synchronously. A CPU-bound loop never yields to the event
 * loop, so the main thread's cancel would otherwise wait until the tool returned; with this,
 * `ctx.cancelled()` sees it (and aborts `ctx.signal`) in the middle of the loop. The pool sends
 * nothing but cancels while a task runs, so no other message is taken early.
 */
function drainMessages(): void {
  for (
    let entry = receiveMessageOnPort(port);
    entry !== undefined;
    entry = receiveMessageOnPort(port)
  ) {
    handle(entry.message as ToWorkerMessage);
  }
}

async function runTask(task: Extract<ToWorkerMessage, { type: "run" }>): Promise<void> {
  const { taskId } = task;
  // Created before any await, so a cancel posted right after the run is never missed.
  const controller = new AbortController();
  controllers.set(taskId, controller);
  let done = false;
  const post = (message: FromWorkerMessage): void => {
    if (!done) port.postMessage(message);
  };
  const ctx: IsolatedToolContext = {
    signal: controller.signal,
    cancelled() {
      if (!controller.signal.aborted) drainMessages();
      return controller.signal.aborted;
    },
    requestId: task.requestId,
    scope: task.scope,
    progress(progress, total, message) {
      post({ type: "progress", taskId, progress, total, message });
      return Promise.resolve();
    },
    log(level, data) {
      // Unknown levels are dropped, as the server's own ToolContext.log drops them.
      if (isLoggingLevel(level)) post({ type: "log", taskId, level, data });
      return Promise.resolve();
    },
  };
  try {
    const fn = await loadTool(task.moduleUrl, task.exportName);
    // A task cancelled while its module loaded must not start.
    controller.signal.throwIfAborted();
    const value: unknown = await fn(task.args, ctx);
    try {
      post({ type: "result", taskId, value });
    } catch (error) {
      // A result that cannot be structured-cloned is a tool failure, not a worker crash.
      post({ type: "error", taskId, error: serializeError(error) });
    }
  } catch (error) {
    post({ type: "error", taskId, error: serializeError(error) });
  } finally {
    done = true;
    controllers.delete(taskId);
  }
}

/** Imports the module (cached by the module loader after the first task) and picks the export. */
async function loadTool(
  moduleUrl: string,
  exportName: string,
): Promise<IsolatedToolFunction<unknown>> {
  const namespace = (await import(moduleUrl)) as Record<string, unknown>;
  const fn = namespace[exportName];
  if (typeof fn !== "function") {
    throw new TypeError(`export ${JSON.stringify(exportName)} of ${moduleUrl} is not a function`);
  }
  return fn as IsolatedToolFunction<unknown>;
}

/** The worker-side abort reason: a `RequestCancelledError` when the main thread sent a source. */
function cancelReason(reason: CancelReason): unknown {
  if (reason.source !== null) return new RequestCancelledError(reason.source, reason.reason);
  return new DOMException(reason.reason ?? "This operation was aborted", "AbortError");
}

/** Reduces anything thrown to cloneable text; never throws. */
function serializeError(error: unknown): SerializedError {
  try {
    if (error instanceof Error) {
      return {
        name: String(error.name),
        message: String(error.message),
        stack: error.stack ?? null,
      };
    }
    return { name: "Error", message: String(error), stack: null };
  } catch {
    return { name: "Error", message: "an unprintable value was thrown", stack: null };
  }
}
