/**
 * Starts the door suite's app (fixtures/runtime-app.ts) on another runtime: Bun, Deno or
 * Cloudflare's workerd, each from the npm package that ships its binary (installed by
 * .ci/steps.d/50-runtimes.sh into .ci/runtimes/). The app is bundled with esbuild against the
 * built package (dist/, so run `npm run build` first), as a user's deploy step would. Not a test
 * file.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { build, type Plugin } from "esbuild";

import type { Door } from "../doors/door-suite.js";
import type { WaitRecord } from "../doors/fixtures/door-tools.js";

export type RuntimeName = "bun" | "deno" | "workerd";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, ".ci", "runtimes", "node_modules", ".bin");

/** The runtime's binary, or null when .ci/runtimes has not been installed. */
export function runtimeBinary(name: RuntimeName): string | null {
  const path = join(BIN, name);
  return existsSync(path) ? path : null;
}

/** Why the runtime tests do not run here, or null when they can. */
export function whyNot(name: RuntimeName): string | null {
  if (process.env.CONDUIT_RUNTIME_TESTS !== "1") {
    return "run by .ci/steps.d/50-runtimes.sh (CONDUIT_RUNTIME_TESTS=1), which installs the runtimes";
  }
  if (runtimeBinary(name) === null) return `${name} is not installed: npm ci --prefix .ci/runtimes`;
  if (!existsSync(join(ROOT, "dist", "index.js"))) return "dist/ is missing: npm run build";
  return null;
}

/** The package's own source entry, resolved to its build: the bundle holds what npm ships. */
const builtPackage: Plugin = {
  name: "built-package",
  setup(on) {
    on.onResolve({ filter: /\/src\/(redis\/)?index\.js$/ }, (args) => ({
      path: join(
        ROOT,
        "dist",
        args.path.endsWith("redis/index.js") ? "redis/index.js" : "index.js",
      ),
    }));
  },
};

/**
 * Bundles `entry` (a file of fixtures/) into `dir`, returning the output's path. With `commonJs`
 * the bundle may hold CommonJS packages (ioredis) that `require` Node built-ins: it gets a
 * `require` from node:module, as Cloudflare's wrangler arranges for `nodejs_compat`.
 */
async function bundle(entry: string, dir: string, commonJs = false): Promise<string> {
  const outfile = join(dir, `${entry.replace(/\.ts$/, "")}.mjs`);
  await build({
    entryPoints: [join(ROOT, "test", "runtimes", "fixtures", entry)],
    outfile,
    bundle: true,
    format: "esm",
    platform: commonJs ? "node" : "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "import"],
    external: ["node:*", "@opentelemetry/api"],
    plugins: [builtPackage],
    ...(commonJs
      ? {
          banner: {
            js: 'import { createRequire as conduitRequire } from "node:module"; const require = conduitRequire("/");',
          },
        }
      : {}),
    logLevel: "error",
  });
  return outfile;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Resolves with the first JSON line the process prints; rejects if it exits first. */
function firstLine(child: ChildProcess, errors: () => string): Promise<{ port: number }> {
  return new Promise((found, failed) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const newline = out.indexOf("\n");
      if (newline >= 0) found(JSON.parse(out.slice(0, newline)) as { port: number });
    });
    child.once("exit", (code) => failed(new Error(`exited ${code}: ${errors()}`)));
  });
}

async function ready(base: string, child: ChildProcess, errors: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${errors()}`);
    try {
      if ((await fetch(`${base}/records?tag=ready`)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`not ready after 20 s: ${errors()}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** The workerd configuration serving `worker` on `port` (https://github.com/cloudflare/workerd). */
function workerdConfig(worker: string, port: number, compatibilityDate: string): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .app) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const app :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "${worker}") ],
  compatibilityDate = "${compatibilityDate}",
  compatibilityFlags = ["nodejs_compat", "enable_request_signal"],
);
`;
}

/**
 * The oldest compatibility date the Cloudflare Workers recipe supports (docs/runtimes.md): from
 * it on, workerd's timers are Node.js-style objects (`unref()`), which the package uses.
 */
export const WORKERD_COMPATIBILITY_DATE = "2026-02-15";

/** Starts the app on `name`; the door's URL is its MCP endpoint. */
/** A Worker other than the door suite's: its entry (fixtures/) and how to run it. */
export interface WorkerChoice {
  readonly entry: string;
  readonly compatibilityDate: string;
  readonly commonJs: boolean;
}

export async function startOn(
  name: RuntimeName,
  worker: WorkerChoice = {
    entry: "worker-entry.ts",
    compatibilityDate: WORKERD_COMPATIBILITY_DATE,
    commonJs: false,
  },
): Promise<Door> {
  const bin = runtimeBinary(name);
  if (bin === null) throw new Error(`${name} is not installed`);
  const dir = await mkdtemp(join(tmpdir(), `conduit-${name}-`));
  let stderr = "";
  const errors = (): string => stderr.slice(-2_000);
  let child: ChildProcess;
  let port: number;
  if (name === "workerd") {
    const file = await bundle(worker.entry, dir, worker.commonJs);
    port = await freePort();
    const config = join(dir, "config.capnp");
    // Cap'n Proto reads a path starting with "/" from its import path: the bundle is named
    // relative to the configuration beside it.
    await writeFile(config, workerdConfig(basename(file), port, worker.compatibilityDate));
    child = spawn(bin, ["serve", config], { stdio: ["ignore", "pipe", "pipe"] });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    await ready(`http://127.0.0.1:${port}`, child, errors);
  } else {
    const file = await bundle(`${name}-entry.ts`, dir);
    const args = name === "bun" ? [file] : ["run", "--allow-net", "--allow-env", file];
    child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], cwd: dir });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    ({ port } = await firstLine(child, errors));
  }
  const base = `http://127.0.0.1:${port}`;
  return {
    target: {
      kind: "http",
      url: new URL(`${base}/mcp`),
      disconnectSeenOnWrite: name !== "bun",
      sessions: true,
      records: async (tag) =>
        (await (
          await fetch(`${base}/records?tag=${encodeURIComponent(tag)}`)
        ).json()) as WaitRecord | null,
    },
    close: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once("exit", done));
        child.kill("SIGTERM");
        // workerd drains open connections first: a stream a client left open would hold it.
        const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
