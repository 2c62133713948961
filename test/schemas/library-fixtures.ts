/**
 * The same tool and the same prompt defined with each schema library conduit-mcp is tested with
 * (zod 3 through `withJsonSchema` and zod-to-json-schema, zod 4, Valibot through
 * `toStandardJsonSchema`, ArkType), and the JSON Schema each library's own converter makes of
 * them: what `tools/list` must publish.
 *
 * The tool `forecast_<library>` takes `{ city: string (2+ characters), days?: integer }` and
 * returns `{ forecast: string }` as structured content; for the city "Nowhere" it returns
 * `{ forecast: 42 }`, which its output schema refuses. The prompt `review_<library>` takes
 * `{ code: string, language?: string }`.
 */
import { toStandardJsonSchema, toJsonSchema as valibotToJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import { zodToJsonSchema as zodToJsonSchemaTyped } from "zod-to-json-schema";
import { z as z3 } from "zod3";
import {
  definePrompt,
  defineTool,
  type Prompt,
  type Tool,
  withJsonSchema,
} from "../../src/index.js";

/**
 * zod-to-json-schema typed against `zod/v3`, which resolves to zod 4's copy of the v3 API here
 * (zod 3 is installed under the alias `zod3`): comparing the two copies' types makes tsc crawl
 * for minutes, so the schema goes in untyped. In a project on zod 3 both are the same package.
 */
function zodToJsonSchema(schema: unknown): Record<string, unknown> {
  return zodToJsonSchemaTyped(schema as never) as Record<string, unknown>;
}

export const LIBRARIES = ["zod3", "zod4", "valibot", "arktype"] as const;
export type Library = (typeof LIBRARIES)[number];

const zod3Input = z3.object({ city: z3.string().min(2), days: z3.number().int().optional() });
const zod3Output = z3.object({ forecast: z3.string() });
const zod4Input = z.object({ city: z.string().min(2), days: z.number().int().optional() });
const zod4Output = z.object({ forecast: z.string() });
const valibotInput = v.object({
  city: v.pipe(v.string(), v.minLength(2)),
  days: v.optional(v.pipe(v.number(), v.integer())),
});
const valibotOutput = v.object({ forecast: v.string() });
const arkInput = type({ city: "string >= 2", "days?": "number.integer" });
const arkOutput = type({ forecast: "string" });

/** What each library's own converter makes of the tool's input schema. */
export const EXPECTED_INPUT_SCHEMA: Readonly<Record<Library, unknown>> = {
  zod3: zodToJsonSchema(zod3Input),
  zod4: z.toJSONSchema(zod4Input, { target: "draft-2020-12", io: "input" }),
  valibot: valibotToJsonSchema(valibotInput, { target: "draft-2020-12" }),
  arktype: arkInput.toJsonSchema(),
};

/** The same, of the output schema. */
export const EXPECTED_OUTPUT_SCHEMA: Readonly<Record<Library, unknown>> = {
  zod3: zodToJsonSchema(zod3Output),
  zod4: z.toJSONSchema(zod4Output, { target: "draft-2020-12", io: "output" }),
  valibot: valibotToJsonSchema(valibotOutput, { target: "draft-2020-12" }),
  arktype: arkOutput.toJsonSchema(),
};

function forecast(args: { city: string; days?: number | undefined }): { forecast: unknown } {
  if (args.city === "Nowhere") return { forecast: 42 };
  return { forecast: `${args.city}: sunny for ${args.days ?? 1} day(s)` };
}

export const libraryTools: Readonly<Record<Library, Tool>> = {
  zod3: defineTool({
    name: "forecast_zod3",
    input: withJsonSchema(zod3Input, zodToJsonSchema(zod3Input)),
    output: withJsonSchema(zod3Output, zodToJsonSchema(zod3Output)),
    handler: (args) => forecast(args) as never,
  }),
  zod4: defineTool({
    name: "forecast_zod4",
    input: zod4Input,
    output: zod4Output,
    handler: (args) => forecast(args) as never,
  }),
  valibot: defineTool({
    name: "forecast_valibot",
    input: toStandardJsonSchema(valibotInput),
    output: toStandardJsonSchema(valibotOutput),
    handler: (args) => forecast(args) as never,
  }),
  arktype: defineTool({
    name: "forecast_arktype",
    input: arkInput,
    output: arkOutput,
    handler: (args) => forecast(args) as never,
  }),
};

function review(args: { code: string; language?: string | undefined }): string {
  return `Review this ${args.language ?? "code"}: ${args.code}`;
}

export const libraryPrompts: Readonly<Record<Library, Prompt>> = {
  zod3: definePrompt({
    name: "review_zod3",
    arguments: withJsonSchema(
      z3.object({ code: z3.string().describe("The code"), language: z3.string().optional() }),
      zodToJsonSchema(
        z3.object({ code: z3.string().describe("The code"), language: z3.string().optional() }),
      ),
    ),
    get: review,
  }),
  zod4: definePrompt({
    name: "review_zod4",
    arguments: z.object({ code: z.string().describe("The code"), language: z.string().optional() }),
    get: review,
  }),
  valibot: definePrompt({
    name: "review_valibot",
    arguments: toStandardJsonSchema(
      v.object({
        code: v.pipe(v.string(), v.description("The code")),
        language: v.optional(v.string()),
      }),
    ),
    get: review,
  }),
  arktype: definePrompt({
    name: "review_arktype",
    arguments: type({ code: type.string.describe("The code"), "language?": "string" }),
    get: review,
  }),
};
