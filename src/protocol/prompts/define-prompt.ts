/**
 * Prompt definitions (https://modelcontextprotocol.io/specification/2025-11-25/server/prompts;
 * the 2026-07-28 page keeps the same messages). A prompt's arguments are a Standard Schema object
 * of string fields (any library: wire/schema-adapter.ts) — on the wire every prompt argument is a
 * string — published as the `arguments` list of its `prompts/list` entry (name, title and
 * description from the input side of the schema's JSON Schema, `required` unless the field is
 * optional or has a default) and validated on every `prompts/get`.
 *
 * The handler may answer in three shapes, normalised here into a `GetPromptResult`:
 * - a string: one `user` text message;
 * - an array of `{ role, content }` messages;
 * - a whole result `{ description?, messages, _meta? }`.
 * Every message is checked against the schema's content blocks (content-blocks.ts) and copied
 * with their fields only; a bad one fails the request (the dispatcher answers -32603 without
 * details) rather than reaching the client malformed.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";

import { InvalidOptionError } from "../../errors.js";
import type { ArgumentCheck, ToolContext } from "../calls/index.js";
import {
  checkPrimitiveFields,
  type PrimitiveFields,
  type Prompt,
  type VisibilityContext,
} from "../calls/index.js";
import {
  adaptSchema,
  type ContentBlockRules,
  checkPromptMessage,
  isPlainObject,
  isStandardSchema,
  type SchemaAdapter,
  type SchemaOutcome,
} from "../wire/index.js";

/** One content block of a prompt message (text, image, audio, resource_link, resource). */
export type PromptContent = { readonly type: string; readonly [key: string]: unknown };

/** A prompt message: who speaks, and one content block. */
export interface PromptMessage {
  readonly role: "user" | "assistant";
  readonly content: PromptContent;
}

/** A whole `GetPromptResult` as a handler may return it. */
export interface PromptResult {
  readonly description?: string;
  readonly messages: readonly PromptMessage[];
  readonly _meta?: { readonly [key: string]: unknown };
}

/** What a prompt handler may return (see the module comment). */
export type PromptReturn = string | readonly PromptMessage[] | PromptResult;

/** The handler's arguments: the output type of the Standard Schema, else none. */
export type PromptArgs<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : Record<string, never>;

/**
 * Suggests values for one argument: `value` is what the user typed so far, `context.arguments`
 * the other arguments already filled in (only declared ones, only strings; the shape of the
 * request's `context`), `ctx` who is asking. Resource template completers take the same three.
 */
export type PromptCompleter = (
  value: string,
  context: { readonly arguments: Readonly<Record<string, string>> },
  ctx: VisibilityContext,
) => readonly string[] | Promise<readonly string[]>;

/** What {@link definePrompt} takes. */
export interface PromptDefinition<S extends StandardSchemaV1 | undefined> extends PrimitiveFields {
  /**
   * The arguments: a Standard Schema of an object whose fields are strings (zod 3 or 4, Valibot,
   * ArkType…: docs/schemas.md), e.g. `z.object({ code: z.string().describe("…") })`; optional
   * or defaulted fields are published as not required. Absent: the prompt takes none.
   */
  readonly arguments?: S;
  /** Completers for `completion/complete`, by argument name. Absent: no completions. */
  readonly complete?: { readonly [argument: string]: PromptCompleter };
  /** Builds the prompt's messages. */
  readonly get: (args: PromptArgs<S>, ctx: ToolContext) => PromptReturn | Promise<PromptReturn>;
}

/** Prompt names travel in `Mcp-Name` (base64 when needed); this only keeps them sane. */
const MAX_NAME_LENGTH = 128;
const CONTROL = /[\x00-\x1F\x7F]/;
const PROMPT_RULES: ContentBlockRules = { embeddedMimeTypeRequired: true };

/**
 * Defines a prompt.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { definePrompt } from "conduit-mcp";
 *
 * const review = definePrompt({
 *   name: "review",
 *   description: "Asks for a code review",
 *   arguments: z.object({
 *     code: z.string().describe("The code to review"),
 *     language: z.string().optional().describe("Its language"),
 *   }),
 *   complete: {
 *     language: (typed) => ["go", "rust", "typescript"].filter((l) => l.startsWith(typed)),
 *   },
 *   get: ({ code, language }) => `Review this ${language ?? ""} code:\n${code}`,
 * });
 * ```
 */
export function definePrompt<S extends StandardSchemaV1 | undefined = undefined>(
  definition: PromptDefinition<S>,
): Prompt {
  if (!isPlainObject(definition)) {
    throw new InvalidOptionError("prompt", "an object", definition);
  }
  const { name, get, complete } = definition;
  if (
    typeof name !== "string" ||
    name.length === 0 ||
    name.length > MAX_NAME_LENGTH ||
    CONTROL.test(name)
  ) {
    throw new InvalidOptionError("prompt.name", "1-128 characters, no control characters", name);
  }
  const label = `prompt ${name}`;
  const fields = checkPrimitiveFields(label, definition);
  if (typeof get !== "function") throw new InvalidOptionError(`${label}: get`, "a function", get);

  const given = definition.arguments;
  if (given !== undefined && !isStandardSchema(given)) {
    throw new InvalidOptionError(
      `${label}: arguments`,
      "a Standard Schema of an object of strings (zod 3 or 4, Valibot, ArkType…)",
      given,
    );
  }
  const schema = given === undefined ? undefined : adaptSchema(given, `${label}: arguments`);
  const published = schema === undefined ? [] : publishedArguments(label, schema);
  const declared = new Set(published.map((argument) => argument.name as string));
  const completers = checkCompleters(label, complete, declared);

  const descriptor: Record<string, unknown> = { ...fields.descriptor };
  if (published.length > 0) descriptor.arguments = published;
  const description = definition.description;

  return Object.freeze({
    name,
    descriptor: Object.freeze(descriptor),
    scopes: fields.scopes,
    visible: fields.visible,
    checkArguments: (value: unknown) => checkArguments(schema, value),
    get: async (args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> =>
      get(args as PromptArgs<S>, ctx),
    toResult: (value: unknown) => toResult(value, description),
    complete(
      argument: string,
      value: string,
      context: Readonly<Record<string, string>>,
      ctx: VisibilityContext,
    ): Promise<readonly string[]> | null {
      const completer = completers.get(argument);
      if (completer === undefined) return null;
      const others = declaredContext(context, declared, argument);
      return runCompleter(completer, value, { arguments: others }, ctx);
    },
  });
}

/**
 * The `arguments` list of the prompt's list entry, from the input side of the schema's JSON
 * Schema (so optional and defaulted fields are not required). Refuses anything that would not
 * arrive as a string.
 */
function publishedArguments(label: string, schema: SchemaAdapter): Record<string, unknown>[] {
  const json = schema.jsonSchema("input") as {
    type?: unknown;
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  if (json.type !== "object") {
    throw new InvalidOptionError(`${label}: arguments`, "a schema of an object", json.type);
  }
  const required = new Set(Array.isArray(json.required) ? json.required : []);
  const list: Record<string, unknown>[] = [];
  for (const [field, property] of Object.entries(json.properties ?? {})) {
    if (!isPlainObject(property) || !isStringSchema(property)) {
      throw new InvalidOptionError(
        `${label}: arguments.${field}`,
        "a string schema (prompt arguments are strings on the wire)",
        isPlainObject(property) ? (property.type ?? property) : property,
      );
    }
    const argument: Record<string, unknown> = { name: field };
    if (typeof property.title === "string") argument.title = property.title;
    if (typeof property.description === "string") argument.description = property.description;
    argument.required = required.has(field);
    list.push(Object.freeze(argument));
  }
  return list;
}

/** A property every value of which is a string: `type: "string"`, or an enum of strings. */
function isStringSchema(property: Readonly<Record<string, unknown>>): boolean {
  if (property.type === "string") return true;
  return (
    property.type === undefined &&
    Array.isArray(property.enum) &&
    property.enum.length > 0 &&
    property.enum.every((value) => typeof value === "string")
  );
}

function checkCompleters(
  label: string,
  complete: PromptDefinition<StandardSchemaV1 | undefined>["complete"],
  declared: ReadonlySet<string>,
): ReadonlyMap<string, PromptCompleter> {
  const completers = new Map<string, PromptCompleter>();
  if (complete === undefined) return completers;
  if (!isPlainObject(complete)) {
    throw new InvalidOptionError(`${label}: complete`, "an object of functions", complete);
  }
  for (const [argument, completer] of Object.entries(complete)) {
    if (!declared.has(argument)) {
      throw new InvalidOptionError(
        `${label}: complete.${argument}`,
        "the name of a declared argument",
        argument,
      );
    }
    if (typeof completer !== "function") {
      throw new InvalidOptionError(`${label}: complete.${argument}`, "a function", completer);
    }
    completers.set(argument, completer as PromptCompleter);
  }
  return completers;
}

/** Absent arguments mean `{}`; the schema's library decides the rest (strings only, required ones present). */
function checkArguments(
  schema: SchemaAdapter | undefined,
  value: unknown,
): PromptCheck | Promise<PromptCheck> {
  const given = value === undefined ? {} : value;
  if (schema === undefined) {
    return isPlainObject(given)
      ? { ok: true, args: {} }
      : { ok: false, issues: [{ path: "", message: "arguments must be an object" }] };
  }
  const outcome = schema.validate(given);
  return outcome instanceof Promise ? outcome.then(promptCheck) : promptCheck(outcome);
}

type PromptCheck = ArgumentCheck<Record<string, unknown>>;

function promptCheck(outcome: SchemaOutcome): PromptCheck {
  if (!outcome.ok) return outcome;
  return isPlainObject(outcome.value)
    ? { ok: true, args: outcome.value }
    : { ok: false, issues: [{ path: "", message: "arguments must be an object" }] };
}

/** The other arguments a completer may see: declared ones with string values, not its own. */
function declaredContext(
  context: Readonly<Record<string, string>>,
  declared: ReadonlySet<string>,
  argument: string,
): Readonly<Record<string, string>> {
  const clean: Record<string, string> = {};
  if (!isPlainObject(context)) return clean;
  for (const name of declared) {
    const value = context[name];
    if (name !== argument && typeof value === "string") clean[name] = value;
  }
  return Object.freeze(clean);
}

async function runCompleter(
  completer: PromptCompleter,
  value: string,
  context: { readonly arguments: Readonly<Record<string, string>> },
  ctx: VisibilityContext,
): Promise<readonly string[]> {
  const values = await completer(value, context, ctx);
  if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) {
    throw new TypeError("a prompt completer must return an array of strings");
  }
  return values;
}

/** Normalises the handler's value into a checked `GetPromptResult` (see the module comment). */
function toResult(value: unknown, description: string | undefined): ReturnType<Prompt["toResult"]> {
  let messages: unknown;
  const result: Record<string, unknown> = {};
  if (typeof value === "string") {
    messages = [{ role: "user", content: { type: "text", text: value } }];
  } else if (Array.isArray(value)) {
    messages = value;
  } else if (isPlainObject(value)) {
    messages = value.messages;
    if (value.description !== undefined) {
      if (typeof value.description !== "string") {
        return { ok: false, message: "result.description must be a string" };
      }
      description = value.description;
    }
    if (value._meta !== undefined) {
      if (!isPlainObject(value._meta))
        return { ok: false, message: "result._meta must be an object" };
      result._meta = { ...value._meta };
    }
  } else {
    return { ok: false, message: "a prompt must return a string, messages or a GetPromptResult" };
  }
  if (!Array.isArray(messages)) return { ok: false, message: "result.messages must be an array" };
  const checked: unknown[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = checkPromptMessage(messages[i], `messages[${i}]`, PROMPT_RULES);
    if (!message.ok) return message;
    checked.push(message.block);
  }
  if (description !== undefined) result.description = description;
  result.messages = checked;
  return { ok: true, result };
}
