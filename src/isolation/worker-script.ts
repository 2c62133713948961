/**
 * Where a pool worker starts. The entry file is resolved next to this module, so the same code
 * works from the TypeScript sources (tests run under `node --import tsx`) and from the compiled
 * `dist/` build: `worker-entry.ts` beside `worker-script.ts`, `worker-entry.js` beside
 * `worker-script.js`.
 *
 * From the sources one more step is needed: on Node 20, tsx registers its loader hooks in the
 * main thread only (a worker inherits `--import tsx` but tsx skips registering there), so a
 * worker could load neither `worker-entry.ts` nor a TypeScript tool module. The worker then starts
 * from a two-line bootstrap that registers tsx through its public `tsx/esm/api` first. The
 * compiled build never takes that branch and never refers to tsx.
 */

/** What `new Worker(...)` is given: a file URL, or a script evaluated in the worker. */
export interface WorkerScript {
  readonly specifier: URL | string;
  readonly eval: boolean;
  /** Node flags of the worker; undefined inherits the process's `execArgv`. */
  readonly execArgv: string[] | undefined;
}

/** Flags that load a module before the entry, each followed by its module (or `=module`). */
const PRELOAD_FLAGS = new Set(["--import", "--require", "-r", "--loader", "--experimental-loader"]);

/**
 * The worker's start-up script for the build this module belongs to.
 *
 * @example
 * ```ts
 * const { specifier, eval: isEval } = workerScript();
 * const worker = new Worker(specifier, { eval: isEval });
 * ```
 */
export function workerScript(moduleUrl: string = import.meta.url): WorkerScript {
  const fromSources = moduleUrl.endsWith(".ts");
  const entry = new URL(fromSources ? "./worker-entry.ts" : "./worker-entry.js", moduleUrl);
  if (!fromSources) return { specifier: entry, eval: false, execArgv: undefined };
  let tsxApi: string;
  try {
    tsxApi = import.meta.resolve("tsx/esm/api");
  } catch {
    // A runtime that runs TypeScript by itself (e.g. type stripping) loads the entry directly.
    return { specifier: entry, eval: false, execArgv: undefined };
  }
  // Evaluated as a CommonJS script in the worker; a failure surfaces as the worker's error.
  const bootstrap =
    `import(${JSON.stringify(tsxApi)})` +
    `.then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  // The inherited tsx preload is dropped: it only costs start-up time on Node 20 (where it skips
  // workers) and would register tsx a second time where it does not.
  return { specifier: bootstrap, eval: true, execArgv: withoutTsxPreload(process.execArgv) };
}

/**
 * `execArgv` without the flags that preload tsx (`--import tsx`, `--import=tsx/esm`, the
 * absolute paths the tsx CLI passes); every other flag is kept.
 *
 * @example
 * ```ts
 * withoutTsxPreload(["--import", "tsx", "--enable-source-maps"]); // ["--enable-source-maps"]
 * ```
 */
export function withoutTsxPreload(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] ?? "";
    const equals = flag.indexOf("=");
    const name = equals === -1 ? flag : flag.slice(0, equals);
    if (PRELOAD_FLAGS.has(name)) {
      const value = equals === -1 ? (execArgv[i + 1] ?? "") : flag.slice(equals + 1);
      if (isTsx(value)) {
        if (equals === -1) i += 1;
        continue;
      }
    }
    kept.push(flag);
  }
  return kept;
}

function isTsx(specifier: string): boolean {
  return (
    specifier === "tsx" ||
    specifier.startsWith("tsx/") ||
    /[\\/]node_modules[\\/]tsx[\\/]/.test(specifier)
  );
}
