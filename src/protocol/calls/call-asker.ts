/**
 * How a call will ask its client, decided as it starts, in the way each era asks:
 * - 2025-11-25: server requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) on
 *   the call's own stream, through an asker made on the first ask
 *   (https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation);
 * - 2026-07-28: an input-required round, its questions and answers carried in a sealed
 *   `requestState` bound to the call (https://modelcontextprotocol.io/specification/2026-07-28);
 * - a task's run asks through its task (it parks the task until the client answers).
 */
import {
  ASKING_METHODS,
  CallBinding,
  type ClientAsker,
  carriesAnswers,
  FirstRound,
  type InputRequiredSettings,
  openInputRound,
} from "../asking/index.js";
import type { HandlerInvocation } from "./handler-call/handler-call.js";
import type { DetachedRun, MethodRequest } from "./method-table.js";

/** What a starting call asks through (see {@link callAsking}). */
export interface CallAsking {
  /** The asker the call starts with: a task's, or a 2026-07-28 round; null otherwise. */
  readonly asker: ClientAsker | null;
  /**
   * What the asker made on the first ask is made from: for 2025-11-25 calls of an asking method,
   * the client's declared capabilities (null when it declared none); for a 2026-07-28 call that
   * carries no `requestState` or `inputResponses`, its {@link FirstRound}; undefined otherwise.
   */
  readonly serverAsks: Readonly<Record<string, unknown>> | FirstRound | null | undefined;
}

const NO_ASKING: CallAsking = { asker: null, serverAsks: undefined };

/**
 * Decides how a call asks its client; a string is why its 2026-07-28 `requestState` or answers
 * were refused (the call is answered -32602 with it).
 *
 * @example
 * ```ts
 * const asking = callAsking({ request, invocation, settings });
 * if (typeof asking === "string") return host.answerError(request, ErrorCode.InvalidParams, asking);
 * ```
 */
export function callAsking(options: {
  readonly request: MethodRequest;
  readonly invocation: HandlerInvocation;
  readonly settings: InputRequiredSettings;
  readonly detached?: DetachedRun | undefined;
}): CallAsking | string {
  const { request, invocation, detached } = options;
  // A task's answer goes to the store; its asks park the task (task-asker.ts, task-outbox.ts).
  if (detached !== undefined) return { asker: detached.asker, serverAsks: undefined };
  if (!ASKING_METHODS.has(invocation.method)) return NO_ASKING;
  const { meta } = request;
  if (request.modern === null) {
    return { asker: null, serverAsks: meta.clientCapabilities ?? null };
  }
  const capabilities = request.modern.clientCapabilities;
  const args = request.params?.arguments;
  // Nothing to check: the round is made on the first ask (most calls never ask), bound then to
  // the call's method, name and scope.
  if (!carriesAnswers(request.params)) {
    return { asker: null, serverAsks: new FirstRound(options.settings, capabilities, args) };
  }
  // The arguments' digest is a SHA-256 over their canonical JSON: computed only when a
  // requestState is opened or sealed, never for a call that does not ask.
  const binding = new CallBinding(invocation.method, invocation.name, meta.scope, args);
  const opened = openInputRound(request.params, options.settings, binding, capabilities);
  return typeof opened === "string" ? opened : { asker: opened, serverAsks: undefined };
}
