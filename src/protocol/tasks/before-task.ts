/**
 * A tool's `beforeTask` (define-tool.ts): ask first, then become a task.
 *
 * SEP-2663 lets a `tools/call` gather input through multi round-trip requests (SEP-2322,
 * `input_required` results and retries) and only then answer a `CreateTaskResult`; servers doing
 * so "SHOULD resolve all MRTR exchanges synchronously before responding with a CreateTaskResult"
 * ("Composition with Multi Round-Trip Requests",
 * https://modelcontextprotocol.io/extensions/tasks/overview). Input needed before the task uses
 * the request's rounds; input needed during it, the task's own `inputRequests` and
 * `tasks/update` (task-asker.ts). The two phases keep separate question keys.
 *
 * - {@link BeforeTaskInvocation}: the request's phase on a 2026-07-28 request that gets a task.
 *   It runs `beforeTask` as an ordinary handler call, so its asks answer `input_required` and the
 *   retry runs it again with the answers; once it returns with no question pending, `become`
 *   creates the task (whose run gets the value) and the request answers that task, without
 *   `requestState` or `inputRequests`.
 * - `prepareThenRun` (tool-invocation.ts): everywhere else (a plain call; a 2025-era task, created at once by
 *   `params.task`), `beforeTask` runs just before the handler in the same run, with the same
 *   context: its asks are the run's asks.
 */

import type {
  HandlerCall,
  HandlerInvocation,
  HandlerResult,
  InvocationAnswer,
} from "../calls/index.js";
import type { Tool } from "../tools/index.js";

/** Creates the task for what `beforeTask` resolved; resolves the request's answer. */
export type BecomeTask = (prepared: unknown, call: HandlerCall) => Promise<InvocationAnswer>;

/**
 * The `beforeTask` phase of a `tools/call` that becomes a task once it returns.
 *
 * @example
 * ```ts
 * const phase = new BeforeTaskInvocation(tool, args, (prepared, call) => createTask(prepared, call));
 * ```
 */
export class BeforeTaskInvocation implements HandlerInvocation {
  readonly method = "tools/call";
  readonly kind = "tool";
  readonly name: string;
  /** The tool's own deadline covers this phase too. */
  readonly timeoutMs: number | null | undefined;

  constructor(
    private readonly tool: Tool,
    private readonly args: unknown,
    private readonly become: BecomeTask,
  ) {
    this.name = tool.name;
    this.timeoutMs = tool.timeoutMs;
  }

  invoke(ctx: HandlerCall): unknown {
    return (this.tool.beforeTask as NonNullable<Tool["beforeTask"]>)(this.args as never, ctx);
  }

  /** Never used: {@link BeforeTaskInvocation.answer} answers instead. */
  toResult(): HandlerResult {
    return { ok: false, error: new TypeError("a beforeTask phase answers with its task") };
  }

  answer(value: unknown, call: HandlerCall): Promise<InvocationAnswer> {
    return this.become(value, call);
  }
}
