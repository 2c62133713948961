#!/usr/bin/env node
/**
 * The `conduit-mcp` executable (package.json `bin`). Owns the process: parses the command line
 * (bad usage → message on stderr, exit 2), starts the server, prints exactly one line on stdout
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

import { parseCli, USAGE } from "./args.js";
import { startServe } from "./serve.js";

/** Slack on top of the grace and stream cancel timeout before a stuck close is abandoned. */
const CLOSE_SLACK_MS = 5_000;
/** The library defaults of `closeGraceMs` and `streamCancelTimeoutMs` (issue 3). */
const DEFAULT_CLOSE_GRACE_MS = 5_000;
const DEFAULT_STREAM_CANCEL_TIMEOUT_MS = 5_000;

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

  let running: Awaited<ReturnType<typeof startServe>>;
  try {
    running = await startServe(command);
  } catch (error) {
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

await main();
