/**
 * The tools capability: `tools/list` and `tools/call` (MCP 2025-11-25 server/tools,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/tools, and 2026-07-28), the
 * served tools, and what `initialize` and `server/discover` advertise of them.
 */
import { ErrorCode } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import type {
  MethodDefinition,
  MethodHost,
  MethodRequest,
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
import { checkParamHeaders, isPlainObject } from "../wire/index.js";
import type { ArgumentCheck, Tool } from "./define-tool.js";
import { ToolInvocation } from "./tool-invocation.js";

/**
 * How `tools/call` hands a call to tasks, when they are served (tasks/task-methods.ts): for a
 * task-supporting tool, or a 2025-era call carrying `params.task`.
 */
export interface ToolTasks {
  call(request: MethodRequest, invocation: ToolInvocation): Promise<void>;
}

/** What {@link ToolFeature} takes. */
export interface ToolFeatureOptions {
  readonly host: MethodHost;
  readonly tools?: readonly Tool[] | undefined;
  readonly cursors: ListCursors;
  readonly pageSize: number;
  readonly cacheTtlMs: number;
  /** Whether list changes are announced: on 2025-era GET streams, on `subscriptions/listen`. */
  readonly listChanged: { readonly "2025": boolean; readonly "2026": boolean };
  /** Tasks, when served: a task-supporting tool's calls go through them. */
  readonly tasks?: ToolTasks | null | undefined;
}

/**
 * The tools capability.
 *
 * @example
 * ```ts
 * const tools = new ToolFeature({ host, tools: [echo], cursors, pageSize: 100, cacheTtlMs: 60_000,
 *   listChanged: { "2025": true, "2026": false }, tasks: null });
 * ```
 */
export class ToolFeature implements ProtocolFeature {
  readonly id = "tools";
  /** The served tools, changeable while serving. */
  readonly tools: PrimitiveCollection<Tool>;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025: Readonly<Record<string, unknown>>;
  readonly capabilities2026: Readonly<Record<string, unknown>>;
  private readonly host: MethodHost;
  private readonly tasks: ToolTasks | null;

  constructor(options: ToolFeatureOptions) {
    this.host = options.host;
    this.tasks = options.tasks ?? null;
    this.tools = new PrimitiveCollection<Tool>({
      list: "tools",
      shape: {
        key: "name",
        methods: ["checkArguments", "toResult", "handler"],
        what: "a defineTool() result",
      },
      items: options.tools,
    });
    this.methods = {
      "tools/list": listMethod({ ...options, collection: this.tools, field: "tools" }),
      "tools/call": { eras: "both", holds: "stream", run: (r) => this.call(r) },
    };
    this.capabilities2025 = { tools: { listChanged: options.listChanged["2025"] } };
    this.capabilities2026 = { tools: options.listChanged["2026"] ? { listChanged: true } : {} };
  }

  // Not async: the handler call's own promise is handed back as is, so a running call holds no
  // extra promise for this step; a throw here is answered -32603 by the dispatcher.
  private call(request: MethodRequest): Promise<void> {
    const { host } = this;
    const { params, modern } = request;
    const name = params?.name;
    const tool = typeof name === "string" ? this.tools.get(name) : undefined;
    const access = tool === undefined ? "hidden" : accessOf(tool, visibilityOf(request.meta));
    if (tool === undefined || access === "hidden") {
      // MCP 2025-11-25 tools, "Error Handling": an unknown tool is a protocol error.
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown tool: ${reflectText(name)}`,
      );
    }
    if (access === "forbidden") return host.forbidden(request, tool.scopes);
    if (modern !== null && tool.requiredClientCapabilities !== null) {
      const missing = missingCapabilities(
        tool.requiredClientCapabilities,
        modern.clientCapabilities,
      );
      if (missing !== null) {
        return host.answerError(
          request,
          ErrorCode.MissingCapability,
          `Missing required client capability: ${Object.keys(missing).join(", ")}`,
          { requiredCapabilities: missing },
          400,
        );
      }
    }
    // The presented headers are picked out only here, for a tool that declares some.
    if (tool.paramHeaders.length > 0 && modern?.paramHeaders !== undefined) {
      // 2026-07-28 only: headers an intermediary may have routed on must agree with the body.
      const mismatch = checkParamHeaders(tool.paramHeaders, params?.arguments, modern.paramHeaders);
      if (mismatch !== null) {
        return host.answerError(request, ErrorCode.HeaderMismatch, mismatch, undefined, 400);
      }
    }
    if (params?.arguments !== undefined && !isPlainObject(params.arguments)) {
      // Not a CallToolRequest at all (its schema says an object): a protocol error.
      return host.answerError(request, ErrorCode.InvalidParams, "arguments must be an object");
    }
    const check = tool.checkArguments(params?.arguments);
    // A schema library that validates asynchronously answers later; the request holds its stream
    // unit meanwhile, and a throw or rejection is -32603 from the dispatcher (nothing echoed).
    return check instanceof Promise
      ? check.then((settled) => this.checked(request, tool, settled))
      : this.checked(request, tool, check);
  }

  /** Runs the call once its arguments are checked, or answers why they are not valid. */
  private checked(request: MethodRequest, tool: Tool, check: ArgumentCheck): Promise<void> {
    const { host } = this;
    if (!check.ok) {
      // MCP 2025-11-25 tools: input validation errors are tool execution errors (`isError`), so
      // the model can read what is wrong and retry.
      const text = `Invalid arguments: ${check.issues
        .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
        .join("; ")}`;
      return host.answerResult(request, { content: [{ type: "text", text }], isError: true });
    }
    const invocation = new ToolInvocation(tool, check.args);
    const { params, modern } = request;
    if (
      this.tasks !== null &&
      (tool.taskSupport !== "forbidden" || (modern === null && params?.task !== undefined))
    ) {
      return this.tasks.call(request, invocation);
    }
    return host.startCall(request, invocation, progressTokenOf(params));
  }
}

/**
 * The required capabilities a client did not declare, as a ClientCapabilities object (the shape
 * -32021's `data.requiredCapabilities` has), or null when every one is declared.
 */
function missingCapabilities(
  required: Readonly<Record<string, object>>,
  declared: Readonly<Record<string, unknown>>,
): Record<string, object> | null {
  let missing: Record<string, object> | null = null;
  for (const name of Object.keys(required)) {
    if (isPlainObject(declared[name])) continue;
    missing ??= {};
    missing[name] = required[name] as object;
  }
  return missing;
}
