/**
 * A Standard Schema given a JSON Schema by hand, for libraries that have no converter of their
 * own (zod 3, or any Standard Schema without `~standard.jsonSchema`): the result implements
 * Standard JSON Schema (https://standardschema.dev/json-schema) and validates through the
 * original schema, so its inferred types carry over.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from "@standard-schema/spec";

import { InvalidOptionError } from "../../errors.js";
import { isPlainObject } from "./json-rpc.js";
import { isStandardSchema, type JsonSchemaObject } from "./schema-adapter.js";

/** A schema that validates (Standard Schema) and describes itself (Standard JSON Schema). */
export interface StandardSchemaWithJson<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaV1.Props<Input, Output> &
    StandardJSONSchemaV1.Props<Input, Output>;
}

/**
 * Pairs `schema` with the JSON Schema to publish for it (used for both its input and output
 * side). Throws an `InvalidOptionError` unless `schema` is a Standard Schema and `jsonSchema` a
 * plain JSON object.
 *
 * @example
 * ```ts
 * import { z } from "zod3"; // zod 3
 * import { zodToJsonSchema } from "zod-to-json-schema";
 * const input = z.object({ city: z.string() });
 * defineTool({ name: "weather", input: withJsonSchema(input, zodToJsonSchema(input)), handler });
 * ```
 */
export function withJsonSchema<S extends StandardSchemaV1>(
  schema: S,
  jsonSchema: JsonSchemaObject,
): StandardSchemaWithJson<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> {
  if (!isStandardSchema(schema)) {
    throw new InvalidOptionError("withJsonSchema: schema", "a Standard Schema", schema);
  }
  if (!isPlainObject(jsonSchema)) {
    throw new InvalidOptionError("withJsonSchema: jsonSchema", "a JSON Schema object", jsonSchema);
  }
  const own = schema["~standard"];
  const describe = () => jsonSchema as Record<string, unknown>;
  return Object.freeze({
    "~standard": Object.freeze({
      version: 1 as const,
      vendor: own.vendor,
      // Through the schema each time: some libraries define `~standard` as a getter bound to it.
      validate: (value: unknown) =>
        schema["~standard"].validate(value) as
          | StandardSchemaV1.Result<StandardSchemaV1.InferOutput<S>>
          | Promise<StandardSchemaV1.Result<StandardSchemaV1.InferOutput<S>>>,
      jsonSchema: Object.freeze({ input: describe, output: describe }),
      ...(own.types === undefined ? {} : { types: own.types }),
    }),
  }) as StandardSchemaWithJson<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
}
