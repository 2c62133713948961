/**
 * The one way options are checked: every option kind is a zod schema with the phrase that says
 * what it expects, and {@link readOption} turns a refused value into an {@link InvalidOptionError}
 * at construction, so a misconfiguration fails at start-up and never mid-request.
 *
 * Timers: Node.js stores a delay in a signed 32-bit integer; a larger one is replaced by 1 ms with
 * a TimeoutOverflowWarning (https://nodejs.org/docs/latest-v20.x/api/timers.html#settimeoutcallback-delay-args).
 * A huge interval would then fire every millisecond, so every option that becomes a timer delay is
 * refused above {@link MAX_TIMER_MS}.
 */
import { z } from "zod";

import { InvalidOptionError } from "./errors.js";

/** The largest delay a Node.js timer honours: 2^31 − 1 ms (about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A schema and the phrase an error message uses for it ("option x must be <expected>"). */
export interface OptionKind<T> {
  readonly schema: z.ZodType<T>;
  readonly expected: string;
}

/**
 * An option kind from a schema and the phrase that describes it.
 *
 * @example
 * ```ts
 * const port = optionKind(z.number().int().min(0).max(65_535), "a port number");
 * ```
 */
export function optionKind<T>(schema: z.ZodType<T>, expected: string): OptionKind<T> {
  return { schema, expected };
}

const kind = optionKind;

const safeInteger = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const infinity = z.literal(Number.POSITIVE_INFINITY);

/** The option kinds used across the package. */
export const OPTION = Object.freeze({
  positiveInteger: kind(safeInteger.min(1), "a positive integer"),
  nonNegativeInteger: kind(safeInteger.min(0), "a non-negative integer"),
  /** A bound that `Infinity` switches off. */
  positiveLimit: kind(z.union([safeInteger.min(1), infinity]), "a positive integer or Infinity"),
  nonNegativeLimit: kind(
    z.union([safeInteger.min(0), infinity]),
    "a non-negative integer or Infinity",
  ),
  /** A timer delay that must be on. */
  timerMs: kind(safeInteger.min(1).max(MAX_TIMER_MS), `an integer from 1 to ${MAX_TIMER_MS} (ms)`),
  /** A timer delay where 0 switches the timer off. */
  timerOrZeroMs: kind(
    safeInteger.min(0).max(MAX_TIMER_MS),
    `an integer from 0 to ${MAX_TIMER_MS} (ms)`,
  ),
  /** A timer delay; fractions allowed, as setTimeout takes them. */
  intervalMs: kind(
    z.number().gt(0).max(MAX_TIMER_MS),
    `a positive number of milliseconds up to ${MAX_TIMER_MS}`,
  ),
  /** A duration compared with a clock, never handed to a timer (so no timer limit). */
  durationMs: kind(z.number().gt(0).finite(), "a positive finite number of milliseconds"),
  boolean: kind(z.boolean(), "a boolean"),
  /** Any string. */
  text: kind(z.string(), "a string"),
  /** A short display string such as `serverInfo.name`. */
  label: kind(z.string().min(1).max(200), "a string of 1-200 characters"),
  logger: kind(
    z.custom<(message: string) => void>((value) => typeof value === "function"),
    "a function",
  ),
  clock: kind(
    z.custom<() => number>((value) => typeof value === "function"),
    "a function returning milliseconds",
  ),
});

/**
 * Integers from `min` to `max`; give `max` = {@link MAX_TIMER_MS} for a timer delay.
 *
 * @example
 * ```ts
 * readOption(integerBetween(1, 1_024), "shards", options.shards, 1);
 * ```
 */
export function integerBetween(min: number, max = Number.MAX_SAFE_INTEGER): OptionKind<number> {
  const expected =
    max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
  return kind(safeInteger.min(min).max(max), expected);
}

/**
 * `value` checked against `option`'s kind, or `fallback` when it is `undefined`.
 *
 * @throws InvalidOptionError naming `name` when the value is refused.
 * @example
 * ```ts
 * readOption(OPTION.timerMs, "keepAliveTimeoutMs", options.keepAliveTimeoutMs, 65_000);
 * ```
 */
export function readOption<T, F = T>(
  option: OptionKind<T>,
  name: string,
  value: unknown,
  fallback: F,
): T | F {
  if (value === undefined) return fallback;
  const parsed = option.schema.safeParse(value);
  if (!parsed.success) throw new InvalidOptionError(name, option.expected, value);
  return parsed.data;
}

/**
 * What the declaration of one option says: how it is read and how the reference shows it. Held
 * in {@link OPTION_DOCS} beside the option's zod schema, so the schema, the check, the default and
 * the documentation are one declaration (`npm run docs:options` writes docs/reference/ from it).
 */
export interface OptionDoc {
  /** What the option does, for the reference: one or a few sentences. */
  readonly description: string;
  /** What it accepts ("a positive integer"), as an error message and the reference say it. */
  readonly accepts: string;
  /** The default as the reference shows it ("64", "none", "random per process"). */
  readonly default: string;
  /** Reads a given (or absent) value, naming `name` in an error. */
  readonly read: (value: unknown, name: string) => unknown;
  /** Set on a group: the value is an object of the options its schema declares. */
  readonly group?: true;
}

/** The declarations of every option, by schema (a zod registry). */
export const OPTION_DOCS = z.registry<OptionDoc>();

/** A declared option: its schema, registered in {@link OPTION_DOCS}. */
export type DeclaredOption<T> = z.ZodOptional<z.ZodType<T>>;

/**
 * Declares an option of a kind: its default (used when the value is absent) and its description.
 * `shown` replaces the default in the reference when it is computed or not a literal.
 *
 * @example
 * ```ts
 * const shape = {
 *   maxBodyBytes: option(OPTION.positiveInteger, { default: 1_048_576, description: "Largest body." }),
 * };
 * ```
 */
export function option<T>(
  kind: OptionKind<T>,
  doc: { readonly default: T | undefined; readonly description: string; readonly shown?: string },
): DeclaredOption<T> {
  const fallback = doc.default;
  return declare(kind.schema.optional() as DeclaredOption<T>, {
    description: doc.description,
    accepts: kind.expected,
    default: doc.shown ?? showDefault(fallback),
    read: (value, name) => readOption(kind, name, value, fallback),
  });
}

/**
 * Declares an option read by its own function (an object checked member by member, a hook, a
 * store): `read` returns the value to use, or throws {@link InvalidOptionError} naming the option.
 *
 * @example
 * ```ts
 * const registry = customOption<CancellationRegistry>({
 *   accepts: "a CancellationRegistry", default: "a new one", description: "The registry to share.",
 *   read: (value, name) => value as CancellationRegistry,
 * });
 * ```
 */
export function customOption<T>(doc: {
  readonly accepts: string;
  readonly default: string;
  readonly description: string;
  readonly read: (value: unknown, name: string) => unknown;
}): DeclaredOption<T> {
  return declare(z.custom<T>().optional() as DeclaredOption<T>, doc);
}

/**
 * Declares a group of options: an object whose members are declared options. Absent, every
 * member takes its default.
 *
 * @example
 * ```ts
 * const timeouts = optionGroup({ closeGraceMs: option(OPTION.timerOrZeroMs, { default: 5_000, description: "…" }) }, "Timeouts.");
 * ```
 */
export function optionGroup<S extends z.ZodRawShape>(
  shape: S,
  description: string,
): z.ZodOptional<z.ZodObject<S>> {
  const schema = z.object(shape);
  return declare(schema.optional(), {
    description,
    accepts: "an object",
    default: "every member's default",
    group: true,
    read: (value, name) => readOptions(schema, value, { prefix: `${name}.` }),
  });
}

function declare<S extends z.ZodType>(schema: S, doc: OptionDoc): S {
  OPTION_DOCS.add(schema, doc);
  return schema;
}

/** The declaration of an option's schema; a schema declared without one is a bug. */
export function optionDoc(schema: unknown): OptionDoc {
  const doc = OPTION_DOCS.get(schema as z.ZodType);
  if (doc === undefined) throw new Error("conduit-mcp: an option schema without a declaration");
  return doc;
}

/**
 * Reads an options object against its declared schema: every declared member checked (in
 * declaration order) and defaulted. Members the schema does not declare are ignored.
 * `names` gives the name an error uses for a member path (a deprecated spelling, say).
 *
 * @throws InvalidOptionError naming the first refused option.
 * @example
 * ```ts
 * const timeouts = readOptions(TIMEOUT_OPTIONS, input.timeouts, { prefix: "timeouts." });
 * ```
 */
export function readOptions(
  schema: z.ZodObject,
  value: unknown,
  how: { readonly prefix?: string; readonly names?: ReadonlyMap<string, string> | undefined } = {},
): Record<string, unknown> {
  const prefix = how.prefix ?? "";
  if (
    value !== undefined &&
    (typeof value !== "object" || value === null || Array.isArray(value))
  ) {
    throw new InvalidOptionError(
      prefix === "" ? "options" : prefix.slice(0, -1),
      "an object",
      value,
    );
  }
  const input = (value ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(schema.shape)) {
    const path = `${prefix}${key}`;
    const doc = optionDoc(member);
    const given = Object.hasOwn(input, key) ? input[key] : undefined;
    if (doc.group === true) {
      const inner = (member as z.ZodOptional<z.ZodObject>).unwrap();
      out[key] = readOptions(inner, given, { prefix: `${path}.`, names: how.names });
    } else {
      out[key] = doc.read(given, how.names?.get(path) ?? path);
    }
  }
  return out;
}

/** One declared option as the reference lists it. */
export interface OptionEntry extends Omit<OptionDoc, "read" | "group"> {
  /** The option's path, e.g. `limits.maxBodyBytes`. */
  readonly path: string;
  readonly group: boolean;
}

/**
 * Every option an options schema declares, groups first then their members, in declaration
 * order: what the reference generator and its test read.
 *
 * @example
 * ```ts
 * for (const entry of listOptions(SERVER_OPTIONS)) console.log(entry.path, entry.default);
 * ```
 */
export function listOptions(schema: z.ZodObject, prefix = ""): OptionEntry[] {
  const entries: OptionEntry[] = [];
  for (const [key, member] of Object.entries(schema.shape)) {
    const { read: _read, group, ...doc } = optionDoc(member);
    const path = `${prefix}${key}`;
    entries.push({ ...doc, path, group: group === true });
    if (group === true) {
      const inner = (member as z.ZodOptional<z.ZodObject>).unwrap();
      entries.push(...listOptions(inner, `${path}.`));
    }
  }
  return entries;
}

function showDefault(value: unknown): string {
  if (value === undefined) return "none";
  if (typeof value === "string") return JSON.stringify(value);
  if (value === Number.POSITIVE_INFINITY) return "Infinity";
  return String(value);
}
