/**
 * Completion (`completion/complete`): argument completers of prompts and resource templates.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type { CompletionRef, CompletionRequest } from "./completion.js";
export {
  completionResult,
  MAX_COMPLETION_VALUES,
  NO_COMPLETIONS,
  parseCompletionRequest,
} from "./completion.js";
export type { CompletionFeatureOptions } from "./completion-methods.js";
export { CompletionFeature } from "./completion-methods.js";
