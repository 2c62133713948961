/**
 * Any schema library that implements Standard Schema (https://standardschema.dev: a `~standard`
 * object with `version: 1`, a `vendor` and `validate`), seen the one way the protocol needs it:
 * a JSON Schema to publish (tools' `inputSchema` / `outputSchema`, prompts' `arguments`,
 * elicitation's `requestedSchema`) and a validation of what a client sent, with its issues
 * bounded and made safe to echo.
 *
 * The JSON Schema comes from the library itself, never guessed: the Standard JSON Schema
 * interface (`~standard.jsonSchema`, https://standardschema.dev/json-schema: zod 4.2+, ArkType,
 * Valibot through `toStandardJsonSchema`, anything wrapped by `withJsonSchema`), else a converter
 * the schema carries (zod 4 before 4.2, ArkType's `toJsonSchema()`). A schema with neither is
 * refused when it is defined, with the way to give one.
 *
 * `validate` may answer synchronously or with a promise (Standard Schema allows both); the
 * adapter keeps a synchronous answer synchronous so the common case costs no promise.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";
import { z } from "zod";

import { InvalidOptionError } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import { isPlainObject } from "./json-rpc.js";

/** A JSON Schema object, as published on the wire. */
export type JsonSchemaObject = { readonly [key: string]: unknown };

/** One problem found in a value: where (`a.b`, empty for the root) and what. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

/** What a validation found: the library's output value, or its issues. */
export type SchemaOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** Which side of a schema is described: what it accepts, or what it produces. */
export type SchemaSide = "input" | "output";

/** A Standard Schema seen as the protocol needs it (see the module comment). */
export interface SchemaAdapter {
  /** The library's name (`~standard.vendor`), for messages. */
  readonly vendor: string;
  /**
   * The JSON Schema (draft 2020-12 unless the library says otherwise) of one side, frozen;
   * computed on first use, then kept. Throws an `InvalidOptionError` when there is none.
   */
  jsonSchema(side: SchemaSide): JsonSchemaObject;
  /** Validates `value`; a promise only when the library answered with one. Rejects/throws when the library throws. */
  validate(value: unknown): SchemaOutcome | Promise<SchemaOutcome>;
}

/** At most this many issues go back to a client, so a hostile payload cannot inflate the answer. */
const MAX_ISSUES = 20;
/** Longest path or message of one issue as echoed (client-chosen keys and values may be in it). */
const MAX_ISSUE_TEXT = 200;
const TARGET = "draft-2020-12";

/**
 * Whether `value` implements Standard Schema v1 (a `~standard` object with `version: 1`, a
 * `vendor` string and a `validate` function).
 *
 * @example
 * ```ts
 * isStandardSchema(z.object({})); // true
 * isStandardSchema({ type: "object" }); // false
 * ```
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const props = (value as { "~standard"?: unknown })["~standard"];
  return (
    typeof props === "object" &&
    props !== null &&
    (props as { version?: unknown }).version === 1 &&
    typeof (props as { vendor?: unknown }).vendor === "string" &&
    typeof (props as { validate?: unknown }).validate === "function"
  );
}

/**
 * Whether `value` looks like a schema object of some library that is not a Standard Schema (an
 * old zod 3, a validator of another kind): taking it for a JSON Schema would publish garbage and
 * skip validation.
 */
export function looksLikeForeignSchema(value: unknown): boolean {
  if (typeof value !== "object" || value === null || isStandardSchema(value)) return false;
  return (
    "_def" in value ||
    "~standard" in value ||
    typeof (value as { parse?: unknown }).parse === "function"
  );
}

/**
 * Adapts a Standard Schema; throws an `InvalidOptionError` under `label` when no JSON Schema can
 * be had from it (see the module comment), naming the way to give one.
 *
 * @example
 * ```ts
 * const adapter = adaptSchema(z.object({ text: z.string() }), "tool echo: input");
 * adapter.jsonSchema("input"); // { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", … }
 * adapter.validate({ text: 1 }); // { ok: false, issues: [{ path: "text", message: "Invalid input: …" }] }
 * ```
 */
export function adaptSchema(schema: StandardSchemaV1, label: string): SchemaAdapter {
  const props = schema["~standard"];
  const vendor = props.vendor;
  // Each side only when asked: a schema may convert on one side and not the other (a transform
  // has an input type but no JSON Schema for what it produces).
  const published: Partial<Record<SchemaSide, JsonSchemaObject>> = {};
  return Object.freeze({
    vendor,
    jsonSchema(side: SchemaSide): JsonSchemaObject {
      published[side] ??= publishable(label, vendor, () => convert(schema, side));
      return published[side];
    },
    validate(value: unknown): SchemaOutcome | Promise<SchemaOutcome> {
      // Called on the schema's own `~standard` each time: some libraries define it as a getter.
      const result = schema["~standard"].validate(value);
      return result instanceof Promise ? result.then(outcomeOf) : outcomeOf(result);
    },
  });
}

/** The library's converter for one side, or null when the schema carries none. */
function convert(schema: StandardSchemaV1, side: SchemaSide): unknown {
  const props = schema["~standard"] as StandardSchemaV1.Props & {
    readonly jsonSchema?: Partial<StandardJSONSchemaV1.Converter>;
  };
  const converter = props.jsonSchema?.[side];
  if (typeof converter === "function") {
    return converter.call(props.jsonSchema, { target: TARGET });
  }
  // zod 4 before the Standard JSON Schema interface (4.0, 4.1): its own converter.
  if (props.vendor === "zod" && "_zod" in schema) {
    return z.toJSONSchema(schema as unknown as z.ZodType, { target: TARGET, io: side });
  }
  // ArkType before the interface: `toJsonSchema()` on the type (one schema for both sides).
  const own = (schema as { toJsonSchema?: unknown }).toJsonSchema;
  if (props.vendor === "arktype" && typeof own === "function") return own.call(schema);
  return null;
}

/** Runs `produce` once, at definition: a JSON object, copied through JSON and frozen, or a clear error. */
function publishable(label: string, vendor: string, produce: () => unknown): JsonSchemaObject {
  let produced: unknown;
  try {
    produced = produce();
  } catch (error) {
    // A library converter refuses what JSON Schema cannot say (a transform, a bigint): say so.
    const why = error instanceof Error ? error.message : String(error);
    throw new InvalidOptionError(label, `a schema that converts to JSON Schema (${why})`, vendor);
  }
  if (produced === null || produced === undefined) {
    throw new InvalidOptionError(label, remedyFor(vendor), `a ${vendor} schema`);
  }
  // A copy through JSON: plain data only (no functions, no shared references to the library's
  // objects), identical to what clients will read.
  const copy: unknown = JSON.parse(JSON.stringify(produced));
  if (!isPlainObject(copy)) {
    throw new InvalidOptionError(label, "a schema whose JSON Schema is an object", vendor);
  }
  return deepFreeze(copy);
}

/** What to do when a library gives no JSON Schema, by vendor. */
function remedyFor(vendor: string): string {
  const wrap = "or pass it as withJsonSchema(schema, jsonSchema) with a JSON Schema you supply";
  if (vendor === "zod") {
    return `a schema with a JSON Schema converter: zod 3 has none of its own; use withJsonSchema(schema, zodToJsonSchema(schema)) (zod-to-json-schema), or zod 4`;
  }
  if (vendor === "valibot") {
    return `a schema with a JSON Schema converter: wrap it with toStandardJsonSchema(schema) from @valibot/to-json-schema, ${wrap}`;
  }
  return `a Standard Schema that implements Standard JSON Schema (~standard.jsonSchema), ${wrap}`;
}

/** A Standard Schema result as an outcome: issues present means failure (the spec's rule). */
function outcomeOf(result: StandardSchemaV1.Result<unknown>): SchemaOutcome {
  if (result.issues === undefined) return { ok: true, value: result.value };
  const issues: SchemaIssue[] = [];
  for (const issue of result.issues) {
    if (issues.length >= MAX_ISSUES) break;
    // Paths hold client-chosen keys and messages may quote client values: reflected like any
    // other echoed input (bounded, no control or bidi characters).
    issues.push({
      path: reflectText(pathOf(issue.path), MAX_ISSUE_TEXT),
      message: reflectText(
        typeof issue.message === "string" ? issue.message : "invalid",
        MAX_ISSUE_TEXT,
      ),
    });
  }
  if (issues.length === 0) issues.push({ path: "", message: "invalid" });
  return { ok: false, issues };
}

/** `a.b.0` from a Standard Schema path (keys, or `{ key }` segments). */
function pathOf(path: StandardSchemaV1.Issue["path"]): string {
  if (path === undefined) return "";
  const keys: string[] = [];
  for (const segment of path) {
    const key =
      typeof segment === "object" && segment !== null
        ? (segment as StandardSchemaV1.PathSegment).key
        : segment;
    keys.push(typeof key === "symbol" ? (key.description ?? "") : String(key));
    if (keys.length >= 32) break;
  }
  return keys.join(".");
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
