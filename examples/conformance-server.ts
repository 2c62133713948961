/**
 * An MCP server built with conduit-mcp that serves what the official conformance suite
 * (@modelcontextprotocol/conformance, stable and alpha lines) asks for in the scenarios this
 * project targets: server-initialize, ping, tools-list, tools-call-* (the 2025-11-25 sampling and
 * elicitation ones, elicitation-sep1034-defaults and elicitation-sep1330-enums ask the client
 * with requests on the call's stream), the 2026-07-28
 * input-required-result-* scenarios (asking the client through input_required results),
 * json-schema-2020-12, dns-rebinding-protection, resources-* (subscriptions too), prompts-*,
 * completion-complete, caching, sep-2164-resource-not-found and the HTTP header scenarios. Tool names and results follow the scenario descriptions
 * (each scenario's description in the suite). `npm run conformance` starts it on a free port.
 *
 * Run: `node --import tsx examples/conformance-server.ts [--port N] [--host H]` (or `PORT=N`);
 * prints `conformance server listening on http://HOST:PORT/mcp`.
 */
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { z } from "zod";

import { MissingClientCapabilityError } from "../src/errors.js";
import { definePrompt, defineResource, defineResourceTemplate } from "../src/protocol/index.js";
import { createMcpServer, defineTool } from "../src/server/index.js";

const NAME_FORM = {
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"],
} as const;
const CONFIRM_FORM = {
  type: "object",
  properties: { confirm: { type: "boolean" } },
  required: ["confirm"],
} as const;
const OK_FORM = {
  type: "object",
  properties: { ok: { type: "boolean" } },
  required: ["ok"],
} as const;
const COLOR_FORM = {
  type: "object",
  properties: { color: { type: "string" } },
  required: ["color"],
} as const;
const CONTEXT_FORM = {
  type: "object",
  properties: { context: { type: "string" } },
  required: ["context"],
} as const;
const CAPITAL_QUESTION = {
  messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
  maxTokens: 100,
} as const;
const GREETING_REQUEST = {
  messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
  maxTokens: 50,
} as const;

/** The text of a sampling answer's content (a block or an array of blocks). */
function textOf(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((block) => (typeof block?.text === "string" ? block.text : "")).join("");
}

/** A 1×1 red PNG (8-bit RGB), the "minimal test image" the image scenarios ask for. */
const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/**
 * A valid, tiny WAV file (RIFF/PCM, mono, 8 kHz, 8-bit, 8 samples of silence), built here so the
 * bytes are explainable rather than an opaque blob. Header layout: RIFF chunk, `fmt ` chunk
 * (16 bytes of PCM format), `data` chunk.
 */
function silentWav(samples = 8, sampleRate = 8_000): string {
  const wav = Buffer.alloc(44 + samples);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + samples, 4);
  wav.write("WAVE", 8, "ascii");
  wav.write("fmt ", 12, "ascii");
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate, 28); // byte rate = rate × channels × bytes per sample
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(samples, 40);
  wav.fill(128, 44); // 8-bit PCM silence is the midpoint
  return wav.toString("base64");
}

/**
 * The json-schema-2020-12 fixture: a raw JSON Schema (not zod), published as is so `$schema`,
 * `$defs`, `additionalProperties` (SEP-1613) and the wider SEP-2106 vocabulary (`$anchor`,
 * `allOf`/`anyOf`, `if`/`then`/`else`) reach the client unchanged.
 */
const JSON_SCHEMA_2020_12_INPUT = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: {
    address: {
      $anchor: "addressDef",
      type: "object",
      properties: { street: { type: "string" }, city: { type: "string" } },
    },
  },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword; a non-function `then` is inert under await
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

const tools = [
  defineTool({
    name: "test_simple_text",
    description: "Returns a fixed text (tools-call-simple-text)",
    handler: () => "This is a simple text response for testing.",
  }),
  defineTool({
    name: "test_image_content",
    description: "Returns a 1x1 PNG (tools-call-image)",
    handler: () => ({ content: [{ type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" }] }),
  }),
  defineTool({
    name: "test_audio_content",
    description: "Returns a tiny WAV (tools-call-audio)",
    handler: () => ({ content: [{ type: "audio", data: silentWav(), mimeType: "audio/wav" }] }),
  }),
  defineTool({
    name: "test_embedded_resource",
    description: "Returns an embedded text resource (tools-call-embedded-resource)",
    handler: () => ({
      content: [
        {
          type: "resource",
          resource: {
            uri: "test://embedded-resource",
            mimeType: "text/plain",
            text: "This is an embedded resource content.",
          },
        },
      ],
    }),
  }),
  defineTool({
    name: "test_multiple_content_types",
    description: "Returns text, image and resource content (tools-call-mixed-content)",
    handler: () => ({
      content: [
        { type: "text", text: "Multiple content types test:" },
        { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
        {
          type: "resource",
          resource: {
            uri: "test://mixed-content-resource",
            mimeType: "application/json",
            text: JSON.stringify({ test: "data", value: 123 }),
          },
        },
      ],
    }),
  }),
  defineTool({
    name: "test_tool_with_logging",
    description: "Sends three info log messages ~50 ms apart (tools-call-with-logging)",
    handler: async (_args, ctx) => {
      await ctx.log("info", "Tool execution started");
      await delay(50, undefined, { signal: ctx.signal });
      await ctx.log("info", "Tool processing data");
      await delay(50, undefined, { signal: ctx.signal });
      await ctx.log("info", "Tool execution completed");
      return "Logging test completed: sent 3 log messages";
    },
  }),
  defineTool({
    name: "test_error_handling",
    description: "Always fails, reported as a tool-level error result (tools-call-error)",
    // A tool-level failure is an `isError` result the model can read; a *thrown* exception would
    // become a -32603 protocol error with its message withheld (README, "Serving your own tools").
    handler: () => ({
      isError: true,
      content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
    }),
  }),
  defineTool({
    name: "test_tool_with_progress",
    description: "Reports progress 0, 50, 100 of 100 ~50 ms apart (tools-call-with-progress)",
    handler: async (_args, ctx) => {
      await ctx.progress(0, 100);
      await delay(50, undefined, { signal: ctx.signal });
      await ctx.progress(50, 100);
      await delay(50, undefined, { signal: ctx.signal });
      await ctx.progress(100, 100);
      return "Progress test completed";
    },
  }),
  // Diagnostic tools of the alpha suite's server-stateless scenario (2026-07-28 requirements).
  defineTool({
    name: "test_missing_capability",
    description: "Needs the sampling capability: refused with -32021 unless _meta declares it",
    requiredClientCapabilities: { sampling: {} },
    handler: () => "sampling capability declared",
  }),
  defineTool({
    name: "test_logging_tool",
    description: "Logs at info; a modern request without _meta logLevel receives no log messages",
    handler: async (_args, ctx) => {
      await ctx.log("info", "test_logging_tool ran");
      return "logged";
    },
  }),
  // http-custom-header-server-validation: a tool with an `x-mcp-header` string argument, whose
  // Mcp-Param-Region header the scenario sends plain, base64-encoded, malformed and missing.
  defineTool({
    name: "test_header_routing",
    description: "Mirrors its region argument into the Mcp-Param-Region header",
    input: z.object({
      region: z.string().meta({ "x-mcp-header": "Region" }),
      query: z.string(),
    }),
    handler: ({ region, query }) => `${query} in ${region}`,
  }),
  // input-required-result-* (2026-07-28 requirements): tools that ask the client through
  // ctx.elicit / ctx.sample / ctx.roots; the request answers input_required until the retry
  // carries the answers (docs/asking-the-client.md).
  defineTool({
    name: "test_input_required_result_elicitation",
    description: "Asks the user's name (one elicitation), then greets them",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
      return answer.action === "accept" ? `Hello, ${answer.content.name}!` : "No name given.";
    },
  }),
  defineTool({
    name: "test_input_required_result_sampling",
    description: "Asks the client's model a question (one sampling request)",
    handler: async (_args, ctx) => {
      const answer = await ctx.sample(CAPITAL_QUESTION, { key: "capital_question" });
      return `The model said: ${textOf(answer.content)}`;
    },
  }),
  defineTool({
    name: "test_input_required_result_list_roots",
    description: "Asks the client for its roots",
    handler: async (_args, ctx) => {
      const { roots } = await ctx.roots({ key: "client_roots" });
      return `Roots: ${roots.map((root) => root.uri).join(", ")}`;
    },
  }),
  defineTool({
    name: "test_input_required_result_request_state",
    description: "Asks for a confirmation; the retry's requestState is checked before completing",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("Please confirm", OK_FORM, { key: "confirm" });
      // Reaching here on a retry means the sealed requestState opened (else -32602).
      return `state-ok: ${answer.action}`;
    },
  }),
  defineTool({
    name: "test_input_required_result_multiple_inputs",
    description: "Asks an elicitation, a sampling and a roots question in one round",
    handler: async (_args, ctx) => {
      const [name, greeting, { roots }] = await Promise.all([
        ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" }),
        ctx.sample(GREETING_REQUEST, { key: "greeting" }),
        ctx.roots({ key: "client_roots" }),
      ]);
      const who = name.action === "accept" ? name.content.name : "someone";
      return `${textOf(greeting.content)} ${who} (${roots.length} roots)`;
    },
  }),
  defineTool({
    name: "test_input_required_result_multi_round",
    description: "Asks two questions, one round each",
    handler: async (_args, ctx) => {
      const step1 = await ctx.elicit("Step 1: What is your name?", NAME_FORM, { key: "step1" });
      const step2 = await ctx.elicit("Step 2: What is your favorite color?", COLOR_FORM, {
        key: "step2",
      });
      const name = step1.action === "accept" ? step1.content.name : "?";
      const color = step2.action === "accept" ? step2.content.color : "?";
      return `${name} likes ${color}`;
    },
  }),
  defineTool({
    name: "test_input_required_result_tampered_state",
    description: "Asks for a confirmation; a tampered requestState is refused with -32602",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("Please confirm", OK_FORM, { key: "confirm" });
      return `confirmed: ${answer.action}`;
    },
  }),
  defineTool({
    name: "test_input_required_result_capabilities",
    description: "Asks only what the client declared: elicitation if it can, else sampling",
    handler: async (_args, ctx) => {
      try {
        const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
        return `elicited: ${answer.action}`;
      } catch (error) {
        if (!(error instanceof MissingClientCapabilityError)) throw error;
      }
      const answer = await ctx.sample(CAPITAL_QUESTION, { key: "capital_question" });
      return `sampled: ${textOf(answer.content)}`;
    },
  }),
  // tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults and
  // elicitation-sep1330-enums (2025-11-25 requirements): the same ctx.elicit / ctx.sample, sent as
  // server-to-client requests on the call's SSE stream (docs/asking-the-client.md).
  defineTool({
    name: "test_sampling",
    description: "Asks the client's model the prompt (sampling/createMessage)",
    input: z.object({ prompt: z.string() }),
    handler: async ({ prompt }, ctx) => {
      const answer = await ctx.sample({
        messages: [{ role: "user", content: { type: "text", text: prompt } }],
        maxTokens: 100,
      });
      return `LLM response: ${textOf(answer.content)}`;
    },
  }),
  defineTool({
    name: "test_elicitation",
    description: "Asks the user for a username and an email (elicitation/create)",
    input: z.object({ message: z.string() }),
    handler: async ({ message }, ctx) => {
      const answer = await ctx.elicit(message, {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      });
      return `User response: action: ${answer.action}, content: ${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  defineTool({
    name: "test_elicitation_sep1034_defaults",
    description: "Elicits a form whose every primitive field has a default (SEP-1034)",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("Please review your details", {
        type: "object",
        properties: {
          name: { type: "string", default: "John Doe" },
          age: { type: "integer", default: 30 },
          score: { type: "number", default: 95.5 },
          status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", default: true },
        },
      });
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  defineTool({
    name: "test_elicitation_sep1330_enums",
    description: "Elicits a form with the five enum shapes (SEP-1330)",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("Please choose", {
        type: "object",
        properties: {
          untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
          titledSingle: {
            type: "string",
            oneOf: [
              { const: "value1", title: "First Option" },
              { const: "value2", title: "Second Option" },
              { const: "value3", title: "Third Option" },
            ],
          },
          legacyEnum: {
            type: "string",
            enum: ["opt1", "opt2", "opt3"],
            enumNames: ["Option One", "Option Two", "Option Three"],
          },
          untitledMulti: {
            type: "array",
            items: { type: "string", enum: ["option1", "option2", "option3"] },
          },
          titledMulti: {
            type: "array",
            items: {
              anyOf: [
                { const: "value1", title: "First Choice" },
                { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" },
              ],
            },
          },
        },
      });
      return `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  // server-stateless's no-independent-requests check: the call's stream carries its input_required
  // result, never a server-to-client request.
  defineTool({
    name: "test_streaming_elicitation",
    description: "Elicits through an input_required result (never a request on the stream)",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
      return `elicited: ${answer.action}`;
    },
  }),
  // tasks-* (the io.modelcontextprotocol/tasks extension, SEP-2663): the fixtures the scenario
  // descriptions name. A task-supporting tool called by a client that declares the extension
  // answers with a task (docs/tasks.md).
  defineTool({
    name: "greet",
    description: "Greets by name, synchronously (never a task)",
    input: z.object({ name: z.string().max(200) }),
    handler: ({ name }) => `Hello, ${name}!`,
  }),
  defineTool({
    name: "slow_compute",
    description: "Sleeps `seconds` seconds (0 for at once), then answers; cancellable",
    input: z.object({
      seconds: z.number().min(0).max(600),
      label: z.string().max(200).optional(),
    }),
    task: "optional",
    handler: async ({ seconds, label }, ctx) => {
      await delay(seconds * 1_000, undefined, { signal: ctx.signal });
      return `computed ${label ?? "result"} after ${seconds} s`;
    },
  }),
  defineTool({
    name: "failing_job",
    description: "Runs only as a task; reports a tool execution error after about a second",
    task: "required",
    handler: async (_args, ctx) => {
      await delay(1_000, undefined, { signal: ctx.signal });
      return { isError: true, content: [{ type: "text", text: "The job failed as designed." }] };
    },
  }),
  defineTool({
    name: "protocol_error_job",
    description: "Runs as a task and throws: the task fails with a JSON-RPC internal error",
    task: "optional",
    handler: async (_args, ctx) => {
      await delay(100, undefined, { signal: ctx.signal });
      throw new Error("protocol_error_job failed as designed");
    },
  }),
  defineTool({
    name: "confirm_delete",
    description: "Runs as a task and asks for a confirmation (one elicitation)",
    task: "optional",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit("Delete the file?", CONFIRM_FORM, { key: "confirm" });
      return answer.action === "accept" && answer.content.confirm === true ? "deleted" : "kept";
    },
  }),
  defineTool({
    name: "multi_input",
    description: "Runs as a task and asks two questions at once",
    task: "optional",
    handler: async (_args, ctx) => {
      const [first, second] = await Promise.all([
        ctx.elicit("First name?", NAME_FORM, { key: "first" }),
        ctx.elicit("Last name?", NAME_FORM, { key: "last" }),
      ]);
      return `${first.action}/${second.action}`;
    },
  }),
  // tasks-mrtr-composition: the name is asked on the request (input_required rounds) before the
  // task exists; the task then runs with it (docs/tasks.md, beforeTask).
  defineTool({
    name: "test_tool_with_task",
    description: "Asks the user's name through input_required, then runs as a task",
    task: "required",
    beforeTask: async (_args, ctx) => {
      const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
      return answer.action === "accept" ? String(answer.content.name) : null;
    },
    handler: async (_args, ctx, name) => {
      await delay(100, undefined, { signal: ctx.signal });
      return name === null ? "No name given." : `Hello, ${name}!`;
    },
  }),
  // server-stateless's subscriptions/listen checks: each call changes a list (a dynamic item
  // comes and goes), so listeners that asked hear notifications/<list>/list_changed.
  defineTool({
    name: "test_trigger_tool_change",
    description: "Adds or removes the tool test_dynamic_tool (a tools list change)",
    handler: () => {
      if (!server.tools.remove(DYNAMIC_TOOL.name)) server.tools.add(DYNAMIC_TOOL);
      return "tools list changed";
    },
  }),
  defineTool({
    name: "test_trigger_prompt_change",
    description: "Adds or removes the prompt test_dynamic_prompt (a prompts list change)",
    handler: () => {
      if (!server.prompts.remove(DYNAMIC_PROMPT.name)) server.prompts.add(DYNAMIC_PROMPT);
      return "prompts list changed";
    },
  }),
  defineTool({
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    input: JSON_SCHEMA_2020_12_INPUT,
    handler: (args) => `received ${JSON.stringify(args)}`,
  }),
];

const DYNAMIC_TOOL = defineTool({
  name: "test_dynamic_tool",
  description: "Present every other test_trigger_tool_change call",
  handler: () => "dynamic",
});
const DYNAMIC_PROMPT = definePrompt({
  name: "test_dynamic_prompt",
  description: "Present every other test_trigger_prompt_change call",
  get: () => "dynamic",
});

// resources-list, resources-read-text, resources-read-binary; sep-2164-resource-not-found needs
// no resource of its own (it reads a URI nothing serves: -32602 with data.uri).
const resources = [
  defineResource({
    uri: "test://static-text",
    name: "static-text",
    description: "A static text resource (resources-read-text)",
    mimeType: "text/plain",
    read: () => "This is the content of the static text resource.",
  }),
  defineResource({
    uri: "test://static-binary",
    name: "static-binary",
    description: "A static PNG (resources-read-binary)",
    mimeType: "image/png",
    read: () => ({ blob: RED_PIXEL_PNG }),
  }),
];

// resources-templates-read: the id substituted into JSON contents.
const resourceTemplates = [
  defineResourceTemplate({
    uriTemplate: "test://template/{id}/data",
    name: "template-data",
    description: "Data for one id (resources-templates-read)",
    mimeType: "application/json",
    complete: { id: (value) => ["123", "456", "789"].filter((id) => id.startsWith(value)) },
    read: ({ variables }) =>
      JSON.stringify({
        id: variables.id,
        templateTest: true,
        data: `Data for ID: ${variables.id}`,
      }),
  }),
];

// prompts-list, prompts-get-*; completion-complete completes test_prompt_with_arguments' arg1.
const prompts = [
  definePrompt({
    name: "test_simple_prompt",
    description: "A prompt without arguments (prompts-get-simple)",
    get: () => "This is a simple prompt for testing.",
  }),
  definePrompt({
    name: "test_prompt_with_arguments",
    description: "A prompt with two required arguments (prompts-get-with-args)",
    arguments: z.object({
      arg1: z.string().describe("First test argument"),
      arg2: z.string().describe("Second test argument"),
    }),
    complete: {
      arg1: (value) => ["paris", "park", "party", "test"].filter((v) => v.startsWith(value)),
    },
    get: ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
  }),
  definePrompt({
    name: "test_prompt_with_embedded_resource",
    description: "A prompt embedding a resource (prompts-get-embedded-resource)",
    arguments: z.object({ resourceUri: z.string().describe("URI of the resource to embed") }),
    get: ({ resourceUri }) => [
      {
        role: "user",
        content: {
          type: "resource",
          resource: {
            uri: resourceUri,
            mimeType: "text/plain",
            text: "Embedded resource content for testing.",
          },
        },
      },
      {
        role: "user",
        content: { type: "text", text: "Please process the embedded resource above." },
      },
    ],
  }),
  // input-required-result-non-tool-request: prompts/get asks too.
  definePrompt({
    name: "test_input_required_result_prompt",
    description: "Asks which context to use before building the prompt",
    get: async (_args, ctx) => {
      const answer = await ctx.elicit("What context should the prompt use?", CONTEXT_FORM, {
        key: "user_context",
      });
      const context = answer.action === "accept" ? answer.content.context : "none";
      return `Use this context: ${context}`;
    },
  }),
  definePrompt({
    name: "test_prompt_with_image",
    description: "A prompt holding an image (prompts-get-with-image)",
    get: () => [
      { role: "user", content: { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }),
];

const { values } = parseArgs({
  options: {
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: process.env.PORT ?? "0" },
  },
  strict: true,
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`conformance server: --port must be an integer 0..65535; got ${values.port}`);
  process.exit(2);
}

const server = createMcpServer({
  name: "conduit-mcp-conformance",
  tools,
  resources,
  resourceTemplates,
  prompts,
  // 2025-era sessions: resources/subscribe needs one (updates go to its GET stream).
  sessions: true,
});
const { url } = await server.listen({ host: values.host, port });
console.log(`conformance server listening on ${url}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void server.close().finally(() => process.exit(0));
  });
}
