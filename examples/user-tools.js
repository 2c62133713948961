/**
 * A module for `conduit-mcp serve`: its named exports made by `defineTool` are served, over HTTP
 * or stdio, with the CLI's flags.
 *
 *   npx conduit-mcp serve ./examples/user-tools.js --port 3000
 *   npx conduit-mcp serve ./examples/user-tools.js --stdio
 *
 * Plain JavaScript, importing the package by name as an application would (in this repository,
 * that needs `npm run build` first; `test/package/installed.test.ts` runs it against the packed
 * package).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { defineTool } from "conduit-mcp";
import { z } from "zod";

/** A quick tool: counts the words of a text. */
export const wordCount = defineTool({
  name: "word_count",
  description: "Counts the words of a text",
  input: z.object({ text: z.string().max(100_000) }),
  handler: ({ text }) => String(text.split(/\s+/).filter(Boolean).length),
});

/** A long tool: one progress notification per second, stopped at once by a cancellation. */
export const countdown = defineTool({
  name: "countdown",
  description: "Counts down from `from` seconds, reporting each one",
  input: z.object({ from: z.number().int().min(1).max(3_600) }),
  handler: async ({ from }, ctx) => {
    for (let left = from; left > 0; left--) {
      await ctx.progress(from - left, from, `${left} s left`);
      await sleep(1_000, undefined, { signal: ctx.signal });
    }
    return "lift-off";
  },
});
