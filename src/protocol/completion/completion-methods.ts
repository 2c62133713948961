/**
 * The completion capability: `completion/complete` (MCP 2025-11-25 server/utilities/completion,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion, and
 * 2026-07-28) for a prompt's argument or a resource template's variable.
 */
import { ErrorCode } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import type {
  HandlerInvocation,
  HandlerResult,
  MethodDefinition,
  MethodHost,
  MethodRequest,
  PrimitiveCollection,
  Prompt,
  ProtocolFeature,
  VisibilityContext,
} from "../calls/index.js";
import { accessOf, visibilityOf } from "../calls/index.js";
import type { ResourceTemplate } from "../resources/index.js";
import {
  type CompletionRequest,
  completionResult,
  NO_COMPLETIONS,
  parseCompletionRequest,
} from "./completion.js";

/** What {@link CompletionFeature} takes: the collections whose items it completes. */
export interface CompletionFeatureOptions {
  readonly host: MethodHost;
  readonly prompts: PrimitiveCollection<Prompt>;
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
}

/**
 * The completion capability.
 *
 * @example
 * ```ts
 * const completion = new CompletionFeature({ host, prompts: prompts.prompts,
 *   resourceTemplates: resources.resourceTemplates });
 * ```
 */
export class CompletionFeature implements ProtocolFeature {
  readonly id = "completions";
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025 = { completions: {} };
  readonly capabilities2026 = { completions: {} };

  constructor(private readonly options: CompletionFeatureOptions) {
    this.methods = {
      "completion/complete": { eras: "both", run: (r) => this.complete(r) },
    };
  }

  private complete(request: MethodRequest): Promise<void> {
    const { host, prompts, resourceTemplates } = this.options;
    const parsed = parseCompletionRequest(request.params);
    if (typeof parsed === "string")
      return host.answerError(request, ErrorCode.InvalidParams, parsed);
    const ctx = visibilityOf(request.meta);
    const { ref } = parsed;
    if (ref.type === "ref/prompt") {
      const prompt = prompts.get(ref.name);
      const access = prompt === undefined ? "hidden" : accessOf(prompt, ctx);
      if (prompt === undefined || access === "hidden") {
        return host.answerError(
          request,
          ErrorCode.InvalidParams,
          `Unknown prompt: ${reflectText(ref.name)}`,
        );
      }
      if (access === "forbidden") return host.forbidden(request, prompt.scopes);
      return host.startCall(request, new CompleteInvocation(parsed, ctx, prompt, null));
    }
    const template = resourceTemplates.get(ref.uri);
    const access = template === undefined ? "hidden" : accessOf(template, ctx);
    if (template === undefined || access === "hidden") {
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown resource template: ${reflectText(ref.uri)}`,
      );
    }
    if (access === "forbidden") return host.forbidden(request, template.scopes);
    if (!template.variables.includes(parsed.argument.name)) {
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown template variable: ${reflectText(parsed.argument.name)}`,
      );
    }
    return host.startCall(request, new CompleteInvocation(parsed, ctx, null, template));
  }
}

const NO_VALUES: readonly string[] = Object.freeze([]);

/** A `completion/complete` for a prompt argument or a template variable. */
class CompleteInvocation implements HandlerInvocation {
  readonly method = "completion/complete";
  readonly kind = "completion";
  readonly name: string;
  constructor(
    private readonly request: CompletionRequest,
    private readonly ctx: VisibilityContext,
    private readonly prompt: Prompt | null,
    private readonly template: ResourceTemplate | null,
  ) {
    this.name = prompt !== null ? prompt.name : (template as ResourceTemplate).uriTemplate;
  }
  invoke(): unknown {
    const { argument, context } = this.request;
    if (this.prompt !== null) {
      return this.prompt.complete(argument.name, argument.value, context, this.ctx) ?? NO_VALUES;
    }
    const completer = (this.template as ResourceTemplate).completer(argument.name);
    return completer === null
      ? NO_VALUES
      : completer(argument.value, { arguments: context }, this.ctx);
  }
  toResult(value: unknown): HandlerResult {
    if (value === NO_VALUES) return { ok: true, result: NO_COMPLETIONS as Record<string, unknown> };
    const result = completionResult(value);
    return result === null
      ? { ok: false, error: new TypeError("a completer returned something other than strings") }
      : { ok: true, result };
  }
}
