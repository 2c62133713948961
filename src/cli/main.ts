#!/usr/bin/env node
/**
 * The `conduit-mcp` executable (package.json `bin`). Owns the process: parses the command line
 * (bad usage, or a user module that cannot be loaded → message on stderr, exit 2), starts the
 * server (the demo, or the module's: load-module.ts), over stdio with `--stdio` (stdout then
 * carries MCP messages only), else over HTTP, printing exactly one line on stdout
 * (`conduit-mcp listening on http://HOST:PORT/mcp`) so scripts can wait for it, and closes
 * gracefully on SIGINT/SIGTERM (exit 0). A second signal, or a close that overruns its bound,
 * exits at once with 1 rather than leaving a half-closed server running.
 *
 * @example
 * ```sh
 * conduit-mcp serve --port 0 --token alice=s3cret --metrics
 * ```
 */
import { readFileSync } from "node:fs";

import { InvalidOptionError } from "../errors.js";
import { parseCli, type ServeCommand, USAGE } from "./args.js";
import { loadUserModule, ModuleLoadError, type UserModule } from "./load-module.js";
import { configFlags, StartRefused, startServe, startStdio } from "./serve.js";

/** Slack on top of the grace and stream cancel timeout before a stuck close is abandoned. */
const CLOSE_SLACK_MS = 5_000;
/** The library defaults of `closeGraceMs` and `streamCancelTimeoutMs` (docs/server-options.md). */
const DEFAULT_CLOSE_GRACE_MS = 5_000;
const DEFAULT_STREAM_CANCEL_TIMEOUT_MS = 5_000;
/** How long a stdio server whose input ended waits for its cancelled calls before it exits. */
const STDIO_EXIT_WAIT_MS = 1_000;

function version(): string {
  // dist/cli/main.js and src/cli/main.ts are both two levels below package.json.
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  return String(pkg.version);
}

async function main(): Promise<void> {
  const parsed = parseCli(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    process.stderr.write(`conduit-mcp: ${parsed.message}\nRun "conduit-mcp --help" for usage.\n`);
    process.exitCode = 2;
    return;
  }
  const { command } = parsed;
  if (command.kind === "help") {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command.kind === "version") {
    process.stdout.write(`${version()}\n`);
    return;
  }

  let loaded: UserModule | undefined;
  if (command.module !== undefined) {
    loaded = await loadModule(command, command.module);
    if (loaded === undefined) return;
  }

  if (command.stdio) {
    await runStdio(command, loaded);
    return;
  }

  let running: Awaited<ReturnType<typeof startServe>>;
  try {
    running = await startServe(command, loaded);
  } catch (error) {
    if (badOptions(error, command)) return;
    const code = (error as { code?: unknown }).code;
    const why =
      typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `conduit-mcp: cannot listen on ${command.host}:${command.port} (${why})\n`,
    );
    process.exitCode = 1;
    return;
  }

  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) {
      process.stderr.write(`conduit-mcp: ${signal} again, exiting without waiting\n`);
      process.exit(1);
    }
    closing = true;
    process.stderr.write(`conduit-mcp: ${signal} received, closing\n`);
    const bound =
      (command.closeDelayMs ?? 0) +
      (command.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS) +
      (command.streamCancelTimeoutMs ?? DEFAULT_STREAM_CANCEL_TIMEOUT_MS) +
      CLOSE_SLACK_MS;
    setTimeout(() => {
      process.stderr.write(`conduit-mcp: close did not finish within ${bound} ms, exiting\n`);
      process.exit(1);
    }, bound).unref();
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(
          `conduit-mcp: close failed: ${error instanceof Error ? error.message : String(error)}\n`,
        );
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  // Only now: whoever waits for this line may signal us the moment it arrives (stdout to a pipe
  // is written synchronously), so the handlers must already be in place.
  process.stdout.write(`${running.line}\n`);
}

/**
 * `serve --stdio`: stdout carries MCP messages only, so every word for a human goes to stderr.
 * The end of stdin is the client's shutdown signal
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio, "Shutdown"):
 * every request is cancelled at once, and the process exits within {@link STDIO_EXIT_WAIT_MS}
 * whether or not a tool that ignores its signal has stopped (it dies with the process).
 * SIGINT/SIGTERM do the same.
 */
async function runStdio(command: ServeCommand, loaded: UserModule | undefined): Promise<void> {
  let running: Awaited<ReturnType<typeof startStdio>>;
  try {
    running = await startStdio(command, loaded);
  } catch (error) {
    if (badOptions(error, command)) return;
    process.stderr.write(
      `conduit-mcp: cannot start (${error instanceof Error ? error.message : String(error)})\n`,
    );
    process.exitCode = 1;
    return;
  }
  let exiting = false;
  const exit = (why: string): void => {
    if (exiting) return;
    exiting = true;
    process.stderr.write(`conduit-mcp: ${why}, exiting\n`);
    const timer = setTimeout(() => process.exit(0), STDIO_EXIT_WAIT_MS);
    running.close().then(
      () => {
        clearTimeout(timer);
        process.exit(0);
      },
      () => process.exit(1),
    );
  };
  process.once("SIGINT", () => exit("SIGINT received"));
  process.once("SIGTERM", () => exit("SIGTERM received"));
  process.stderr.write("conduit-mcp: serving MCP on stdio\n");
  running.closed.then(() => exit("stdin closed"));
}

/**
 * Loads the user's module; on failure says why on stderr, sets exit code 2 and resolves
 * undefined. A module exporting a ready server cannot take the flags that configure one.
 */
async function loadModule(command: ServeCommand, module: string): Promise<UserModule | undefined> {
  let loaded: UserModule;
  try {
    loaded = await loadUserModule(module, process.cwd());
  } catch (error) {
    const why =
      error instanceof ModuleLoadError ? error.message : `cannot load ${module}: ${String(error)}`;
    process.stderr.write(`conduit-mcp: ${why}\n`);
    process.exitCode = 2;
    return undefined;
  }
  const refused = loaded.kind === "server" ? configFlags(command) : [];
  if (refused.length > 0) {
    // A ready server has its stores already: say how to get the shared ones either way.
    const redis =
      command.redis === undefined
        ? ""
        : "; for --redis, export options, or build the shared stores in the module: createMcpServer({ tools, ...createRedisBackends(url).serverOptions }) (conduit-mcp/redis)";
    process.stderr.write(
      `conduit-mcp: ${module} exports a server, configured in its code; ${refused.join(", ")} cannot apply to it (export options instead: export default { tools, … })${redis}\n`,
    );
    process.exitCode = 2;
    return undefined;
  }
  return loaded;
}

/**
 * A module's options that createMcpServer refuses, or a start refused by the flags' combination:
 * reported as bad usage (exit 2).
 */
function badOptions(error: unknown, command: ServeCommand): boolean {
  if (error instanceof StartRefused) {
    process.stderr.write(`conduit-mcp: ${error.message}\n`);
    process.exitCode = 2;
    return true;
  }
  if (!(error instanceof InvalidOptionError)) return false;
  const where = command.module === undefined ? "" : `${command.module}: `;
  process.stderr.write(`conduit-mcp: ${where}${error.message}\n`);
  process.exitCode = 2;
  return true;
}

await main();
