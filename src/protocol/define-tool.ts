/**
 * Tool definitions. A zod object schema validates and types the arguments and is published as
 * JSON Schema draft 2020-12 (computed once here, never per request); a plain JSON Schema object is
 * published as is and not validated (the conformance scenario json-schema-2020-12 needs its
 * keywords preserved verbatim).
 */
import { z } from "zod";

import { InvalidOptionError } from "../errors.js";
import { type IsolatedHandler, isIsolatedHandler } from "../isolation/isolated-handler.js";
import { reflectText } from "../reflect.js";
import { isPlainObject } from "./json-rpc.js";
import { type ParamHeader, paramHeadersOf } from "./param-headers.js";
import type { ArgumentIssue } from "./primitive.js";
import type { ToolContext } from "./tool-context.js";

/** A JSON Schema object, published as a tool's `inputSchema` without change. */
export type JsonSchemaObject = { readonly [key: string]: unknown };

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

/** The handler's arguments: typed by a zod schema, else a plain object. */
export type ToolArgs<S> = S extends z.ZodObject ? z.output<S> : Record<string, unknown>;

/** What {@link defineTool} takes. */
export interface ToolDefinition<S extends z.ZodObject | JsonSchemaObject | undefined> {
  /** 1–128 characters of `[A-Za-z0-9_./-]` (MCP 2025-11-25 tool names). */
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /** A zod object (validated, typed) or a JSON Schema object (published as is). */
  readonly input?: S;
  readonly annotations?: ToolAnnotations;
  /**
   * Run the tool in a pool worker thread that the stream cancel timeout terminates, so CPU-bound
   * code that never checks its signal really stops (issue 4): an {@link isolatedHandler}
   * descriptor naming the module export to run; `handler` is then not needed. `false` (default)
   * runs `handler` on the main thread.
   */
  readonly isolated?: IsolatedHandler | false;
  /**
   * Client capabilities the tool needs (e.g. `{ sampling: {} }`): a 2026-07-28 request whose
   * `_meta` does not declare one of them is refused with 400 / -32021 before the tool runs
   * (mcp-protocol.md B.3; 2025-era requests carry no per-request capabilities).
   */
  readonly requiredClientCapabilities?: { readonly [capability: string]: object };
  /** Runs the tool; required unless `isolated` names the function to run in a worker. */
  readonly handler?: (
    args: ToolArgs<S>,
    ctx: ToolContext,
  ) => Promise<ToolResult | string> | ToolResult | string;
}

export type { ArgumentIssue } from "./primitive.js";

/** The outcome of validating a call's arguments. */
export type ArgumentCheck =
  | { readonly ok: true; readonly args: unknown }
  | { readonly ok: false; readonly issues: readonly ArgumentIssue[] };

/** A defined tool, ready for `createMcpServer({ tools })`. */
export interface Tool {
  readonly name: string;
  /** The `tools/list` entry (name, title, description, inputSchema, annotations), frozen. */
  readonly descriptor: { readonly [key: string]: unknown };
  readonly isolated: boolean;
  /** The worker function of an isolated tool, else null. */
  readonly isolatedHandler: IsolatedHandler | null;
  /** Capability names a modern request must declare, else null. */
  readonly requiredClientCapabilities: Readonly<Record<string, object>> | null;
  /** The `x-mcp-header` annotations of its input schema (`Mcp-Param-*` headers to check). */
  readonly paramHeaders: readonly ParamHeader[];
  /** Validates `arguments` (absent → `{}`); never throws. */
  checkArguments(args: unknown): ArgumentCheck;
  readonly handler: (
    args: never,
    ctx: ToolContext,
  ) => Promise<ToolResult | string> | ToolResult | string;
}

/** At most this many issues go back to the client, so a hostile payload cannot inflate the answer. */
const MAX_ISSUES = 20;
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
export function defineTool<S extends z.ZodObject | JsonSchemaObject | undefined = undefined>(
  definition: ToolDefinition<S>,
): Tool {
  if (!isPlainObject(definition)) {
    throw new InvalidOptionError("tool", "an object", definition);
  }
  const { name, title, description, input, annotations, isolated, handler } = definition;
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
  if (title !== undefined && typeof title !== "string") {
    throw new InvalidOptionError(`tool ${name}: title`, "a string", title);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new InvalidOptionError(`tool ${name}: description`, "a string", description);
  }
  if (annotations !== undefined && !isPlainObject(annotations)) {
    throw new InvalidOptionError(`tool ${name}: annotations`, "an object", annotations);
  }

  let inputSchema: JsonSchemaObject;
  let checkArguments: (args: unknown) => ArgumentCheck;
  if (input === undefined) {
    inputSchema = EMPTY_OBJECT_SCHEMA;
    checkArguments = checkObjectOnly;
  } else if (input instanceof z.ZodType) {
    if (!(input instanceof z.ZodObject)) {
      throw new InvalidOptionError(`tool ${name}: input`, "a zod object schema", input);
    }
    inputSchema = Object.freeze(
      z.toJSONSchema(input, { target: "draft-2020-12", io: "input" }) as JsonSchemaObject,
    );
    const schema = input;
    checkArguments = (args) => checkWithZod(schema, args);
  } else if (isPlainObject(input)) {
    inputSchema = input;
    checkArguments = checkObjectOnly;
  } else {
    throw new InvalidOptionError(
      `tool ${name}: input`,
      "a zod object or a JSON Schema object",
      input,
    );
  }

  const descriptor: Record<string, unknown> = { name };
  if (title !== undefined) descriptor.title = title;
  // Always present: clients and the conformance suite expect a description string.
  descriptor.description = description ?? "";
  descriptor.inputSchema = inputSchema;
  if (annotations !== undefined) descriptor.annotations = { ...annotations };

  return Object.freeze({
    name,
    descriptor: Object.freeze(descriptor),
    isolated: isolatedHandler !== null,
    isolatedHandler,
    requiredClientCapabilities:
      required === undefined || Object.keys(required).length === 0
        ? null
        : Object.freeze({ ...required }),
    paramHeaders: paramHeadersOf(inputSchema, `tool ${name}`),
    checkArguments,
    handler: (typeof handler === "function" ? handler : runsInWorker) as Tool["handler"],
  });
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

function checkWithZod(schema: z.ZodObject, args: unknown): ArgumentCheck {
  const parsed = schema.safeParse(args === undefined ? {} : args);
  if (parsed.success) return { ok: true, args: parsed.data };
  const issues: ArgumentIssue[] = [];
  for (const issue of parsed.error.issues) {
    if (issues.length >= MAX_ISSUES) break;
    // Paths can hold client-chosen keys (records): reflect them like any other echoed input.
    issues.push({
      path: reflectText(issue.path.map(String).join("."), 200),
      message: reflectText(issue.message, 200),
    });
  }
  return { ok: false, issues };
}
