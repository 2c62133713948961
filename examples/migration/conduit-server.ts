/**
 * AFTER: examples/migration/sdk1-server.ts and sdk2-server.ts ported to conduit-mcp. Stateless,
 * both protocol eras (2025-11-25 and 2026-07-28), and a cancel or a hang-up aborts `ctx.signal`
 * on whichever node holds the call. test/migration/servers.test.ts runs the same client tour against
 * all three servers; docs/migrating.md walks through the differences.
 *
 *   PORT=3000 node --import tsx examples/migration/conduit-server.ts
 */
import { setTimeout as sleep } from "node:timers/promises";

import { createMcpServer, definePrompt, defineResource, defineTool } from "conduit-mcp";
import { z } from "zod";

const wordCount = defineTool({
  name: "word_count",
  description: "Counts the words of a text",
  input: z.object({ text: z.string().max(100_000) }),
  handler: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

const countdown = defineTool({
  name: "countdown",
  description: "Counts down, one progress a second",
  input: z.object({ from: z.number().int().min(1).max(60) }),
  handler: async ({ from }, ctx) => {
    for (let left = from; left > 0; left--) {
      await ctx.progress(from - left, from, `${left} s left`);
      await sleep(1_000, undefined, { signal: ctx.signal });
    }
    return "lift-off";
  },
});

const readme = defineResource({
  uri: "notes://readme",
  name: "readme",
  mimeType: "text/markdown",
  read: () => "# Notes",
});

const summarise = definePrompt({
  name: "summarise",
  description: "Asks for a summary",
  arguments: z.object({ topic: z.string() }),
  get: ({ topic }) => `Summarise what we know about ${topic}.`,
});

const server = createMcpServer({
  name: "notes",
  tools: [wordCount, countdown],
  resources: [readme],
  prompts: [summarise],
});
const { url } = await server.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) });
console.log(`listening on ${url}`);
process.on("SIGTERM", () => void server.close());
