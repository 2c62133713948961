/**
 * Tools and prompts defined with zod 3, zod 4, Valibot and ArkType (test/schemas/library-fixtures.ts),
 * served by one listening server and used by both official clients: `@modelcontextprotocol/sdk`
 * 1.x (2025-11-25) and `@modelcontextprotocol/client` 2.x pinned to 2026-07-28. Each tool
 * publishes its library's own JSON Schema as `inputSchema` / `outputSchema`, validates good and
 * bad arguments through the library (a bad one is a tool execution error naming the field, MCP
 * 2025-11-25 server/tools "Error Handling"), and checks its structured output; each prompt
 * publishes its arguments and refuses bad ones with -32602.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { createMcpServer, type McpServer } from "../../src/index.js";
import {
  EXPECTED_INPUT_SCHEMA,
  EXPECTED_OUTPUT_SCHEMA,
  LIBRARIES,
  libraryPrompts,
  libraryTools,
} from "./library-fixtures.js";

/** What both clients offer these tests: the same calls, each in its own era. */
interface EraClient {
  listTools(): Promise<{ tools: { name: string; inputSchema: unknown; outputSchema?: unknown }[] }>;
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  listPrompts(): Promise<{ prompts: { name: string; arguments?: unknown[] }[] }>;
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<unknown>;
  close(): Promise<void>;
}

type CallResult = {
  content: { type: string; text: string }[];
  structuredContent?: unknown;
  isError?: boolean;
};

const ERAS = {
  "2025-11-25 (sdk 1.x)": async (url: URL): Promise<EraClient> => {
    const client = new LegacyClient({ name: "schemas-legacy", version: "1.0.0" });
    await client.connect(new LegacyTransport(url));
    return client as unknown as EraClient;
  },
  "2026-07-28 (client 2.x)": async (url: URL): Promise<EraClient> => {
    const client = new ModernClient(
      { name: "schemas-modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(url));
    return client as unknown as EraClient;
  },
} as const;

describe("any Standard Schema library, over HTTP with both official clients", () => {
  let server: McpServer;
  let url: URL;
  const errors: unknown[] = [];

  before(async () => {
    server = createMcpServer({
      tools: Object.values(libraryTools),
      prompts: Object.values(libraryPrompts),
      onError: (error) => {
        errors.push(error);
      },
    });
    url = new URL((await server.listen({ host: "127.0.0.1", port: 0 })).url);
  });
  after(() => server.close());

  for (const [era, connect] of Object.entries(ERAS)) {
    describe(era, () => {
      let client: EraClient;
      before(async () => {
        client = await connect(url);
      });
      after(() => client.close());

      test("tools/list publishes each library's own JSON Schema, input and output", async () => {
        const { tools } = await client.listTools();
        for (const library of LIBRARIES) {
          const tool = tools.find((t) => t.name === `forecast_${library}`);
          assert.ok(tool, `forecast_${library} listed`);
          assert.deepEqual(tool.inputSchema, EXPECTED_INPUT_SCHEMA[library], library);
          assert.deepEqual(tool.outputSchema, EXPECTED_OUTPUT_SCHEMA[library], library);
          // Whatever the library, the same shape: an object, `city` a required string.
          const input = tool.inputSchema as {
            type: string;
            properties: Record<string, { type: string }>;
            required: string[];
          };
          assert.equal(input.type, "object");
          assert.equal(input.properties.city?.type, "string");
          assert.equal(input.properties.days?.type, "integer");
          assert.deepEqual(input.required, ["city"], `${library}: days is optional`);
        }
      });

      test("good arguments reach the handler as the library's output, with structured content", async () => {
        for (const library of LIBRARIES) {
          const result = (await client.callTool({
            name: `forecast_${library}`,
            arguments: { city: "Lyon", days: 3 },
          })) as CallResult;
          assert.equal(result.isError, undefined, library);
          assert.deepEqual(result.structuredContent, { forecast: "Lyon: sunny for 3 day(s)" });
          assert.deepEqual(JSON.parse(result.content[0]?.text ?? ""), {
            forecast: "Lyon: sunny for 3 day(s)",
          });
        }
      });

      test("bad arguments are a tool execution error naming the field, nothing internal", async () => {
        for (const library of LIBRARIES) {
          for (const args of [
            { city: 7 },
            { city: "L" },
            { days: 2 },
            { city: "Lyon", days: 1.5 },
          ]) {
            const result = (await client.callTool({
              name: `forecast_${library}`,
              arguments: args,
            })) as CallResult;
            assert.equal(result.isError, true, `${library} ${JSON.stringify(args)}`);
            const text = result.content[0]?.text ?? "";
            assert.match(text, /^Invalid arguments: /, library);
            assert.match(text, args.days === 1.5 ? /days/ : /city/, `${library}: ${text}`);
            assert.doesNotMatch(
              text,
              /\bat .*\.(ts|js):\d+|node_modules|\/work\//,
              "no stack, no path",
            );
          }
        }
      });

      test("a result that does not match the output schema is never sent as is", async () => {
        for (const library of LIBRARIES) {
          const result = (await client.callTool({
            name: `forecast_${library}`,
            arguments: { city: "Nowhere" },
          })) as CallResult;
          assert.equal(result.isError, true, library);
          assert.equal(result.structuredContent, undefined);
          assert.doesNotMatch(
            JSON.stringify(result),
            /42/,
            `${library}: the invalid value stays on the server`,
          );
        }
      });

      test("prompts/list publishes string arguments with descriptions and required flags", async () => {
        const { prompts } = await client.listPrompts();
        for (const library of LIBRARIES) {
          const prompt = prompts.find((p) => p.name === `review_${library}`);
          assert.ok(prompt, library);
          assert.deepEqual(
            prompt.arguments,
            [
              { name: "code", description: "The code", required: true },
              { name: "language", required: false },
            ],
            library,
          );
        }
      });

      test("prompts/get validates through the library: good arguments run, bad ones are -32602", async () => {
        for (const library of LIBRARIES) {
          const result = (await client.getPrompt({
            name: `review_${library}`,
            arguments: { code: "f()", language: "go" },
          })) as { messages: { content: { text: string } }[] };
          assert.equal(result.messages[0]?.content.text, "Review this go: f()", library);
          await assert.rejects(
            client.getPrompt({ name: `review_${library}`, arguments: { language: "go" } }),
            (error: unknown) => {
              const { code, message } = error as { code?: number; message: string };
              assert.equal(code, -32602, `${library}: ${message}`);
              assert.match(message, /Invalid prompt arguments/);
              return true;
            },
          );
        }
      });
    });
  }

  test("no handler error was reported: every refusal above was the client's", () => {
    // The output-schema refusals are reported (the tool's bug), one per library and era.
    const unexpected = errors.filter(
      (error) => !(error instanceof TypeError && /output schema/.test(error.message)),
    );
    assert.deepEqual(unexpected, []);
    assert.equal(errors.length, LIBRARIES.length * 2);
  });
});
