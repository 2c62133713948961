/**
 * The demo prompt served by `conduit-mcp serve`
 * (https://modelcontextprotocol.io/specification/2025-11-25/server/prompts): `review {code,
 * language}` asks a model to review a piece of code; its `language` argument completes
 * (`completion/complete`) from a fixed list of languages.
 */
import { z } from "zod";
import type { Prompt } from "../protocol/calls/index.js";
import { definePrompt } from "../protocol/prompts/index.js";

/** Languages `review`'s `language` argument completes from, in alphabetical order. */
export const REVIEW_LANGUAGES: readonly string[] = Object.freeze([
  "c",
  "c++",
  "elixir",
  "go",
  "java",
  "javascript",
  "kotlin",
  "python",
  "ruby",
  "rust",
  "swift",
  "typescript",
]);

/** Longest code `review` accepts (the request body limit would refuse far larger anyway). */
export const MAX_REVIEW_CODE_CHARS = 100_000;

/**
 * `review {code, language?}`: one user message asking for a review of `code`.
 *
 * @example
 * ```ts
 * // prompts/get {"name":"review","arguments":{"code":"x = 1","language":"python"}}
 * // completion/complete {"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"py"}}
 * //   → { completion: { values: ["python"], total: 1, hasMore: false } }
 * ```
 */
export const reviewPrompt: Prompt = definePrompt({
  name: "review",
  title: "Code review",
  description: "Asks for a review of a piece of code: bugs first, then clarity.",
  arguments: z.object({
    code: z.string().min(1).max(MAX_REVIEW_CODE_CHARS).describe("The code to review"),
    language: z.string().max(40).optional().describe("Its programming language"),
  }),
  complete: {
    language: (typed) => {
      const prefix = typed.toLowerCase();
      return REVIEW_LANGUAGES.filter((language) => language.startsWith(prefix));
    },
  },
  get: ({ code, language }) => {
    const what = language === undefined ? "this code" : `this ${language} code`;
    return [
      {
        role: "user",
        content: {
          type: "text",
          text: `Please review ${what}. List bugs first, then anything that hurts clarity.\n\n${code}`,
        },
      },
    ];
  },
});

/** The demo's prompts. */
export const demoPrompts: readonly Prompt[] = Object.freeze([reviewPrompt]);
