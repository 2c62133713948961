/**
 * `conduit-mcp serve`: builds the demo server from a parsed {@link ServeCommand} and starts it.
 * Kept apart from main.ts (which owns the process: signals, exit codes) so the wiring can be
 * reused and reasoned about without a process around it.
 *
 * @example
 * ```ts
 * const parsed = parseCli(["serve", "--port", "0"]);
 * if (parsed.ok && parsed.command.kind === "serve") {
 *   const running = await startServe(parsed.command);
 *   console.log(running.line); // "conduit-mcp listening on http://127.0.0.1:54321/mcp"
 *   await running.close();
 * }
 * ```
 */
import { CancellationRegistry, type CancellationRegistryOptions } from "../cancellation/index.js";
import { createMcpServer, type McpServerOptions } from "../server/index.js";
import type { ServeCommand } from "./args.js";
import { demoTools } from "./demo-tools.js";

/** A started `serve` command. */
export interface RunningServe {
  /** The endpoint URL, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  /** The exact first stdout line: `conduit-mcp listening on <url>`. */
  readonly line: string;
  /** Graceful close (stop accepting, let in-flight calls finish within the grace, then cancel). */
  close(): Promise<void>;
}

/**
 * The endpoint URL for a bind host and port. An IPv6 literal is bracketed (RFC 3986 §3.2.2), so
 * `--host ::1` prints `http://[::1]:3000/mcp`, a URL a client can actually use.
 *
 * @example
 * ```ts
 * endpointUrl("::1", 3000, "/mcp"); // "http://[::1]:3000/mcp"
 * endpointUrl("127.0.0.1", 8080, "/mcp"); // "http://127.0.0.1:8080/mcp"
 * ```
 */
export function endpointUrl(host: string, port: number, path: string): string {
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return `http://${shownHost}:${port}${path}`;
}

/**
 * Maps the command's flags to `createMcpServer` options (only the flags given, so every other
 * option keeps the library's documented default) and a registry carrying the row limits.
 *
 * @example
 * ```ts
 * const options = serveOptions(command);
 * options.auth?.tokens; // { s3cret: "alice" } for --token alice=s3cret
 * ```
 */
export function serveOptions(command: ServeCommand): McpServerOptions {
  const registryOptions: {
    -readonly [K in keyof CancellationRegistryOptions]: CancellationRegistryOptions[K];
  } = {};
  if (command.maxRows !== undefined) registryOptions.maxRows = command.maxRows;
  if (command.maxRowsPerScope !== undefined)
    registryOptions.maxRowsPerScope = command.maxRowsPerScope;
  const options: { -readonly [K in keyof McpServerOptions]: McpServerOptions[K] } = {
    tools: demoTools,
    registry: new CancellationRegistry(registryOptions),
    sessions: command.sessions,
    requireSession: command.requireSession,
    metrics: command.metrics,
  };
  if (Object.keys(command.tokens).length > 0) options.auth = { tokens: { ...command.tokens } };
  if (command.trustProxy !== undefined) options.trustProxy = command.trustProxy;
  if (command.streamCancelTimeoutMs !== undefined) {
    options.streamCancelTimeoutMs = command.streamCancelTimeoutMs;
  }
  if (command.closeGraceMs !== undefined) options.closeGraceMs = command.closeGraceMs;
  return options;
}

/**
 * Creates the server and listens. Rejects when the port cannot be bound (the caller reports it).
 *
 * @example
 * ```ts
 * const { url, close } = await startServe(command);
 * ```
 */
export async function startServe(command: ServeCommand): Promise<RunningServe> {
  const server = createMcpServer(serveOptions(command));
  const listening = await server.listen({ host: command.host, port: command.port });
  // Printed from the host as given (not the resolved address), with the port actually bound.
  const url = endpointUrl(command.host, listening.port, new URL(listening.url).pathname);
  return { url, line: `conduit-mcp listening on ${url}`, close: () => server.close() };
}
