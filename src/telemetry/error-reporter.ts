/**
 * Errors the operator can see (docs/errors.md, "Errors the operator can see"): every handler — tool,
 * resource read, template read, prompt get, completer — that throws or returns a value that
 * cannot be sent is reported once, to the `onError` option (default: one line on stderr) and on
 * the `conduit-mcp:tool:error` diagnostics channel. The client still gets only -32603 (or the
 * tool's `isError` result): no message and no stack ever goes on the wire.
 *
 * What is not an error here: a cancelled handler (its AbortError is the cancellation, already
 * on `conduit-mcp:request:cancelled`; the call's state tells, so the rejection is never seen as
 * a failure), a killed one (`conduit-mcp:tool:killed`), a tool's own `isError: true` result (the
 * tool reported it to the model on purpose), a refusal meant for the client (an
 * `InvalidParamsError`, a client that cannot be asked: the client gets the message), and a full
 * worker pool ("Server busy" is a refusal under load, not a fault: reporting it would flood the
 * log exactly when the server is busiest).
 */
import { channels, type HandlerErrorContext, type ToolErrorMessage } from "../diagnostics.js";
import {
  CannotAskClientError,
  InvalidParamsError,
  MissingClientCapabilityError,
  WorkerPoolFullError,
} from "../errors.js";
import type {
  DispatchObserver,
  HandlerEnd,
  HandlerInfo,
  HandlerOutcome,
} from "../protocol/index.js";
import { reflectText } from "../reflect.js";

/** What `onError` learns about the failed handler: the channel's message, less `error`. */
export type { HandlerErrorContext };

/**
 * The `onError` option: called once per failed handler, synchronously, before the client's
 * -32603 is written (keep it quick; what it throws is ignored).
 */
export type HandlerErrorHook = (error: unknown, context: HandlerErrorContext) => void;

/**
 * Reports failed handlers; a {@link DispatchObserver}, so it sees exactly what the dispatcher's
 * `handlerEnded` sees, once per invocation.
 *
 * @example
 * ```ts
 * const reporter = new ErrorReporter(logHandlerError);
 * new Dispatcher({ ...options, observer: reporter });
 * ```
 */
export class ErrorReporter implements DispatchObserver {
  constructor(private readonly onError: HandlerErrorHook | null) {}

  /** Only failures are reported. */
  wantsEnd(outcome: HandlerOutcome): boolean {
    return outcome === "error";
  }

  handlerEnded(info: HandlerInfo, end: HandlerEnd): void {
    if (end.outcome !== "error" || end.error === undefined) return;
    const { error } = end;
    if (error instanceof WorkerPoolFullError || answeredInFull(error, info)) return;
    const publish = channels.toolError.hasSubscribers;
    if (!publish && this.onError === null) return;
    const context = contextOf(info);
    if (publish) {
      const message: ToolErrorMessage = { error, ...context };
      channels.toolError.publish(message);
    }
    if (this.onError === null) return;
    try {
      this.onError(error, context);
    } catch {
      // The operator's hook failing must not change what the client gets.
    }
  }
}

/**
 * A refusal the handler meant for the client, which gets its message: an `InvalidParamsError`
 * (-32602, or a tool's `isError` result), a `MissingClientCapabilityError` (-32021), a
 * `CannotAskClientError` out of a tool (an `isError` result). Not the operator's to fix.
 */
function answeredInFull(error: unknown, info: HandlerInfo): boolean {
  if (error instanceof InvalidParamsError) return true;
  if (!(error instanceof CannotAskClientError)) return false;
  return info.kind === "tool" || error instanceof MissingClientCapabilityError;
}

function contextOf(info: HandlerInfo): HandlerErrorContext {
  const colon = info.scope.indexOf(":");
  return {
    kind: info.kind,
    method: info.method,
    name: info.name,
    requestId: info.requestId,
    scope: info.scope,
    scopeKind: colon === -1 ? info.scope : info.scope.slice(0, colon),
    protocolEra: info.protocolEra,
    principalId: info.principalId,
    sessionId: info.sessionId,
  };
}

/**
 * The default `onError`: one line on stderr, e.g.
 * `conduit-mcp: tool "search" failed: TypeError: x is undefined (request 7, scope principal:alice, 2025-11-25)`.
 * Every part that comes from a client or a handler goes through {@link reflectText}, so a line
 * stays one line (no forged log entries); no stack (one line; subscribe to the channel or pass
 * `onError` for the error object). A session scope shows only the session id's first 8
 * characters: logs travel further than the server, and a session id lets its holder act in the
 * session.
 *
 * @example
 * ```ts
 * createMcpServer({ tools, onError: (error, ctx) => { logHandlerError(error, ctx); sentry.capture(error); } });
 * ```
 */
export function logHandlerError(error: unknown, context: HandlerErrorContext): void {
  process.stderr.write(`${formatHandlerError(error, context)}\n`);
}

/** The text of {@link logHandlerError}'s line, without the newline. */
export function formatHandlerError(error: unknown, context: HandlerErrorContext): string {
  const id = context.requestId === null ? "none" : reflectText(context.requestId, 64);
  const principal =
    context.principalId === null ? "" : `, principal ${reflectText(context.principalId, 64)}`;
  return (
    `conduit-mcp: ${context.kind} ${JSON.stringify(reflectText(context.name, 120))} failed: ` +
    `${describeError(error)} (request ${id}, scope ${scopeForLog(context.scope)}${principal}, ` +
    `${context.protocolEra})`
  );
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return reflectText(error, 300);
  try {
    return reflectText(`${reflectText(error.name, 60)}: ${reflectText(error.message, 300)}`, 400);
  } catch {
    return "Error: <unreadable>"; // its name or message getter threw
  }
}

function scopeForLog(scope: string): string {
  if (!scope.startsWith("session:")) return reflectText(scope, 120);
  return `session:${reflectText(scope.slice(8, 16), 8)}…`;
}
