/**
 * `@opentelemetry/api` is an optional peer dependency (like `ioredis`): it is loaded with a
 * dynamic import, once per process, only when tracing is wanted, and its absence is not an
 * error — tracing is then off and nothing of it runs on the request path.
 */

/**
 * The `@opentelemetry/api` module. Not exported: the shipped declarations must not name the
 * optional peer (a user without it must still type-check), so outside this directory the loaded
 * module is an opaque `object` that only `createTracing` (tracing.ts) opens.
 */
type OpenTelemetryApi = typeof import("@opentelemetry/api");

/** How the module is imported; replaceable in tests to stand for an absent package. */
export type ApiImporter = () => Promise<unknown>;

const importApi: ApiImporter = () => import("@opentelemetry/api");

let loaded: Promise<object | null> | null = null;

/**
 * Resolves the API, or null when it is not installed (or cannot be loaded). Never rejects.
 * With the default importer the result is cached for the process.
 *
 * @example
 * ```ts
 * const api = await loadOpenTelemetry();
 * const tracing = api === null ? null : createTracing(api, undefined, "1.0.0");
 * ```
 */
export function loadOpenTelemetry(importer?: ApiImporter): Promise<object | null> {
  if (importer !== undefined) return attempt(importer);
  loaded ??= attempt(importApi);
  return loaded;
}

async function attempt(importer: ApiImporter): Promise<object | null> {
  try {
    const module = (await importer()) as Partial<OpenTelemetryApi> & {
      default?: Partial<OpenTelemetryApi>;
    };
    // ESM namespace of the package's own ESM build, or a CommonJS interop wrapper.
    const api = typeof module.trace === "object" ? module : module.default;
    return api !== undefined && typeof api.trace === "object" ? (api as OpenTelemetryApi) : null;
  } catch {
    return null; // not installed: tracing stays off
  }
}
