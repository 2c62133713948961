/**
 * How an isolated tool is declared. A worker thread cannot receive a closure, so the handler of
 * an isolated tool lives in a module that the worker imports by URL, and is named by its export
 * (the project uses named exports only, so the name is required).
 */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

import { InvalidOptionError } from "../errors.js";

/** Marks a descriptor made by {@link isolatedHandler}. */
const KIND = "conduit-mcp:isolated-handler";

/**
 * Where a worker finds an isolated tool's function. Plain data, so it crosses to the worker as
 * it is; frozen.
 */
export interface IsolatedHandler {
  /** @internal Brands what `isolatedHandler()` made. */
  readonly kind: typeof KIND;
  /** Absolute URL of the module (`file:`, or `data:` for tiny inline tools). */
  readonly moduleUrl: string;
  /** The named export holding the function, called as `(args, ctx)`. */
  readonly exportName: string;
}

/**
 * Declares an isolated tool's handler: the module's named export is called inside a worker
 * thread as `(args, ctx: IsolatedToolContext)`. A relative path is refused because the worker
 * would resolve it against its own entry file; build the URL from `import.meta.url`.
 *
 * @example
 * ```ts
 * defineTool({
 *   name: "crunch",
 *   isolated: isolatedHandler(new URL("./crunch.js", import.meta.url), "crunch"),
 * });
 * ```
 */
export function isolatedHandler(moduleUrl: URL | string, exportName: string): IsolatedHandler {
  if (typeof exportName !== "string" || exportName.length === 0) {
    throw new InvalidOptionError("isolatedHandler exportName", "a non-empty string", exportName);
  }
  return Object.freeze({ kind: KIND, moduleUrl: toModuleUrl(moduleUrl), exportName });
}

/**
 * Whether a value is a descriptor made by {@link isolatedHandler}.
 *
 * @example
 * ```ts
 * if (isIsolatedHandler(definition.isolated)) pool.start(definition.isolated, args, options);
 * ```
 */
export function isIsolatedHandler(value: unknown): value is IsolatedHandler {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<IsolatedHandler>;
  return (
    candidate.kind === KIND &&
    typeof candidate.moduleUrl === "string" &&
    typeof candidate.exportName === "string"
  );
}

/** An absolute module URL from a URL, a URL string or an absolute file path. */
function toModuleUrl(moduleUrl: URL | string): string {
  if (moduleUrl instanceof URL) return moduleUrl.href;
  if (typeof moduleUrl === "string") {
    if (isAbsolute(moduleUrl)) return pathToFileURL(moduleUrl).href;
    if (URL.canParse(moduleUrl)) return new URL(moduleUrl).href;
  }
  throw new InvalidOptionError(
    "isolatedHandler moduleUrl",
    "a URL or an absolute path (build it from import.meta.url)",
    moduleUrl,
  );
}
