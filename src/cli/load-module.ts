/**
 * `conduit-mcp serve ./my-server.js`: loads the user's module and finds what to serve in it. A
 * module may export, by preference:
 *
 * 1. a server made by `createMcpServer` (`export const server = …` or the default export), served
 *    as it is;
 * 2. an options object for `createMcpServer` as the default export (`export default { tools }`,
 *    or `{ extensions }`);
 * 3. named exports: `tools` (an array), and any tool made by `defineTool` under any name.
 *
 * A `.ts` module is loaded through `tsx` when the user's project has it (register-tsx.ts). Every
 * failure is a {@link ModuleLoadError} whose message says what was expected; the CLI prints it and
 * exits 2.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import type { Tool } from "../protocol/index.js";
import type { McpServer, McpServerOptions } from "../server/index.js";
import { hasTransportCore } from "../server/transport-core.js";
import { ModuleLoadError } from "./module-load-error.js";
import { registerTsx } from "./register-tsx.js";

export { ModuleLoadError };

/** What a user module provides. */
export type UserModule =
  | { readonly kind: "server"; readonly server: McpServer }
  | { readonly kind: "options"; readonly options: McpServerOptions };

const TYPESCRIPT = /\.[cm]?tsx?$/;
const EXPECTED =
  "export a server (createMcpServer), a default options object ({ tools }), or tools (an array named `tools`, or defineTool() results under any name)";

/**
 * Imports `path` (relative to `cwd`) and finds the server or options in it.
 *
 * @example
 * ```ts
 * const loaded = await loadUserModule("./my-server.js", process.cwd());
 * const server = loaded.kind === "server" ? loaded.server : createMcpServer(loaded.options);
 * ```
 */
export async function loadUserModule(path: string, cwd: string): Promise<UserModule> {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  const namespace = await importModule(file, cwd);
  return servable(namespace, path);
}

/**
 * Imports the module; a TypeScript one after tsx's loaders are registered (a failed import is
 * cached by URL, so registering after a first attempt would be too late).
 */
async function importModule(file: string, cwd: string): Promise<Record<string, unknown>> {
  if (TYPESCRIPT.test(file)) await registerTsx(cwd, file);
  try {
    return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw loadFailure(file, error);
  }
}

function loadFailure(file: string, error: unknown): ModuleLoadError {
  const code = (error as { code?: unknown }).code;
  if (code === "ERR_MODULE_NOT_FOUND" && String((error as Error).message).includes(file)) {
    return new ModuleLoadError(`cannot load ${file}: no such file`);
  }
  // The module's own message (a syntax error, a throw at load time), without the stack.
  const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new ModuleLoadError(`cannot load ${file}: ${why.split("\n")[0]}`);
}

function servable(namespace: Record<string, unknown>, path: string): UserModule {
  const named = namespace.server;
  if (named !== undefined) {
    if (isConduitServer(named)) return { kind: "server", server: named };
    throw new ModuleLoadError(`${path}: the export \`server\` is not made by createMcpServer()`);
  }
  const fallback = namespace.default;
  if (isConduitServer(fallback)) return { kind: "server", server: fallback };
  // An options object serves tools, extensions, or both.
  if (isObject(fallback) && ("tools" in fallback || "extensions" in fallback)) {
    return { kind: "options", options: fallback as unknown as McpServerOptions };
  }
  const tools: Tool[] = [];
  if (namespace.tools !== undefined) {
    if (!Array.isArray(namespace.tools)) {
      throw new ModuleLoadError(
        `${path}: the export \`tools\` must be an array of defineTool() results`,
      );
    }
    tools.push(...(namespace.tools as Tool[]));
  }
  for (const [key, value] of Object.entries(namespace)) {
    if (key !== "tools" && key !== "default" && isTool(value) && !tools.includes(value)) {
      tools.push(value);
    }
  }
  if (tools.length === 0) throw new ModuleLoadError(`${path}: nothing to serve; ${EXPECTED}`);
  return { kind: "options", options: { tools } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` is a server made by `createMcpServer`. */
function isConduitServer(value: unknown): value is McpServer {
  return hasTransportCore(value);
}

/** The shape `createMcpServer` checks for a tool (see resolveOptions). */
function isTool(value: unknown): value is Tool {
  return (
    isObject(value) &&
    typeof value.name === "string" &&
    typeof value.checkArguments === "function" &&
    typeof value.handler === "function"
  );
}
