/**
 * One question prepared for a client with given capabilities: the spec's request and the check
 * of its answer, or the error the ask rejects with (a capability the client did not declare, or
 * a form schema the spec does not allow). Every era's asker asks through these, so a question and
 * the check of its answer are the same on 2025-11-25 server requests, 2026-07-28 input-required
 * results and tasks (MCP 2026-07-28 client/elicitation "Requested Schema", client/sampling,
 * client/roots).
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { MissingClientCapabilityError } from "../../errors.js";
import { adaptSchema, isPlainObject, isStandardSchema, type SchemaAdapter } from "../wire/index.js";
import type { ElicitSchema, PreparedAsk, SampleRequest } from "./client-asker.js";

/**
 * A form elicitation for a client with `capabilities`, or the error the ask rejects with: a
 * {@link MissingClientCapabilityError}, or a TypeError for a schema the spec does not allow.
 */
export function prepareElicit(
  capabilities: Readonly<Record<string, unknown>>,
  message: string,
  schema: ElicitSchema | StandardSchemaV1,
): PreparedAsk | Error {
  const elicitation = capabilities.elicitation;
  // An empty `elicitation` object declares form mode (2025-11-25 and 2026-07-28 elicitation,
  // "Capabilities").
  const form =
    isPlainObject(elicitation) &&
    (isPlainObject(elicitation.form) || !isPlainObject(elicitation.url));
  if (!form) return new MissingClientCapabilityError({ elicitation: {} });
  // A programming error, reported as such (-32603 and the server's onError), not sent.
  const prepared = isStandardSchema(schema) ? formOfLibrary(schema) : formOfJson(schema);
  if (prepared instanceof Error) return prepared;
  const { requestedSchema, adapter } = prepared;
  return {
    kind: "elicit",
    request: { method: "elicitation/create", params: { mode: "form", message, requestedSchema } },
    check: (answer) => elicitAnswer(answer, requestedSchema, adapter),
  };
}

/** A form: what is sent, and the library schema that validates the answer (when one was given). */
interface Form {
  readonly requestedSchema: ElicitSchema;
  readonly adapter: SchemaAdapter | null;
}

/**
 * Forms made from library schemas, by schema: the conversion runs once per schema, not per ask
 * (a handler asks with the same schema object every time). Weak: a schema dropped by the code
 * that made it is dropped here too.
 */
const LIBRARY_FORMS = new WeakMap<object, Form | Error>();

/** A Standard Schema's form (its input side as JSON Schema, restricted), or why it cannot be one. */
function formOfLibrary(schema: StandardSchemaV1): Form | Error {
  let form = LIBRARY_FORMS.get(schema);
  if (form === undefined) {
    try {
      const adapter = adaptSchema(schema, "ctx.elicit: schema");
      const json = adapter.jsonSchema("input");
      const problem = formProblem(json);
      form =
        problem === null
          ? { requestedSchema: requestedSchemaOf(json), adapter }
          : new TypeError(`${FORM_RULE}: ${problem}`);
    } catch (error) {
      form = error instanceof Error ? error : new TypeError(String(error));
    }
    LIBRARY_FORMS.set(schema, form);
  }
  return form;
}

/** A JSON Schema form as given, or why it cannot be one. */
function formOfJson(schema: unknown): Form | Error {
  const problem = formProblem(schema);
  if (problem !== null) return new TypeError(`${FORM_RULE}: ${problem}`);
  return { requestedSchema: schema as ElicitSchema, adapter: null };
}

/**
 * Runs `prepared`'s check of `answer` and hands its verdict to `then`: at once when the check
 * answers synchronously (the common case costs no promise), else once its promise settles. A check
 * that throws or rejects (the schema library's own exception) is the verdict that the answer could
 * not be checked: the exception's text is not echoed.
 *
 * @example
 * ```ts
 * checkAnswer(prepared, answer, (checked) => typeof checked === "string" ? refuse(checked) : use(checked));
 * ```
 */
export function checkAnswer<T>(
  prepared: Pick<PreparedAsk, "check">,
  answer: unknown,
  then: (checked: unknown) => T,
): T | Promise<T> {
  let checked: unknown;
  try {
    checked = prepared.check(answer);
  } catch {
    return then(CHECK_FAILED);
  }
  if (!(checked instanceof Promise)) return then(checked);
  return checked.then(then, () => then(CHECK_FAILED));
}

const CHECK_FAILED = "the answer could not be checked";

/** A URL elicitation for a client with `capabilities`, or the error the ask rejects with. */
export function prepareElicitUrl(
  capabilities: Readonly<Record<string, unknown>>,
  message: string,
  url: string,
): PreparedAsk | Error {
  const elicitation = capabilities.elicitation;
  if (!isPlainObject(elicitation) || !isPlainObject(elicitation.url)) {
    return new MissingClientCapabilityError({ elicitation: { url: {} } });
  }
  return {
    kind: "elicit",
    request: { method: "elicitation/create", params: { mode: "url", message, url } },
    check: (answer) => elicitAnswer(answer, null, null),
  };
}

/** A sampling request for a client with `capabilities`, or the error the ask rejects with. */
export function prepareSample(
  capabilities: Readonly<Record<string, unknown>>,
  request: SampleRequest,
): PreparedAsk | Error {
  const sampling = capabilities.sampling;
  if (!isPlainObject(sampling)) return new MissingClientCapabilityError({ sampling: {} });
  if (
    (request.tools !== undefined || request.toolChoice !== undefined) &&
    !isPlainObject(sampling.tools)
  ) {
    return new MissingClientCapabilityError({ sampling: { tools: {} } });
  }
  const context = request.includeContext;
  if (context !== undefined && context !== "none" && !isPlainObject(sampling.context)) {
    return new MissingClientCapabilityError({ sampling: { context: {} } });
  }
  return {
    kind: "sample",
    request: { method: "sampling/createMessage", params: { ...request } },
    check: sampleAnswer,
  };
}

/** A roots request for a client with `capabilities`, or the error the ask rejects with. */
export function prepareRoots(capabilities: Readonly<Record<string, unknown>>): PreparedAsk | Error {
  if (!isPlainObject(capabilities.roots)) return new MissingClientCapabilityError({ roots: {} });
  return { kind: "roots", request: { method: "roots/list", params: {} }, check: rootsAnswer };
}

/** A library's JSON Schema as a form's `requestedSchema`: only the keys the spec's schema has. */
function requestedSchemaOf(json: Readonly<Record<string, unknown>>): ElicitSchema {
  const result: {
    type: "object";
    properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    required?: readonly string[];
  } = {
    type: "object",
    properties: json.properties as Readonly<Record<string, Readonly<Record<string, unknown>>>>,
  };
  if (Array.isArray(json.required)) result.required = json.required as string[];
  return Object.freeze(result);
}

const FORM_RULE =
  "ctx.elicit: the schema must be an object of primitive properties (string, number, integer, boolean, or an array of enum strings), as MCP 2026-07-28 elicitation, 'Requested Schema', restricts it";
const PRIMITIVE_TYPES: ReadonlySet<unknown> = new Set(["string", "number", "integer", "boolean"]);
/** The string formats a form may ask for (2026-07-28 `StringSchema.format`). */
const STRING_FORMATS: ReadonlySet<unknown> = new Set(["email", "uri", "date", "date-time"]);

/**
 * What keeps `schema` from being a form as the spec restricts it (flat, primitive properties,
 * arrays of enums only, the four string formats), or null when it is one.
 */
function formProblem(schema: unknown): string | null {
  if (!isPlainObject(schema) || schema.type !== "object")
    return 'not an object schema (type "object")';
  if (!isPlainObject(schema.properties)) return "no properties object";
  if (
    schema.required !== undefined &&
    (!Array.isArray(schema.required) || !schema.required.every((n) => typeof n === "string"))
  ) {
    return "required is not an array of names";
  }
  for (const [name, property] of Object.entries(schema.properties)) {
    const problem = propertyProblem(property);
    if (problem !== null) return `property ${JSON.stringify(name)} ${problem}`;
  }
  return null;
}

function propertyProblem(property: unknown): string | null {
  if (!isPlainObject(property)) return "is not a schema object";
  if (property.type === "array") {
    return isPlainObject(property.items) && allowedValues(property.items) !== null
      ? null
      : "is an array whose items are not an enum of strings";
  }
  if (!PRIMITIVE_TYPES.has(property.type)) {
    return property.type === undefined
      ? "has no primitive type (a union, a nullable or a nested schema)"
      : `has type ${JSON.stringify(property.type)}`;
  }
  if (property.format !== undefined && !STRING_FORMATS.has(property.format)) {
    return `has format ${JSON.stringify(property.format)} (email, uri, date or date-time only)`;
  }
  return null;
}

/**
 * An `ElicitResult`, checked against the form it answers, then by the library schema the form
 * came from (its output value is what the handler gets); a string says what is wrong. A promise
 * only when that library validates asynchronously.
 */
function elicitAnswer(
  answer: unknown,
  schema: ElicitSchema | null,
  adapter: SchemaAdapter | null,
): unknown {
  if (!isPlainObject(answer)) return "not an object";
  const { action } = answer;
  if (action === "decline" || action === "cancel") return { action };
  if (action !== "accept") return "action must be accept, decline or cancel";
  if (schema === null) return { action }; // URL mode: no content
  const content = answer.content ?? {};
  if (!isPlainObject(content)) return "content must be an object";
  const kept: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = content[name];
    if (value === undefined) {
      if (schema.required?.includes(name)) return `content.${name} is required`;
      continue;
    }
    if (!matches(value, property)) return `content.${name} does not match the requested schema`;
    kept[name] = value;
  }
  if (adapter === null) return { action, content: kept };
  const outcome = adapter.validate(kept);
  const settle = (settled: Awaited<typeof outcome>): unknown =>
    settled.ok
      ? { action, content: settled.value }
      : `content does not match the requested schema (${settled.issues
          .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
          .join("; ")})`;
  return outcome instanceof Promise ? outcome.then(settle) : settle(outcome);
}

/** One value against a primitive property schema of a form (2026-07-28 elicitation, "Requested Schema"). */
function matches(value: unknown, property: Readonly<Record<string, unknown>>): boolean {
  const allowed = allowedValues(property);
  switch (property.type) {
    case "string":
      return typeof value === "string" && (allowed === null || allowed.includes(value));
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array": {
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) return false;
      const items = isPlainObject(property.items) ? allowedValues(property.items) : null;
      return items === null || value.every((item) => items.includes(item));
    }
    default:
      return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
  }
}

/** The values an enum property allows (`enum`, or the `const`s of `oneOf` / `anyOf`), or null. */
function allowedValues(property: Readonly<Record<string, unknown>>): unknown[] | null {
  if (Array.isArray(property.enum)) return property.enum;
  const options = Array.isArray(property.oneOf)
    ? property.oneOf
    : Array.isArray(property.anyOf)
      ? property.anyOf
      : null;
  return options === null
    ? null
    : options.map((option) => (isPlainObject(option) ? option.const : undefined));
}

/** A `CreateMessageResult`; a string says what is wrong. */
function sampleAnswer(answer: unknown): unknown {
  if (!isPlainObject(answer)) return "not an object";
  if (answer.role !== "assistant" && answer.role !== "user")
    return "role must be assistant or user";
  if (typeof answer.model !== "string") return "model must be a string";
  if (answer.stopReason !== undefined && typeof answer.stopReason !== "string") {
    return "stopReason must be a string";
  }
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  if (
    blocks.length === 0 ||
    !blocks.every((block) => isPlainObject(block) && typeof block.type === "string")
  ) {
    return "content must be a content block or an array of them";
  }
  return answer;
}

/** A `ListRootsResult`; a string says what is wrong. */
function rootsAnswer(answer: unknown): unknown {
  if (!isPlainObject(answer) || !Array.isArray(answer.roots)) return "roots must be an array";
  for (const root of answer.roots) {
    if (!isPlainObject(root) || typeof root.uri !== "string" || !root.uri.startsWith("file://")) {
      return "every root needs a file:// uri";
    }
    if (root.name !== undefined && typeof root.name !== "string")
      return "a root's name must be a string";
  }
  return { roots: answer.roots };
}
