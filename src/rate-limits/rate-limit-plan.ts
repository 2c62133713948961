/**
 * The `rateLimits` option (docs/limits.md, "Rate limits"), checked once at construction, and the
 * rates that apply to one request: the bucket's `perScope` rate, its method's, and for a
 * `tools/call` its tool's, each chosen by the bucket's scope kind.
 */
import { z } from "zod";

import { InvalidOptionError } from "../errors.js";
import { MemoryRateLimitStore } from "./memory-rate-limit-store.js";
import type { AppliedRate, Rate, RateLimitStore, RateRule } from "./types.js";

/** The server's `rateLimits` option. */
export interface RateLimitOptions {
  /** Every request of a bucket (principal, else IP bucket). Default: none. */
  readonly perScope?: RateRule;
  /** Requests of one JSON-RPC method (e.g. `"tools/call"`), on top of `perScope`. */
  readonly methods?: Readonly<Record<string, RateRule>>;
  /** `tools/call` requests naming one tool, on top of `perScope` and `methods`. */
  readonly tools?: Readonly<Record<string, RateRule>>;
  /**
   * Where buckets live. Default: a {@link MemoryRateLimitStore} of this process (per node); give
   * a `RedisRateLimitStore` (`conduit-mcp/redis`) to share the budget across nodes. A store
   * passed in belongs to the caller (close it after the server).
   */
  readonly store?: RateLimitStore;
  /** Most buckets the default memory store keeps (least recently used forgotten). Default 100 000. */
  readonly maxBuckets?: number;
}

const KINDS = ["principal", "ip"] as const;
type Kind = (typeof KINDS)[number];

/** Rates of one scope kind. */
interface KindRates {
  readonly perScope: AppliedRate | null;
  readonly methods: ReadonlyMap<string, AppliedRate>;
  readonly tools: ReadonlyMap<string, AppliedRate>;
}

const RATE = z
  .object({
    capacity: z.number().int().min(1).max(1_000_000),
    refillPerSecond: z.number().gt(0).max(1_000_000),
  })
  .strict();
const RATE_EXPECTED =
  "{ capacity: an integer from 1 to 1000000, refillPerSecond: a number > 0 up to 1000000 }, or { principal?, ip? } of those (or false)";
const NAME = /^[\x21-\x7e]{1,128}$/;

/**
 * The checked `rateLimits` option: which rates a request takes from, and the store.
 *
 * @example
 * ```ts
 * const plan = RateLimitPlan.from({ perScope: { capacity: 20, refillPerSecond: 5 } });
 * plan?.ratesFor("ip:203.0.113.7", "tools/call", "search"); // [{ key: "*", capacity: 20, … }]
 * ```
 */
export class RateLimitPlan {
  readonly store: RateLimitStore;
  /** Whether the store was made here (and is closed with the server). */
  readonly ownsStore: boolean;
  private readonly byKind: Readonly<Record<Kind, KindRates>>;

  private constructor(
    store: RateLimitStore,
    ownsStore: boolean,
    byKind: Readonly<Record<Kind, KindRates>>,
  ) {
    this.store = store;
    this.ownsStore = ownsStore;
    this.byKind = byKind;
  }

  /**
   * The plan of an option value, or null when it limits nothing (absent, or no rule at all).
   *
   * @throws InvalidOptionError naming the part that is wrong.
   */
  static from(options: unknown): RateLimitPlan | null {
    if (options === undefined || options === false) return null;
    if (!isRecord(options)) {
      throw new InvalidOptionError("rateLimits", "an object or false", options);
    }
    const known = new Set(["perScope", "methods", "tools", "store", "maxBuckets"]);
    for (const key of Object.keys(options)) {
      if (!known.has(key)) throw new InvalidOptionError(`rateLimits.${key}`, "not an option", key);
    }
    const methods = namedRules("rateLimits.methods", options.methods);
    const tools = namedRules("rateLimits.tools", options.tools);
    const byKind = {} as Record<Kind, KindRates>;
    let any = false;
    for (const kind of KINDS) {
      const perScope = rateOf("rateLimits.perScope", options.perScope, kind, "*");
      const methodRates = new Map<string, AppliedRate>();
      for (const [name, rule] of methods) {
        const rate = rateOf(`rateLimits.methods.${name}`, rule, kind, `m:${name}`);
        if (rate !== null) methodRates.set(name, rate);
      }
      const toolRates = new Map<string, AppliedRate>();
      for (const [name, rule] of tools) {
        const rate = rateOf(`rateLimits.tools.${name}`, rule, kind, `t:${name}`);
        if (rate !== null) toolRates.set(name, rate);
      }
      any ||= perScope !== null || methodRates.size > 0 || toolRates.size > 0;
      byKind[kind] = { perScope, methods: methodRates, tools: toolRates };
    }
    const given = options.store;
    if (given !== undefined && !isStore(given)) {
      throw new InvalidOptionError("rateLimits.store", "a RateLimitStore", given);
    }
    if (given !== undefined && options.maxBuckets !== undefined) {
      throw new InvalidOptionError(
        "rateLimits.maxBuckets",
        "absent when a store is given (the store carries its own bounds)",
        options.maxBuckets,
      );
    }
    if (!any) return null;
    const store =
      given ??
      new MemoryRateLimitStore(
        options.maxBuckets === undefined ? {} : { maxBuckets: options.maxBuckets as number },
      );
    return new RateLimitPlan(store, given === undefined, byKind);
  }

  /**
   * The rates one request takes a token from (empty: not limited). `bucket` is its principal's
   * or IP bucket's scope; another kind of scope is not limited.
   */
  ratesFor(bucket: string, method: string, tool: string | null): readonly AppliedRate[] {
    const kind: Kind | null = bucket.startsWith("principal:")
      ? "principal"
      : bucket.startsWith("ip:")
        ? "ip"
        : null;
    if (kind === null) return [];
    const rates = this.byKind[kind];
    const out: AppliedRate[] = [];
    if (rates.perScope !== null) out.push(rates.perScope);
    const forMethod = rates.methods.get(method);
    if (forMethod !== undefined) out.push(forMethod);
    if (tool !== null) {
      const forTool = rates.tools.get(tool);
      if (forTool !== undefined) out.push(forTool);
    }
    return out;
  }
}

/** The `[name, rule]` pairs of a `methods` or `tools` record. */
function namedRules(option: string, value: unknown): [string, unknown][] {
  if (value === undefined) return [];
  if (!isRecord(value)) throw new InvalidOptionError(option, "an object of rules", value);
  const pairs = Object.entries(value);
  for (const [name] of pairs) {
    if (!NAME.test(name)) {
      throw new InvalidOptionError(option, "names of 1-128 visible ASCII characters", name);
    }
  }
  return pairs;
}

/** The rate of `kind` under `rule` (null: the kind is not limited by it). */
function rateOf(option: string, rule: unknown, kind: Kind, key: string): AppliedRate | null {
  if (rule === undefined) return null;
  if (!isRecord(rule)) throw new InvalidOptionError(option, RATE_EXPECTED, rule);
  const perKind = !("capacity" in rule) && !("refillPerSecond" in rule);
  if (perKind) {
    for (const name of Object.keys(rule)) {
      if (name !== "principal" && name !== "ip") {
        throw new InvalidOptionError(option, RATE_EXPECTED, rule);
      }
    }
  }
  const value = perKind ? rule[kind] : rule;
  if (value === undefined || value === false) return null;
  const parsed = RATE.safeParse(value);
  if (!parsed.success) {
    throw new InvalidOptionError(perKind ? `${option}.${kind}` : option, RATE_EXPECTED, value);
  }
  const rate: Rate = parsed.data;
  return Object.freeze({ key, capacity: rate.capacity, refillPerSecond: rate.refillPerSecond });
}

function isStore(value: unknown): value is RateLimitStore {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as RateLimitStore).take === "function" &&
    typeof (value as RateLimitStore).close === "function"
  );
}

/** An object that is not an array (what an options object or a rule may be). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
