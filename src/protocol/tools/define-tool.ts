/**
 * Tool definitions (MCP 2025-11-25 tools: https://modelcontextprotocol.io/specification/2025-11-25/server/tools).
 * The input is any Standard Schema object (zod 3 or 4, Valibot, ArkType…: wire/schema-adapter.ts)
 * that validates and types the arguments and is published as its library's JSON Schema (computed
 * once here, never per request), or a plain JSON Schema object, published as is and not
 * validated (its keywords must reach the client verbatim). An `output` schema is published as
 * `outputSchema` and every `structuredContent` is checked against it before it leaves ("Servers
 * MUST provide structured results that conform to this schema").
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { z } from "zod";

import { InvalidOptionError } from "../../errors.js";
import { type IsolatedHandler, isIsolatedHandler } from "../../isolation/isolated-handler.js";
import { MAX_TIMER_MS, OPTION, optionKind, readOption } from "../../option-schema.js";
import type { ArgumentCheck, HandlerResult, ToolContext } from "../calls/index.js";
import {
  checkPrimitiveFields,
  type PrimitiveFields,
  type VisibilityContext,
} from "../calls/index.js";
import {
  adaptSchema,
  isPlainObject,
  isStandardSchema,
  type JsonSchemaObject,
  looksLikeForeignSchema,
  type ParamHeader,
  paramHeadersOf,
  type SchemaAdapter,
  type SchemaOutcome,
} from "../wire/index.js";

export type { JsonSchemaObject } from "../wire/index.js";

/** MCP tool annotations (hints only; clients must not trust them). */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** One content block of a tool result (text, image, audio, resource link, embedded resource). */
export type ContentBlock = { readonly type: string; readonly [key: string]: unknown };

/** An MCP `CallToolResult`. `isError: true` is a tool-level failure, still a normal result. */
export interface ToolResult {
  readonly content: readonly ContentBlock[];
  readonly structuredContent?: { readonly [key: string]: unknown };
  readonly isError?: boolean;
  readonly _meta?: { readonly [key: string]: unknown };
}

/** The handler's arguments: the output type of a Standard Schema, else a plain object. */
export type ToolArgs<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : Record<string, unknown>;

/** What {@link defineTool} takes; `P` is what `beforeTask` resolves (the handler's third argument). */
export interface ToolDefinition<
  S extends StandardSchemaV1 | JsonSchemaObject | undefined,
  O extends StandardSchemaV1 | undefined = undefined,
  P = undefined,
> extends PrimitiveFields {
  /** 1–128 characters of `[A-Za-z0-9_./-]` (MCP 2025-11-25 tool names). */
  readonly name: string;
  /**
   * The arguments: a Standard Schema of an object (zod 3 or 4, Valibot, ArkType…; validated,
   * typed, published as its JSON Schema: docs/schemas.md), or a JSON Schema object with
   * `type: "object"` (published as is, not validated). Absent: `{ type: "object" }`.
   */
  readonly input?: S;
  /**
   * A Standard Schema of an object describing `structuredContent` (published as `outputSchema`,
   * the output side of its JSON Schema); a result whose
   * `structuredContent` does not match becomes an `isError` result (never sent as is). With it,
   * the handler may return the structured object itself: it is sent as `structuredContent` and,
   * for older clients, as JSON text.
   */
  readonly output?: O;
  readonly annotations?: ToolAnnotations;
  /**
   * Run the tool in a pool worker thread that the stream cancel timeout terminates, so CPU-bound
   * code that never checks its signal really stops: an {@link isolatedHandler}
   * descriptor naming the module export to run; `handler` is then not needed. `false` (default)
   * runs `handler` on the main thread.
   */
  readonly isolated?: IsolatedHandler | false;
  /**
   * Client capabilities the tool needs (e.g. `{ sampling: {} }`): a 2026-07-28 request whose
   * `_meta` does not declare one of them is refused with 400 / -32021 before the tool runs
   * (https://modelcontextprotocol.io/specification/2026-07-28/basic#meta; 2025-era requests
   * carry no per-request capabilities).
   */
  readonly requiredClientCapabilities?: { readonly [capability: string]: object };
  /**
   * Whether the tool runs as a task, detached from the request (docs/tasks.md): `"optional"`
   * (a 2025-era client asks with `params.task`; a 2026-07-28 client that declares the
   * `io.modelcontextprotocol/tasks` extension always gets a task), `"required"` (only as a task:
   * 2025-era calls without `params.task` get -32601, 2026-07-28 calls without the extension
   * -32021), or `"forbidden"` (default: never; a 2025-era call with `params.task` gets -32601).
   * Published as `execution.taskSupport`
   * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#tool-level-negotiation).
   */
  readonly task?: TaskSupport;
  /**
   * The deadline of one run of the tool, in ms (1 to 2^31 − 1), or `Infinity` for none; default:
   * the server's `toolTimeoutMs`. When it elapses the call is cancelled through the cancellation
   * registry with source `timeout` (`ctx.signal` aborts) and the client gets a tool error result;
   * a task's run ends the task `cancelled` (docs/limits.md, "Deadlines").
   */
  readonly timeoutMs?: number;
  /**
   * Asks first, then becomes a task (docs/tasks.md; needs `task` `"optional"` or
   * `"required"`, not `isolated`). On a 2026-07-28 request that gets a task, it runs on the
   * request itself before the task exists: its `ctx.elicit` / `sample` / `roots` answer
   * `input_required` and it runs again with the answers (as a handler does:
   * docs/asking-the-client.md); once it returns, the task is created and answered
   * (`resultType: "task"`) and the
   * handler runs detached with its value as third argument (SEP-2663, "Composition with Multi
   * Round-Trip Requests": https://modelcontextprotocol.io/extensions/tasks/overview). A throw
   * answers the request as a handler's throw would, and no task is created. Wherever the call
   * is not composed that way (a plain call, or a 2025-era `params.task` task, created at once),
   * it runs just before the handler in the same run, with the same `ctx`.
   */
  readonly beforeTask?: (args: ToolArgs<S>, ctx: ToolContext) => Promise<P> | P;
  /**
   * Runs the tool; required unless `isolated` names the function to run in a worker. Its third
   * argument is what `beforeTask` returned (undefined without one).
   */
  readonly handler?: (
    args: ToolArgs<S>,
    ctx: ToolContext,
    prepared: P,
  ) => Promise<ToolReturn<O>> | ToolReturn<O>;
}

/** How a tool runs as a task (MCP 2025-11-25 `ToolExecution.taskSupport`). */
export type TaskSupport = "forbidden" | "optional" | "required";

/** What a handler returns: a result, a string (one text block), or with `output` its object. */
export type ToolReturn<O> =
  | ToolResult
  | string
  | (O extends StandardSchemaV1 ? StandardSchemaV1.InferInput<O> : never);

export type { ArgumentCheck, ArgumentIssue } from "../calls/index.js";

/** A defined tool, ready for `createMcpServer({ tools })`. */
export interface Tool {
  readonly name: string;
  /** The `tools/list` entry (name, title, description, icons, inputSchema, outputSchema, annotations, _meta), frozen. */
  readonly descriptor: { readonly [key: string]: unknown };
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
  readonly isolated: boolean;
  /** The worker function of an isolated tool, else null. */
  readonly isolatedHandler: IsolatedHandler | null;
  /** Capability names a modern request must declare, else null. */
  readonly requiredClientCapabilities: Readonly<Record<string, object>> | null;
  /** The `x-mcp-header` annotations of its input schema (`Mcp-Param-*` headers to check). */
  readonly paramHeaders: readonly ParamHeader[];
  /** Whether it runs as a task (`forbidden` when the definition said nothing). */
  readonly taskSupport: TaskSupport;
  /** What runs before a task is created (`beforeTask`), else null. */
  readonly beforeTask: ((args: never, ctx: ToolContext) => unknown) | null;
  /** Its own deadline in ms, null for none (`timeoutMs: Infinity`); undefined: the server's. */
  readonly timeoutMs: number | null | undefined;
  /**
   * @internal Validates `arguments` (absent → `{}`); a promise only when the schema library
   * validates asynchronously; throws (or rejects) only when the library does.
   */
  checkArguments(args: unknown): ArgumentCheck | Promise<ArgumentCheck>;
  /**
   * @internal Turns the handler's value into a `CallToolResult`, checking `structuredContent`; a
   * promise only when the output schema validates asynchronously.
   */
  toResult(value: unknown): HandlerResult | Promise<HandlerResult>;
  readonly handler: (args: never, ctx: ToolContext, prepared?: never) => unknown;
}

const TOOL_NAME = /^[A-Za-z0-9_./-]{1,128}$/;
const EMPTY_OBJECT_SCHEMA = Object.freeze({ type: "object" });

/**
 * Defines a tool.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { defineTool } from "conduit-mcp";
 *
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Echoes its text",
 *   input: z.object({ text: z.string() }),
 *   handler: ({ text }) => text,
 * });
 * ```
 */
export function defineTool<
  S extends StandardSchemaV1 | JsonSchemaObject | undefined = undefined,
  O extends StandardSchemaV1 | undefined = undefined,
  P = undefined,
>(definition: ToolDefinition<S, O, P>): Tool {
  if (!isPlainObject(definition)) {
    throw new InvalidOptionError("tool", "an object", definition);
  }
  const { name, input, output, annotations, isolated, handler } = definition;
  const required = definition.requiredClientCapabilities;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new InvalidOptionError("tool.name", "1-128 characters of [A-Za-z0-9_./-]", name);
  }
  if (isolated !== undefined && isolated !== false && !isIsolatedHandler(isolated)) {
    throw new InvalidOptionError(
      `tool ${name}: isolated`,
      "isolatedHandler(moduleUrl, exportName) or false",
      isolated,
    );
  }
  const isolatedHandler = isolated === undefined || isolated === false ? null : isolated;
  if (isolatedHandler === null && typeof handler !== "function") {
    throw new InvalidOptionError(`tool ${name}: handler`, "a function", handler);
  }
  if (
    required !== undefined &&
    (!isPlainObject(required) || !Object.values(required).every(isPlainObject))
  ) {
    throw new InvalidOptionError(
      `tool ${name}: requiredClientCapabilities`,
      "an object of capability objects, e.g. { sampling: {} }",
      required,
    );
  }
  const taskSupport = definition.task ?? "forbidden";
  if (taskSupport !== "forbidden" && taskSupport !== "optional" && taskSupport !== "required") {
    throw new InvalidOptionError(
      `tool ${name}: task`,
      '"optional", "required" or "forbidden"',
      taskSupport,
    );
  }
  const { beforeTask } = definition;
  if (beforeTask !== undefined) {
    if (typeof beforeTask !== "function") {
      throw new InvalidOptionError(`tool ${name}: beforeTask`, "a function", beforeTask);
    }
    // It hands the handler a value in memory: a worker thread's handler could not receive it.
    if (taskSupport === "forbidden" || isolatedHandler !== null) {
      throw new InvalidOptionError(
        `tool ${name}: beforeTask`,
        'absent unless task is "optional" or "required" and the tool is not isolated',
        beforeTask,
      );
    }
  }
  const timeoutMs = readOption(
    TOOL_TIMEOUT,
    `tool ${name}: timeoutMs`,
    definition.timeoutMs,
    undefined,
  );
  const common = checkPrimitiveFields(`tool ${name}`, definition);
  if (annotations !== undefined && !isPlainObject(annotations)) {
    throw new InvalidOptionError(`tool ${name}: annotations`, "an object", annotations);
  }

  let inputSchema: JsonSchemaObject;
  let checkArguments: (args: unknown) => ArgumentCheck | Promise<ArgumentCheck>;
  if (input === undefined) {
    inputSchema = EMPTY_OBJECT_SCHEMA;
    checkArguments = checkObjectOnly;
  } else if (isStandardSchema(input)) {
    const adapter = adaptSchema(input, `tool ${name}: input`);
    inputSchema = objectSchema(`tool ${name}: input`, adapter.jsonSchema("input"));
    checkArguments = (args) => checkWith(adapter, args);
  } else if (looksLikeForeignSchema(input)) {
    throw new InvalidOptionError(`tool ${name}: input`, SCHEMA_KINDS, input);
  } else if (isJsonSchemaObject(input)) {
    inputSchema = input;
    checkArguments = checkObjectOnly;
  } else {
    throw new InvalidOptionError(`tool ${name}: input`, SCHEMA_KINDS, input);
  }

  let outputSchema: JsonSchemaObject | undefined;
  let toResult: (value: unknown) => HandlerResult | Promise<HandlerResult> = toPlainResult;
  if (output !== undefined) {
    if (!isStandardSchema(output)) {
      throw new InvalidOptionError(
        `tool ${name}: output`,
        "a Standard Schema of an object (zod 3.24+ or 4, Valibot, ArkType…)",
        output,
      );
    }
    const adapter = adaptSchema(output, `tool ${name}: output`);
    outputSchema = objectSchema(`tool ${name}: output`, adapter.jsonSchema("output"));
    toResult = (value) => toStructuredResult(adapter, value);
  }

  const { _meta, ...listed } = common.descriptor;
  const descriptor: Record<string, unknown> = { ...listed };
  // Always present: clients and the conformance suite expect a description string.
  descriptor.description = definition.description ?? "";
  descriptor.inputSchema = inputSchema;
  if (outputSchema !== undefined) descriptor.outputSchema = outputSchema;
  if (annotations !== undefined) descriptor.annotations = { ...annotations };
  if (taskSupport !== "forbidden") descriptor.execution = { taskSupport };
  if (_meta !== undefined) descriptor._meta = _meta;

  return Object.freeze({
    name,
    descriptor: Object.freeze(descriptor),
    scopes: common.scopes,
    visible: common.visible,
    toResult,
    isolated: isolatedHandler !== null,
    isolatedHandler,
    requiredClientCapabilities:
      required === undefined || Object.keys(required).length === 0
        ? null
        : Object.freeze({ ...required }),
    paramHeaders: paramHeadersOf(inputSchema, `tool ${name}`),
    taskSupport,
    beforeTask: (beforeTask ?? null) as Tool["beforeTask"],
    timeoutMs: timeoutMs === Number.POSITIVE_INFINITY ? null : timeoutMs,
    checkArguments,
    handler: (typeof handler === "function" ? handler : runsInWorker) as unknown as Tool["handler"],
  });
}

/** A tool's deadline: a timer delay, or `Infinity` for none (even with a server default). */
const TOOL_TIMEOUT = optionKind(
  z.union([OPTION.timerMs.schema, z.literal(Number.POSITIVE_INFINITY)]),
  `an integer from 1 to ${MAX_TIMER_MS} (ms) or Infinity`,
);

const SCHEMA_KINDS =
  'a Standard Schema of an object (zod 3.24+ or 4, Valibot, ArkType…) or a JSON Schema object with type "object"';

/** A tool's schemas describe objects (MCP 2025-11-25 `Tool.inputSchema` / `outputSchema`: `type: "object"`). */
function objectSchema(label: string, json: JsonSchemaObject): JsonSchemaObject {
  if (json.type !== "object") {
    throw new InvalidOptionError(
      label,
      'a schema of an object (JSON Schema type "object")',
      json.type,
    );
  }
  return json;
}

/** A JSON Schema for a tool's arguments: a plain object whose `type` is `"object"`. */
function isJsonSchemaObject(value: unknown): value is JsonSchemaObject {
  if (!isPlainObject(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && value.type === "object";
}

/** A string → one text block; a result object as is; anything else is a tool bug. */
function toPlainResult(value: unknown): HandlerResult {
  if (typeof value === "string")
    return { ok: true, result: { content: [{ type: "text", text: value }] } };
  if (!isPlainObject(value) || !Array.isArray(value.content)) {
    return {
      ok: false,
      error: new TypeError("a tool returned neither a string nor a CallToolResult"),
    };
  }
  return { ok: true, result: value, isError: value.isError === true };
}

const INVALID_OUTPUT_TEXT = "The tool's result did not match its output schema.";

/**
 * With an output schema: a CallToolResult keeps its shape but its `structuredContent` must
 * match; a bare object is the structured content itself (sent also as JSON text, MCP 2025-11-25
 * "a tool that returns structured content SHOULD also return the serialized JSON in a TextContent
 * block"). A mismatch becomes an `isError` result, never the invalid data.
 */
function toStructuredResult(
  schema: SchemaAdapter,
  value: unknown,
): HandlerResult | Promise<HandlerResult> {
  if (typeof value === "string") return toPlainResult(value);
  if (!isPlainObject(value)) return toPlainResult(value);
  const isResult = Array.isArray(value.content);
  if (isResult && value.isError === true) return toPlainResult(value);
  const outcome = schema.validate(isResult ? value.structuredContent : value);
  return outcome instanceof Promise
    ? outcome.then((settled) => structuredResult(settled, value, isResult))
    : structuredResult(outcome, value, isResult);
}

function structuredResult(
  outcome: SchemaOutcome,
  value: Record<string, unknown>,
  isResult: boolean,
): HandlerResult {
  if (!outcome.ok) {
    const why = outcome.issues
      .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
      .join("; ");
    return {
      ok: true,
      isError: true,
      error: new TypeError(`structuredContent does not match the output schema: ${why}`),
      result: { content: [{ type: "text", text: INVALID_OUTPUT_TEXT }], isError: true },
    };
  }
  const structured = outcome.value;
  if (isResult) return { ok: true, result: { ...value, structuredContent: structured } };
  return {
    ok: true,
    result: {
      content: [{ type: "text", text: JSON.stringify(structured) }],
      structuredContent: structured as Record<string, unknown>,
    },
  };
}

/** The main-thread handler of an isolated tool: never called (the worker runs the tool). */
function runsInWorker(): never {
  throw new Error("conduit-mcp: an isolated tool runs in a worker thread");
}

/** Absent arguments mean `{}`; anything but an object is refused. */
function checkObjectOnly(args: unknown): ArgumentCheck {
  if (args === undefined) return { ok: true, args: {} };
  if (isPlainObject(args)) return { ok: true, args };
  return NOT_AN_OBJECT;
}

const NOT_AN_OBJECT: ArgumentCheck = Object.freeze({
  ok: false,
  issues: Object.freeze([Object.freeze({ path: "", message: "arguments must be an object" })]),
});

/** Absent arguments mean `{}`; the schema's library decides the rest. */
function checkWith(schema: SchemaAdapter, args: unknown): ArgumentCheck | Promise<ArgumentCheck> {
  const outcome = schema.validate(args === undefined ? {} : args);
  return outcome instanceof Promise ? outcome.then(argumentCheck) : argumentCheck(outcome);
}

function argumentCheck(outcome: SchemaOutcome): ArgumentCheck {
  return outcome.ok ? { ok: true, args: outcome.value } : outcome;
}
