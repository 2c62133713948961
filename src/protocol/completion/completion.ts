/**
 * `completion/complete` requests and results (MCP 2025-11-25 completion:
 * https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/completion): the
 * request is checked and bounded here before any completer runs; the values a completer returns
 * are cut to the 100 the spec allows, with `total` and `hasMore` telling the rest.
 */
import { isPlainObject } from "../wire/index.js";

/** What is being completed: a prompt's argument or a resource template's variable. */
export type CompletionRef =
  | { readonly type: "ref/prompt"; readonly name: string }
  | { readonly type: "ref/resource"; readonly uri: string };

/** A checked `completion/complete` request. */
export interface CompletionRequest {
  readonly ref: CompletionRef;
  readonly argument: { readonly name: string; readonly value: string };
  /** `context.arguments`: the other arguments already chosen (empty when absent). */
  readonly context: Readonly<Record<string, string>>;
}

/** At most this many values per answer (the spec's maximum). */
export const MAX_COMPLETION_VALUES = 100;
/** Longest name, value, reference or context entry accepted. */
const MAX_TEXT = 2_048;
/** Most `context.arguments` entries accepted. */
const MAX_CONTEXT_ARGUMENTS = 64;

/**
 * Parses the params of `completion/complete`; a string says what is wrong (sent as -32602,
 * naming fields only, never echoing the client's values).
 */
export function parseCompletionRequest(params: unknown): CompletionRequest | string {
  if (!isPlainObject(params)) return "params must be an object";
  const { ref, argument, context } = params;
  if (!isPlainObject(ref)) return "ref must be an object";
  let parsedRef: CompletionRef;
  if (ref.type === "ref/prompt" && isText(ref.name)) {
    parsedRef = { type: "ref/prompt", name: ref.name };
  } else if (ref.type === "ref/resource" && isText(ref.uri)) {
    parsedRef = { type: "ref/resource", uri: ref.uri };
  } else {
    return 'ref must be { type: "ref/prompt", name } or { type: "ref/resource", uri }';
  }
  if (!isPlainObject(argument) || !isText(argument.name) || !isText(argument.value, true)) {
    return "argument must be { name: string, value: string }";
  }
  const values: Record<string, string> = Object.create(null);
  if (context !== undefined) {
    if (!isPlainObject(context)) return "context must be an object";
    const args = context.arguments;
    if (args !== undefined) {
      if (!isPlainObject(args)) return "context.arguments must be an object of strings";
      const entries = Object.entries(args);
      if (entries.length > MAX_CONTEXT_ARGUMENTS) {
        return `context.arguments may hold at most ${MAX_CONTEXT_ARGUMENTS} entries`;
      }
      for (const [name, value] of entries) {
        if (!isText(name) || !isText(value, true)) {
          return "context.arguments must be an object of strings";
        }
        values[name] = value;
      }
    }
  }
  return {
    ref: parsedRef,
    argument: { name: argument.name, value: argument.value },
    context: Object.freeze(values),
  };
}

/**
 * The `CompleteResult` for a completer's values: strings only, at most 100, with the total.
 * Anything else a completer returns is a bug in it (null: answered -32603).
 */
export function completionResult(values: unknown): Record<string, unknown> | null {
  if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) return null;
  return {
    completion: {
      values: values.slice(0, MAX_COMPLETION_VALUES),
      total: values.length,
      hasMore: values.length > MAX_COMPLETION_VALUES,
    },
  };
}

/** The answer when the reference exists but has no completer for the argument. */
export const NO_COMPLETIONS: Readonly<Record<string, unknown>> = Object.freeze({
  completion: Object.freeze({ values: Object.freeze([]), total: 0, hasMore: false }),
});

function isText(value: unknown, allowEmpty = false): value is string {
  return typeof value === "string" && value.length <= MAX_TEXT && (allowEmpty || value.length > 0);
}
