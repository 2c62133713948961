/**
 * Step: the body, bounded in bytes and in time, parsed and classified as one JSON-RPC message.
 */
import { ErrorCode } from "../../../errors.js";
import { ACQUIRED } from "../../../protocol/asking/index.js";
import {
  type ClassifiedMessage,
  classifyMessage,
  errorResponseJson,
} from "../../../protocol/index.js";
import { BODY_TIMEOUT, BODY_TOO_LARGE } from "../../read-body.js";
import type { BodyOutcome } from "../../transport.js";
import {
  BODY_TIMED_OUT,
  INVALID_REQUEST,
  PARSE_ERROR,
  refuseBodyBytes,
  reply,
  TOO_LARGE,
} from "../context/answers.js";
import { type RequestContext, single } from "../context/request-context.js";

/** Returned by a step that answered (refused) the request itself. */
export const ANSWERED: unique symbol = Symbol("conduit-mcp.answered");
export type Answered = typeof ANSWERED;

/** A message the core goes on with: a request, a notification or a client's answer. */
export type Classified = Exclude<ClassifiedMessage, { kind: "invalid" }>;

/**
 * The body's message, classified; or 413 / 408 / 400 answered, or nothing if the client left
 * ({@link ANSWERED} either way). A body that has all arrived is taken at once (no promise);
 * otherwise it is waited for.
 *
 * @example
 * ```ts
 * const read = readMessage(ctx);
 * const classified = read instanceof Promise ? await read : read;
 * ```
 */
export function readMessage(
  ctx: RequestContext,
): Classified | Answered | Promise<Classified | Answered> {
  const { maxBodyBytes, bodyTimeoutMs } = ctx.core.config;
  const declaredLength = single(ctx.headers["content-length"]);
  const body = ctx.input.body.readNow?.(maxBodyBytes, declaredLength);
  if (body !== undefined) return parseMessage(ctx, body);
  // A body to wait for is held while it arrives: it counts against its scope's budget first
  // (body-budget.ts), at its declared length (negotiate refused one over maxBodyBytes).
  const declared = Number(declaredLength);
  const bytes = Number.isInteger(declared) && declared >= 0 ? declared : maxBodyBytes;
  const budget = ctx.core.bodyBudget;
  const outcome = budget.tryReserve(ctx.origin, bytes, ctx.target);
  if (outcome !== ACQUIRED) {
    refuseBodyBytes(ctx, outcome);
    return ANSWERED;
  }
  return ctx.input.body.read(maxBodyBytes, bodyTimeoutMs).then(
    (read) => {
      budget.release(ctx.origin, ctx.target);
      return parseMessage(ctx, read);
    },
    () => {
      budget.release(ctx.origin, ctx.target);
      return ANSWERED; // the client went away mid-body (or was closed to make room): nobody to answer
    },
  );
}

/** The body's message, classified; or 413 / 408 / 400. */
function parseMessage(ctx: RequestContext, body: BodyOutcome): Classified | Answered {
  if (body === BODY_TOO_LARGE || body === BODY_TIMEOUT) {
    // The rest of the body is never read: the connection closes after the answer.
    ctx.target.closeAfterAnswer();
    if (body === BODY_TOO_LARGE) reply(ctx, 413, TOO_LARGE);
    else reply(ctx, 408, BODY_TIMED_OUT);
    return ANSWERED;
  }
  let parsed: unknown;
  if (!Buffer.isBuffer(body)) {
    parsed = body.parsed; // parsed by the host framework already
  } else {
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      reply(ctx, 400, PARSE_ERROR);
      return ANSWERED;
    }
  }
  const classified = classifyMessage(parsed);
  if (classified.kind === "invalid") {
    const json = errorResponseJson(classified.id, ErrorCode.InvalidRequest, INVALID_REQUEST);
    reply(ctx, 400, json);
    return ANSWERED;
  }
  return classified;
}
