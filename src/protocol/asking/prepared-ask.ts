/**
 * One question prepared for a client with given capabilities: the spec's request and the check
 * of its answer, or the error the ask rejects with (a capability the client did not declare, or
 * a form schema the spec does not allow). Every era's asker asks through these, so a question and
 * the check of its answer are the same on 2025-11-25 server requests, 2026-07-28 input-required
 * results and tasks (MCP 2026-07-28 client/elicitation "Requested Schema", client/sampling,
 * client/roots).
 */
import { z } from "zod";
import { MissingClientCapabilityError } from "../../errors.js";
import { isPlainObject } from "../wire/index.js";
import type { ElicitSchema, PreparedAsk, SampleRequest } from "./client-asker.js";

/**
 * A form elicitation for a client with `capabilities`, or the error the ask rejects with: a
 * {@link MissingClientCapabilityError}, or a TypeError for a schema the spec does not allow.
 */
export function prepareElicit(
  capabilities: Readonly<Record<string, unknown>>,
  message: string,
  schema: ElicitSchema | z.ZodObject,
): PreparedAsk | Error {
  const elicitation = capabilities.elicitation;
  // An empty `elicitation` object declares form mode (2025-11-25 and 2026-07-28 elicitation,
  // "Capabilities").
  const form =
    isPlainObject(elicitation) &&
    (isPlainObject(elicitation.form) || !isPlainObject(elicitation.url));
  if (!form) return new MissingClientCapabilityError({ elicitation: {} });
  const zod = schema instanceof z.ZodType ? schema : null;
  const requestedSchema = zod === null ? (schema as ElicitSchema) : jsonSchemaOf(zod);
  // A programming error, reported as such (-32603 and the server's onError), not sent.
  if (!isFlatForm(requestedSchema)) return new TypeError(FORM_RULE);
  return {
    kind: "elicit",
    request: { method: "elicitation/create", params: { mode: "form", message, requestedSchema } },
    check: (answer) => elicitAnswer(answer, requestedSchema, zod),
  };
}

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

/** A zod object as a form's `requestedSchema` (only the keys the spec's schema has). */
function jsonSchemaOf(schema: z.ZodType): ElicitSchema {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
  const result: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  } = {
    type: "object",
    properties: (json.properties ?? {}) as Record<string, Record<string, unknown>>,
  };
  if (Array.isArray(json.required)) result.required = json.required as string[];
  return result;
}

const FORM_RULE =
  "ctx.elicit: the schema must be an object of primitive properties (string, number, integer, boolean, or an array of enum strings), as MCP 2026-07-28 elicitation, 'Requested Schema', restricts it";
const PRIMITIVE_TYPES: ReadonlySet<unknown> = new Set(["string", "number", "integer", "boolean"]);

/** A form's schema as the spec restricts it: flat, primitive properties (arrays of enums only). */
function isFlatForm(schema: unknown): boolean {
  if (!isPlainObject(schema) || schema.type !== "object" || !isPlainObject(schema.properties)) {
    return false;
  }
  if (schema.required !== undefined && !Array.isArray(schema.required)) return false;
  return Object.values(schema.properties).every(
    (property) =>
      isPlainObject(property) &&
      (PRIMITIVE_TYPES.has(property.type) ||
        (property.type === "array" &&
          isPlainObject(property.items) &&
          allowedValues(property.items) !== null)),
  );
}

/** An `ElicitResult`, checked against the form it answers; a string says what is wrong. */
function elicitAnswer(
  answer: unknown,
  schema: ElicitSchema | null,
  zod: z.ZodType | null,
): unknown {
  if (!isPlainObject(answer)) return "not an object";
  const { action } = answer;
  if (action === "decline" || action === "cancel") return { action };
  if (action !== "accept") return "action must be accept, decline or cancel";
  if (schema === null) return { action }; // URL mode: no content
  const content = answer.content ?? {};
  if (!isPlainObject(content)) return "content must be an object";
  if (zod !== null) {
    const parsed = zod.safeParse(content);
    return parsed.success
      ? { action, content: parsed.data }
      : "content does not match the requested schema";
  }
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
  return { action, content: kept };
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
