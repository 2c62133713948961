/**
 * Loads TypeScript user modules for `conduit-mcp serve ./server.ts`: registers the loaders of the
 * `tsx` that the user's project has (resolved from the working directory, never bundled), as
 * `node --import tsx` would, before the module is imported; or says what to install.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { ModuleLoadError } from "./module-load-error.js";

/**
 * The conditions Node's ES module loader matches for an `import`
 * (https://nodejs.org/docs/latest-v20.x/api/packages.html#conditional-exports).
 */
const IMPORT_CONDITIONS = new Set(["node", "import", "default"]);

/**
 * tsx's two documented Developer APIs (https://tsx.is): a `.ts` file is an ES module or a
 * CommonJS one depending on the project's `"type"`, so both loaders are registered, as
 * `node --import tsx` does.
 */
const TSX_APIS = ["./esm/api", "./cjs/api"] as const;

/**
 * Registers tsx's loaders from `cwd`'s project so that `file` (a `.ts` module) can be imported,
 * or throws a {@link ModuleLoadError} saying how to get tsx. Without tsx, a Node.js that strips
 * types itself (`process.features.typescript`) imports the file as it is.
 */
export async function registerTsx(cwd: string, file: string): Promise<void> {
  const manifestFile = tsxManifest(cwd);
  if (manifestFile === undefined) {
    if ((process.features as { typescript?: unknown }).typescript) return;
    throw new ModuleLoadError(
      `cannot load ${file}: a TypeScript module needs tsx in the project (npm install --save-dev tsx), or compile it to JavaScript first`,
    );
  }
  const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { exports?: unknown };
  for (const api of TSX_APIS) {
    const target = isObject(manifest.exports) ? importTarget(manifest.exports[api]) : undefined;
    if (target === undefined) {
      throw new ModuleLoadError(
        `cannot load ${file}: the project's tsx has no tsx${api.slice(1)}; install tsx 4 or later (npm install --save-dev tsx@4)`,
      );
    }
    const loaded = (await import(pathToFileURL(resolve(dirname(manifestFile), target)).href)) as {
      register?: unknown;
    };
    if (typeof loaded.register !== "function") {
      throw new ModuleLoadError(`cannot load ${file}: tsx${api.slice(1)} has no register()`);
    }
    loaded.register();
  }
}

/**
 * tsx's package.json as `cwd`'s project resolves it, or undefined without tsx. Node 20 resolves an
 * `import` only relative to the importing module (`import.meta.resolve` takes another parent only
 * behind a flag), and `require.resolve("tsx/esm/api")` picks tsx's CommonJS build of that API,
 * whose `register()` points the loader at a file that does not exist. So the package is found the
 * CommonJS way and its `exports` are read for the `import` condition, as the ES module loader does.
 */
function tsxManifest(cwd: string): string | undefined {
  try {
    return createRequire(resolve(cwd, "package.json")).resolve("tsx/package.json");
  } catch {
    return undefined;
  }
}

/** The path a package `exports` target gives an `import` (conditions in their listed order). */
function importTarget(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (!isObject(target)) return undefined;
  for (const [condition, nested] of Object.entries(target)) {
    if (!IMPORT_CONDITIONS.has(condition)) continue;
    const found = importTarget(nested);
    if (found !== undefined) return found;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
