/**
 * The prompts capability (MCP 2025-11-25 server/prompts,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/prompts, and 2026-07-28):
 * `prompts/list` and `prompts/get`, the served prompts, and what `initialize` and
 * `server/discover` advertise of them.
 */
import { ErrorCode } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import type {
  ArgumentCheck,
  HandlerCall,
  HandlerInvocation,
  HandlerResult,
  MethodDefinition,
  MethodHost,
  MethodRequest,
  Prompt,
  ProtocolFeature,
} from "../calls/index.js";
import {
  accessOf,
  listMethod,
  PrimitiveCollection,
  progressTokenOf,
  visibilityOf,
} from "../calls/index.js";
import type { ListCursors } from "../wire/index.js";

/** What {@link PromptFeature} takes. */
export interface PromptFeatureOptions {
  readonly host: MethodHost;
  readonly prompts?: readonly Prompt[] | undefined;
  readonly cursors: ListCursors;
  readonly pageSize: number;
  readonly cacheTtlMs: number;
  /** Whether list changes are announced: on 2025-era GET streams, on `subscriptions/listen`. */
  readonly listChanged: { readonly "2025": boolean; readonly "2026": boolean };
}

/**
 * The prompts capability.
 *
 * @example
 * ```ts
 * const prompts = new PromptFeature({ host, prompts: [review], cursors, pageSize: 100,
 *   cacheTtlMs: 60_000, listChanged: { "2025": false, "2026": false } });
 * ```
 */
export class PromptFeature implements ProtocolFeature {
  readonly id = "prompts";
  /** The served prompts. */
  readonly prompts: PrimitiveCollection<Prompt>;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025: Readonly<Record<string, unknown>>;
  readonly capabilities2026: Readonly<Record<string, unknown>>;
  private readonly host: MethodHost;

  constructor(options: PromptFeatureOptions) {
    this.host = options.host;
    this.prompts = new PrimitiveCollection<Prompt>({
      list: "prompts",
      shape: {
        key: "name",
        methods: ["checkArguments", "get", "toResult", "complete"],
        what: "a definePrompt() result",
      },
      items: options.prompts,
    });
    this.methods = {
      "prompts/list": listMethod({ ...options, collection: this.prompts, field: "prompts" }),
      "prompts/get": { eras: "both", holds: "stream", run: (r) => this.get(r) },
    };
    this.capabilities2025 = { prompts: { listChanged: options.listChanged["2025"] } };
    this.capabilities2026 = { prompts: options.listChanged["2026"] ? { listChanged: true } : {} };
  }

  private get(request: MethodRequest): Promise<void> {
    const { host } = this;
    const { params } = request;
    const name = params?.name;
    const prompt = typeof name === "string" ? this.prompts.get(name) : undefined;
    const access = prompt === undefined ? "hidden" : accessOf(prompt, visibilityOf(request.meta));
    if (prompt === undefined || access === "hidden") {
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown prompt: ${reflectText(name)}`,
      );
    }
    if (access === "forbidden") return host.forbidden(request, prompt.scopes);
    const check = prompt.checkArguments(params?.arguments ?? {});
    // A schema library that validates asynchronously answers later; a throw or rejection is
    // -32603 from the dispatcher (nothing echoed).
    return check instanceof Promise
      ? check.then((settled) => this.checked(request, prompt, settled))
      : this.checked(request, prompt, check);
  }

  /** Runs the prompt once its arguments are checked, or answers -32602 with what is wrong. */
  private checked(
    request: MethodRequest,
    prompt: Prompt,
    check: ArgumentCheck<Record<string, unknown>>,
  ): Promise<void> {
    const { host } = this;
    if (!check.ok) {
      return host.answerError(request, ErrorCode.InvalidParams, "Invalid prompt arguments", {
        errors: check.issues,
      });
    }
    return host.startCall(
      request,
      new PromptInvocation(prompt, check.args),
      progressTokenOf(request.params),
    );
  }
}

/** A `prompts/get`. */
class PromptInvocation implements HandlerInvocation {
  readonly method = "prompts/get";
  readonly kind = "prompt";
  readonly name: string;
  constructor(
    private readonly prompt: Prompt,
    private readonly args: Record<string, unknown>,
  ) {
    this.name = prompt.name;
  }
  invoke(ctx: HandlerCall): unknown {
    return this.prompt.get(this.args, ctx);
  }
  toResult(value: unknown): HandlerResult {
    const result = this.prompt.toResult(value);
    return result.ok
      ? { ok: true, result: result.result }
      : { ok: false, error: new TypeError(result.message) };
  }
}
