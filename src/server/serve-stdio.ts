/**
 * `serveStdio(server)`: serves a conduit-mcp server over stdio, the transport desktop clients
 * use to run local servers as subprocesses
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio). Same
 * tools, dispatcher, registry and bounds as the server's HTTP listener; see
 * src/stdio/stdio-connection.ts
 * for the scope and cancellation rules.
 */
import type { Readable, Writable } from "node:stream";
import { UnsupportedRuntimeError } from "../errors.js";
import { currentRuntime } from "../runtime.js";
import { StdioConnection } from "../stdio/index.js";
import type { McpServer } from "./create-mcp-server.js";
import { transportCore } from "./transport-core.js";

/** Options of {@link serveStdio}. */
export interface StdioOptions {
  /** Where client messages are read, one per line. Default `process.stdin`. */
  readonly stdin?: Readable;
  /**
   * Where server messages are written, one per line. Default `process.stdout`. Nothing else may
   * write there: the spec allows only MCP messages on it (log to stderr).
   */
  readonly stdout?: Writable;
}

/** A connection started by {@link serveStdio}. */
export interface StdioServing {
  /** The scope every request of the connection runs in (`stdio:<random UUID>`). */
  readonly scope: string;
  /**
   * Resolves when the connection is over: its input ended (the client's shutdown signal), its
   * output failed, or {@link close} was called. Every request still running has been cancelled
   * by then (source `disconnect`); tools that ignore their signal are abandoned after
   * `streamCancelTimeoutMs` as usual.
   */
  readonly closed: Promise<void>;
  /** Stops reading and cancels every request of the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `server` over stdin/stdout (or the given streams) until the input ends.
 *
 * @example
 * ```ts
 * import { createMcpServer, serveStdio } from "conduit-mcp";
 *
 * const server = createMcpServer({ tools: [echo] });
 * const { closed } = serveStdio(server);
 * await closed; // the client closed our stdin
 * await server.close();
 * ```
 */
export function serveStdio(server: McpServer, options: StdioOptions = {}): StdioServing {
  if (currentRuntime() === "workerd") {
    throw new UnsupportedRuntimeError(
      "serveStdio (a process's stdin and stdout)",
      "workerd",
      "serve over HTTP through server.fetch (docs/runtimes.md)",
    );
  }
  const connection = new StdioConnection(
    transportCore(server),
    options.stdin ?? process.stdin,
    options.stdout ?? process.stdout,
  );
  return {
    scope: connection.scope,
    closed: connection.closed,
    close: () => connection.close(),
  };
}
