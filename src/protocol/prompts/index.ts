/**
 * Prompts: `definePrompt` and its messages.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type {
  PromptArgs,
  PromptCompleter,
  PromptContent,
  PromptDefinition,
  PromptMessage,
  PromptResult,
  PromptReturn,
} from "./define-prompt.js";
export { definePrompt } from "./define-prompt.js";
export type { PromptFeatureOptions } from "./prompt-methods.js";
export { PromptFeature } from "./prompt-methods.js";
