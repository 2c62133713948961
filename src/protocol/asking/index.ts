/**
 * Asking the client (elicitation, sampling, roots): the vocabulary every asker speaks
 * ({@link ClientAsker}), 2025-11-25 server requests on the call's stream with their pending table,
 * 2026-07-28 input-required rounds with their sealed request state, and the per-scope counters that
 * bound them.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type {
  AskOptions,
  ClientAsker,
  ElicitResult,
  ElicitSchema,
  ElicitValue,
  InputRequest,
  PreparedAsk,
  Root,
  RootsResult,
  SampleRequest,
  SampleResult,
  SamplingContent,
  SamplingMessage,
} from "./client-asker.js";
export { COMPLETE_VERDICT } from "./client-asker.js";
export { ClientAskerBase } from "./client-asker-base.js";
export type { InputRequiredOptions, InputRequiredSettings } from "./input-required.js";
export {
  ASKING_METHODS,
  cannotAsk,
  carriesAnswers,
  FirstRound,
  InputPending,
  inputRequiredSettings,
  openInputRound,
} from "./input-required.js";
export type {
  AskCharge,
  ClientReply,
  PendingServerRequestsOptions,
  ReplyWaiter,
  ServerReplyBus,
} from "./pending-server-requests.js";
export { PendingServerRequests, replyOf } from "./pending-server-requests.js";
export { checkAnswer } from "./prepared-ask.js";
export { CallBinding } from "./request-state.js";
export type { Evictable, LimitOutcome, ScopeLimiterOptions } from "./scope-limiter.js";
export { ACQUIRED, GLOBAL_LIMIT, SCOPE_LIMIT, ScopeLimiter } from "./scope-limiter.js";
export type {
  AskerScope,
  ServerRequestOptions,
  ServerRequestSettings,
} from "./server-requests.js";
export {
  askableCapabilities,
  capabilitiesOf,
  ServerRequestAsker,
  serverRequestSettings,
} from "./server-requests.js";
