/**
 * `ctx.elicit` with a Valibot form (through `toStandardJsonSchema`), over a listening server with
 * both official clients: `@modelcontextprotocol/sdk` 1.x (2025-11-25: an `elicitation/create`
 * request on the call's stream) and `@modelcontextprotocol/client` 2.x (2026-07-28: an
 * `input_required` result the client fulfils and retries). The client sees the library's JSON
 * Schema cut to the spec's form (`type`, `properties`, `required`: 2026-07-28 client/elicitation,
 * "Requested Schema"); an accepted answer reaches the handler as the library's output (its
 * default filled in); an answer the library refuses (9 seats of at most 8: the clients send it as
 * they are told, the server's check is what refuses it) never does; a schema outside the spec's
 * flat primitive subset is refused before anything is asked.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";

import {
  ClientRequestFailedError,
  createMcpServer,
  defineTool,
  type McpServer,
} from "../../src/index.js";

const Booking = toStandardJsonSchema(
  v.object({
    seats: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(8, "at most 8 seats")),
    window: v.optional(v.boolean(), false),
    when: v.pipe(v.string(), v.isoDate()),
  }),
);

const Nested = toStandardJsonSchema(v.object({ party: v.object({ size: v.number() }) }));

const book = defineTool({
  name: "book",
  handler: async (_args, ctx) => {
    try {
      const answer = await ctx.elicit("How many seats?", Booking);
      if (answer.action !== "accept") return `not booked (${answer.action})`;
      const { seats, window, when } = answer.content; // typed: number, boolean, string
      return `booked ${seats} seats on ${when}, window ${window}`;
    } catch (error) {
      if (error instanceof ClientRequestFailedError) return `refused: ${error.reason}`;
      throw error;
    }
  },
});

const nested = defineTool({
  name: "nested",
  handler: async (_args, ctx) => {
    await ctx.elicit("Who comes?", Nested);
    return "asked";
  },
});

const EXPECTED_FORM = {
  type: "object",
  properties: {
    seats: { type: "integer", minimum: 1, maximum: 8 },
    window: { type: "boolean", default: false },
    when: { type: "string", format: "date" },
  },
  required: ["seats", "when"],
};

type Answer = { action: string; content?: Record<string, unknown> };

function textOf(result: unknown): string {
  return (result as { content: { text: string }[] }).content.map((block) => block.text).join("");
}

describe("ctx.elicit with a Valibot form, both official clients", () => {
  let server: McpServer;
  let url: URL;
  const errors: unknown[] = [];

  before(async () => {
    server = createMcpServer({
      tools: [book, nested],
      sessions: true,
      onError: (error) => {
        errors.push(error);
      },
    });
    url = new URL((await server.listen({ host: "127.0.0.1", port: 0 })).url);
  });
  after(() => server.close());

  async function legacy(answer: Answer, asked: unknown[]): Promise<LegacyClient> {
    const client = new LegacyClient(
      { name: "forms-legacy", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer as never;
    });
    await client.connect(new LegacyTransport(url));
    return client;
  }

  async function modern(answer: Answer, asked: unknown[]): Promise<ModernClient> {
    const client = new ModernClient(
      { name: "forms-modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: {} } },
    );
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params);
      return answer as never;
    });
    await client.connect(new ModernTransport(url));
    return client;
  }

  const good: Answer = { action: "accept", content: { seats: 2, when: "2026-12-24" } };
  const odd: Answer = { action: "accept", content: { seats: 9, when: "2026-12-24" } };

  test("2025-11-25: the form as the spec allows it; the library's output reaches the handler", async () => {
    const asked: unknown[] = [];
    const client = await legacy(good, asked);
    try {
      const result = await client.callTool({ name: "book", arguments: {} });
      assert.equal(textOf(result), "booked 2 seats on 2026-12-24, window false", "default applied");
      assert.equal(asked.length, 1);
      const params = asked[0] as { mode?: string; message: string; requestedSchema: unknown };
      assert.equal(params.message, "How many seats?");
      assert.deepEqual(params.requestedSchema, EXPECTED_FORM);
    } finally {
      await client.close();
    }
  });

  test("2025-11-25: an answer the library refuses is an invalid response, never the handler's value", async () => {
    const client = await legacy(odd, []);
    try {
      const result = await client.callTool({ name: "book", arguments: {} });
      assert.equal(textOf(result), "refused: invalid-response");
    } finally {
      await client.close();
    }
  });

  test("2026-07-28: input_required, the client answers, the retry books", async () => {
    const asked: unknown[] = [];
    const client = await modern(good, asked);
    try {
      const result = await client.callTool({ name: "book", arguments: {} });
      assert.equal(textOf(result), "booked 2 seats on 2026-12-24, window false");
      assert.equal(asked.length, 1);
      assert.deepEqual((asked[0] as { requestedSchema: unknown }).requestedSchema, EXPECTED_FORM);
    } finally {
      await client.close();
    }
  });

  test("2026-07-28: an answer the library refuses is -32602 naming the entry and the rule", async () => {
    const client = await modern(odd, []);
    try {
      await assert.rejects(client.callTool({ name: "book", arguments: {} }), (error: unknown) => {
        const { code, message } = error as { code?: number; message: string };
        assert.equal(code, -32602, message);
        assert.match(message, /elicit-1/);
        assert.match(message, /at most 8 seats/);
        return true;
      });
    } finally {
      await client.close();
    }
  });

  test("a nested form is refused before anything is asked: -32603, the operator told which property", async () => {
    for (const connect of [legacy, modern]) {
      const asked: unknown[] = [];
      const client = await connect(good, asked);
      errors.length = 0;
      try {
        await assert.rejects(
          client.callTool({ name: "nested", arguments: {} }),
          (error: unknown) => {
            const { code, message } = error as { code?: number; message: string };
            assert.equal(code, -32603, message);
            assert.doesNotMatch(message, /party/, "the reason stays on the server");
            return true;
          },
        );
        assert.equal(asked.length, 0, "the client was never asked");
        assert.ok(
          errors.some((e) => e instanceof TypeError && /property "party"/.test(e.message)),
          String(errors),
        );
      } finally {
        await client.close();
      }
    }
  });
});
