/**
 * Which JavaScript runtime runs this code, and Node.js built-in modules loaded only when a
 * feature needs them. The package entry imports no built-in that Cloudflare's workerd lacks
 * (test/runtimes/edge-imports.test.ts): worker threads, a listening socket and the like are taken
 * here, through `process.getBuiltinModule` (https://nodejs.org/api/process.html#processgetbuiltinmoduleid),
 * synchronously and once per feature, never per request.
 */
import { UnsupportedRuntimeError } from "./errors.js";

/** The runtimes conduit-mcp knows (docs/runtimes.md has what each can do). */
export type RuntimeName = "node" | "bun" | "deno" | "workerd" | "unknown";

interface RuntimeGlobals {
  Bun?: unknown;
  Deno?: unknown;
  navigator?: { userAgent?: unknown };
  process?: {
    versions?: { node?: unknown };
    getBuiltinModule?: (id: string) => unknown;
  };
}

/** The runtime this code runs on. Bun and Deno also report a Node.js version, so they go first. */
export function currentRuntime(): RuntimeName {
  const scope = globalThis as RuntimeGlobals;
  if (scope.Bun !== undefined) return "bun";
  if (scope.Deno !== undefined) return "deno";
  // https://developers.cloudflare.com/workers/runtime-apis/web-standards/#navigatoruseragent
  if (scope.navigator?.userAgent === "Cloudflare-Workers") return "workerd";
  if (typeof scope.process?.versions?.node === "string") return "node";
  return "unknown";
}

/** What a Node-only feature is and what to use where it cannot work. */
export interface NodeFeature {
  /** The feature as the error names it, e.g. `"isolated tools"`. */
  readonly feature: string;
  /** What to do instead, one sentence (it ends the error message). */
  readonly instead: string;
}

/**
 * The built-in module `id` for `need.feature`, or an {@link UnsupportedRuntimeError} naming the
 * runtime and `need.instead`. On workerd it always refuses: with `nodejs_compat` some of these
 * modules exist there as stubs that would fail later and less clearly.
 */
export function nodeBuiltin<T>(id: string, need: NodeFeature): T {
  const runtime = currentRuntime();
  const module = runtime === "workerd" ? undefined : optionalBuiltin<T>(id);
  if (module === undefined) throw new UnsupportedRuntimeError(need.feature, runtime, need.instead);
  return module;
}

/** The built-in module `id`, or undefined where the runtime has none (or cannot say). */
export function optionalBuiltin<T>(id: string): T | undefined {
  const load = (globalThis as RuntimeGlobals).process?.getBuiltinModule;
  if (typeof load !== "function") return undefined;
  try {
    return (load(id) ?? undefined) as T | undefined;
  } catch {
    return undefined;
  }
}
