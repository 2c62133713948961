/**
 * What the conduit-mcp benchmark targets serve: the CLI's `echo` tool and `review` prompt
 * (exactly what `conduit-mcp serve` runs, zod-validated), and the benchmark's Markdown resource
 * (bench/lib/bench-content.ts), which every target serves with the same bytes.
 *
 * The code comes from `BENCH_CONDUIT_BUILD` when it names a directory of compiled JavaScript
 * (`dist`, what `npm run build` writes and the package ships), else from `src/` through tsx.
 * The benchmarks measure the build: tsx's transform wraps every function created at run time in
 * a naming helper (esbuild's `keepNames`), a per-call cost the shipped code does not have.
 *
 * @example
 * ```ts
 * const { lib, definitions } = await conduitTarget();
 * const server = lib.createMcpServer({ ...definitions });
 * ```
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import type * as Demo from "../../src/cli/demo-prompts.js";
import type * as DemoTools from "../../src/cli/demo-tools.js";
import type * as Index from "../../src/index.js";
import type * as Redis from "../../src/redis/index.js";
import { BENCH_RESOURCE_MIME, BENCH_RESOURCE_TEXT, BENCH_RESOURCE_URI } from "./bench-content.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** Imports `<module>` (a path under src/, without extension) from the chosen build. */
async function load<T>(module: string): Promise<T> {
  const build = process.env.BENCH_CONDUIT_BUILD;
  if (build === undefined || build === "") {
    return (await import(pathToFileURL(`${ROOT}/src/${module}.ts`).href)) as T;
  }
  const dir = isAbsolute(build) ? build : resolve(ROOT, build);
  return (await import(pathToFileURL(`${dir}/${module}.js`).href)) as T;
}

/** The library (and its Redis entry point) from the chosen build, with the bench definitions. */
export async function conduitTarget(): Promise<{
  lib: typeof Index;
  /** The `conduit-mcp/redis` entry point, imported when asked (it loads ioredis). */
  redis: () => Promise<typeof Redis>;
  definitions: Pick<Index.McpServerOptions, "tools" | "resources" | "prompts">;
}> {
  const lib = await load<typeof Index>("index");
  const { echoTool } = await load<typeof DemoTools>("cli/demo-tools");
  const { reviewPrompt } = await load<typeof Demo>("cli/demo-prompts");
  return {
    lib,
    redis: () => load<typeof Redis>("redis/index"),
    definitions: {
      tools: [echoTool],
      resources: [
        lib.defineResource({
          uri: BENCH_RESOURCE_URI,
          name: "readme",
          mimeType: BENCH_RESOURCE_MIME,
          read: () => BENCH_RESOURCE_TEXT,
        }),
      ],
      prompts: [reviewPrompt],
    },
  };
}
