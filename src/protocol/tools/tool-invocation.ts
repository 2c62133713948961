/**
 * A `tools/call` as a handler call runs it: the tool's handler (or its isolated worker) with
 * validated arguments, after the tool's `beforeTask` when it has one.
 */
import { InputPending } from "../asking/index.js";
import type { HandlerCall, HandlerInvocation, HandlerResult } from "../calls/index.js";
import type { Tool } from "./define-tool.js";

/**
 * A `tools/call`: the handler (or its isolated worker) with validated arguments.
 *
 * @example
 * ```ts
 * const invocation = new ToolInvocation(tool, check.args);
 * ```
 */
export class ToolInvocation implements HandlerInvocation {
  /**
   * @param prepared - what the tool's `beforeTask` returned in its own phase (before-task.ts),
   *   boxed; null when it has not run (it then runs just before the handler).
   */
  constructor(
    readonly tool: Tool,
    readonly args: unknown,
    private readonly prepared: { readonly value: unknown } | null = null,
  ) {}

  // Read from the tool, not copied: a running call holds its invocation (docs/profile.md,
  // "Held calls at 10 000").
  get method(): "tools/call" {
    return "tools/call";
  }

  get kind(): "tool" {
    return "tool";
  }

  get name(): string {
    return this.tool.name;
  }

  get timeoutMs(): number | null | undefined {
    return this.tool.timeoutMs;
  }

  /** The same call, `beforeTask` done: the handler gets `value`. */
  with(value: unknown): ToolInvocation {
    return new ToolInvocation(this.tool, this.args, { value });
  }
  invoke(ctx: HandlerCall): unknown {
    const { tool } = this;
    if (tool.isolatedHandler !== null) return ctx.runIsolated(tool.isolatedHandler, this.args);
    if (tool.beforeTask === null) return tool.handler(this.args as never, ctx, undefined as never);
    if (this.prepared === null) return prepareThenRun(tool, this.args, ctx);
    return tool.handler(this.args as never, ctx, this.prepared.value as never);
  }
  toResult(value: unknown): HandlerResult | Promise<HandlerResult> {
    return this.tool.toResult(value);
  }
}

/**
 * `beforeTask`, then the handler with its value, in one run. Should `beforeTask` return while a
 * question is still pending (it caught the ask's rejection), the handler does not run: the run
 * ends asking, as it would have had the ask's rejection gone through.
 */
async function prepareThenRun(tool: Tool, args: unknown, ctx: HandlerCall): Promise<unknown> {
  const prepared = await (tool.beforeTask as NonNullable<Tool["beforeTask"]>)(args as never, ctx);
  if (ctx.asking()) throw new InputPending();
  return tool.handler(args as never, ctx, prepared as never);
}
