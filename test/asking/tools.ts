/**
 * Test tools that ask the client (2025-11-25 server requests): `confirm {action}` elicits a
 * yes/no, `ask-model {question}` samples, `list-roots` lists the client's roots (or says it
 * cannot ask).
 */
import { z } from "zod";

import { CannotAskClientError } from "../../src/errors.js";
import { defineTool } from "../../src/server/index.js";

export const askTools = [
  defineTool({
    name: "confirm",
    input: z.object({ action: z.string() }),
    handler: async ({ action }, ctx) => {
      const answer = await ctx.elicit(`Really ${action}?`, {
        type: "object",
        properties: { ok: { type: "boolean" } },
        required: ["ok"],
      });
      return answer.action === "accept" && answer.content.ok === true
        ? `did ${action}`
        : "declined";
    },
  }),
  defineTool({
    name: "ask-model",
    input: z.object({ question: z.string() }),
    handler: async ({ question }, ctx) => {
      const answer = await ctx.sample({
        messages: [{ role: "user", content: { type: "text", text: question } }],
        maxTokens: 50,
      });
      const content = Array.isArray(answer.content) ? answer.content[0] : answer.content;
      return `${answer.model}: ${String((content as { text?: unknown }).text)}`;
    },
  }),
  defineTool({
    name: "list-roots",
    input: z.object({}),
    handler: async (_args, ctx) => {
      try {
        const { roots } = await ctx.roots();
        return roots.map((root) => root.uri).join(",");
      } catch (error) {
        if (error instanceof CannotAskClientError) return `cannot ask: ${error.name}`;
        throw error;
      }
    },
  }),
];
