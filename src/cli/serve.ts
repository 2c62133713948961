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
import { hkdfSync } from "node:crypto";

import { CancellationRegistry, type CancellationRegistryOptions } from "../cancellation/index.js";
import type { ChangeFeed } from "../changes/index.js";
import { isLoopbackListenHost } from "../http/index.js";
import type { OAuthOptions } from "../identity/oauth/index.js";
import { appsExtension } from "../protocol/apps/index.js";
// Types only (erased at runtime): the Redis code itself is loaded lazily by redisBackends.
import type { RedisBackends } from "../redis/index.js";
import type { ServerReplyBus } from "../replies/index.js";
import {
  createMcpServer,
  groupFlatOptions,
  type McpServer,
  type McpServerOptions,
  serveStdio,
} from "../server/index.js";
import type { SessionStore } from "../sessions/index.js";
import type { TaskStore } from "../tasks/index.js";
import type { ServeCommand } from "./args.js";
import { demoPrompts } from "./demo-prompts.js";
import { demoResources, demoResourceTemplates } from "./demo-resources.js";
import { demoSkills } from "./demo-skills.js";
import { demoTools } from "./demo-tools.js";
import type { UserModule } from "./load-module.js";

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

/** The memory registry's janitor period. */
const MAX_JANITOR_INTERVAL_MS = 60_000;
/** How long a start waits for Redis before serving anyway (fail-open: docs/redis.md). */
const REDIS_READY_WAIT_MS = 2_000;

/**
 * Builds the shared stores of a `--redis` command with `createRedisBackends`. `conduit-mcp/redis`
 * (and so ioredis, an optional peer dependency) is imported here, lazily, only when asked for, so
 * a memory-only `serve` never needs ioredis installed. Waits up to 2 s for Redis, then serves
 * regardless: the stores fail open and reconnect by themselves.
 *
 * @example
 * ```ts
 * const backends = await redisBackends({ ...command, redis: "redis://127.0.0.1:6379" });
 * const server = createMcpServer(serveOptions(command, backends));
 * ```
 */
export async function redisBackends(
  command: ServeCommand & { readonly redis: string },
): Promise<RedisBackends> {
  let redis: typeof import("../redis/index.js");
  try {
    redis = await import("../redis/index.js");
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`--redis needs the optional ioredis package (npm install ioredis): ${why}`);
  }
  const backends = redis.createRedisBackends(command.redis, {
    ...(command.redisLeaseMs === undefined ? {} : { leaseMs: command.redisLeaseMs }),
    cancellation: {
      ...(command.maxRows === undefined ? {} : { maxRows: command.maxRows }),
      ...(command.maxRowsPerScope === undefined
        ? {}
        : { maxRowsPerScope: command.maxRowsPerScope }),
      ...(command.redisShareAfterMs === undefined
        ? {}
        : { shareAfterMs: command.redisShareAfterMs }),
    },
    ...(command.rowTtlMs === undefined ? {} : { registry: { ttlMs: command.rowTtlMs } }),
    // The per-creator bound goes to the shared store (memory sessions get it in serveOptions).
    sessions: command.sessions
      ? command.maxSessionsPerScope === undefined
        ? {}
        : { maxSessionsPerScope: command.maxSessionsPerScope }
      : false,
    tasks: {
      ...(command.maxTasks === undefined ? {} : { maxTasks: command.maxTasks }),
      ...(command.maxTasksPerScope === undefined
        ? {}
        : { maxTasksPerScope: command.maxTasksPerScope }),
    },
  });
  await backends.ready(REDIS_READY_WAIT_MS);
  return backends;
}

/**
 * Maps the command's flags to `createMcpServer` options (only the flags given, so every other
 * option keeps the library's documented default) and a registry carrying the row limits. With
 * `shared` (a `--redis` node), its registry and session store are used instead of memory ones.
 *
 * @example
 * ```ts
 * const options = serveOptions(command);
 * options.auth?.tokens; // { s3cret: "alice" } for --token alice=s3cret
 * ```
 */
export function serveOptions(
  command: ServeCommand,
  shared?: {
    readonly registry: CancellationRegistry;
    readonly sessionStore?: SessionStore | undefined;
    readonly replyBus?: ServerReplyBus | undefined;
    readonly changeFeed?: ChangeFeed | undefined;
    readonly taskStore?: TaskStore | undefined;
    /** The sweep period of the shared task store (`createRedisBackends`: once per lease). */
    readonly serverOptions?: { readonly tasks: { readonly sweepIntervalMs: number } };
  },
  given: McpServerOptions = {
    tools: demoTools,
    resources: [...demoResources, ...demoSkills.resources],
    resourceTemplates: demoResourceTemplates,
    prompts: demoPrompts,
    // Skills, and MCP Apps declared to clients that support it (roll_dice's view: demo-app.ts).
    extensions: [demoSkills.extension, appsExtension],
  },
): McpServerOptions {
  // The module's options in their grouped spelling, so a flag lands beside what it replaces.
  const base = groupFlatOptions(given).grouped;
  const registryOptions: {
    -readonly [K in keyof CancellationRegistryOptions]: CancellationRegistryOptions[K];
  } = {};
  if (command.maxRows !== undefined) registryOptions.maxRows = command.maxRows;
  if (command.maxRowsPerScope !== undefined)
    registryOptions.maxRowsPerScope = command.maxRowsPerScope;
  if (command.rowTtlMs !== undefined) {
    registryOptions.ttlMs = command.rowTtlMs;
    registryOptions.janitorIntervalMs = Math.min(command.rowTtlMs, MAX_JANITOR_INTERVAL_MS);
  }
  const rowFlags = Object.keys(registryOptions).length > 0;
  // The module's own options (or the demo's), then every flag given on top of them.
  const options: { -readonly [K in keyof McpServerOptions]: McpServerOptions[K] } = {
    ...base,
    registry:
      shared?.registry ??
      (rowFlags || base.registry === undefined
        ? new CancellationRegistry(registryOptions)
        : base.registry),
  };
  if (command.sessions) {
    options.sessions =
      shared?.sessionStore !== undefined
        ? { store: shared.sessionStore }
        : command.maxSessionsPerScope !== undefined
          ? { maxSessionsPerScope: command.maxSessionsPerScope }
          : command.sessions;
  } else options.sessions = base.sessions ?? false;
  options.http = {
    ...base.http,
    requireSession: command.requireSession || (base.http?.requireSession ?? false),
    metrics: command.metrics || (base.http?.metrics ?? false),
    ...(command.metricsAuth === true ? { metricsAuth: true } : {}),
    ...(command.trustProxy === undefined ? {} : { trustProxy: command.trustProxy }),
  };
  if (Object.keys(command.tokens).length > 0 || command.oauth !== undefined) {
    options.auth = {
      ...base.auth,
      ...(Object.keys(command.tokens).length > 0 ? { tokens: { ...command.tokens } } : {}),
      ...(command.oauth === undefined ? {} : { oauth: oauthOptions(command, base.http?.path) }),
    };
  }
  options.timeouts = {
    ...base.timeouts,
    ...(command.streamCancelTimeoutMs === undefined
      ? {}
      : { streamCancelTimeoutMs: command.streamCancelTimeoutMs }),
    ...(command.closeGraceMs === undefined ? {} : { closeGraceMs: command.closeGraceMs }),
    ...(command.closeDelayMs === undefined ? {} : { closeDelayMs: command.closeDelayMs }),
  };
  options.limits = {
    ...base.limits,
    ...(command.maxConcurrentRequestsPerScope === undefined
      ? {}
      : { maxConcurrentRequestsPerScope: command.maxConcurrentRequestsPerScope }),
    ...(command.maxConcurrentRequests === undefined
      ? {}
      : { maxConcurrentRequests: command.maxConcurrentRequests }),
  };
  if (command.stateKeys !== undefined) {
    options.inputRequired = { ...base.inputRequired, keys: [...command.stateKeys] };
  }
  if (command.secrets !== undefined) {
    if (command.stateKeys === undefined) {
      options.inputRequired = { ...base.inputRequired, keys: [...command.secrets] };
    }
    options.lists = { ...base.lists, cursorSecret: cursorSecretOf(command.secrets[0] as string) };
  }
  if (shared?.replyBus !== undefined) {
    options.serverRequests = { ...base.serverRequests, bus: shared.replyBus };
  }
  if (shared?.changeFeed !== undefined) options.changeFeed = shared.changeFeed;
  // A module that turned tasks off keeps them off.
  const baseTasks = base.tasks;
  if (baseTasks === false) return options;
  if (shared?.taskStore !== undefined) {
    // A --redis node: the shared store holds the bounds; the janitor sweeps once per lease.
    options.tasks = {
      ...baseTasks,
      store: shared.taskStore,
      ...(shared.serverOptions === undefined
        ? {}
        : { sweepIntervalMs: shared.serverOptions.tasks.sweepIntervalMs }),
    };
  } else if (command.maxTasks !== undefined || command.maxTasksPerScope !== undefined) {
    options.tasks = {
      ...baseTasks,
      ...(command.maxTasks === undefined ? {} : { maxTasks: command.maxTasks }),
      ...(command.maxTasksPerScope === undefined
        ? {}
        : { maxTasksPerScope: command.maxTasksPerScope }),
    };
  }
  return options;
}

/**
 * The list-cursor secret of a `--secret-file`: its newest secret through HKDF (RFC 5869) with a
 * label of its own, so the cursor HMAC key is never the requestState key material itself.
 */
function cursorSecretOf(secret: string): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", secret, "", "conduit-mcp list cursor v1", 32));
}

/** A start refused before anything was built (the CLI reports it as bad usage, exit 2). */
export class StartRefused extends Error {
  override readonly name = "StartRefused";
}

/**
 * Refuses a `--redis` node on a non-loopback host whose list cursors or requestState would be
 * sealed with a random per-process key: behind a load balancer a next page or a retry that
 * reaches another node would be refused there. A module's own `cursorSecret` and
 * `inputRequired.keys` count as shared.
 */
function requireSharedSecrets(command: ServeCommand, loaded: UserModule | undefined): void {
  if (command.redis === undefined || command.secrets !== undefined) return;
  if (command.stdio || isLoopbackListenHost(command.host)) return;
  const own = loaded?.kind === "options" ? groupFlatOptions(loaded.options).grouped : undefined;
  const keys = command.stateKeys !== undefined || own?.inputRequired?.keys !== undefined;
  if (own?.lists?.cursorSecret !== undefined && keys) return;
  throw new StartRefused(
    `--redis on ${command.host} needs --secret-file PATH (or CONDUIT_MCP_SECRET_FILE), the same file on every node: without it each node seals list cursors and requestState with its own random key, and a next page or a retry that reaches another node is refused`,
  );
}

/**
 * `auth.oauth` of the `--oauth-*` flags. Without `--oauth-audience` the resource is the endpoint
 * URL as printed (`http://HOST:PORT/mcp`); with `--port 0` the library fixes it at listen().
 */
function oauthOptions(command: ServeCommand, path: string | undefined): OAuthOptions {
  const flags = command.oauth as NonNullable<ServeCommand["oauth"]>;
  const resource =
    flags.resource ??
    (command.port === 0 ? undefined : endpointUrl(command.host, command.port, path ?? "/mcp"));
  return {
    issuer: flags.issuer,
    jwksUrl: flags.jwksUrl,
    scopes: flags.scopes,
    ...(resource === undefined ? {} : { resource }),
    ...(flags.authorizationServers === undefined
      ? {}
      : { authorizationServers: flags.authorizationServers }),
  };
}

/**
 * Creates the server and listens. Rejects when the port cannot be bound (the caller reports it).
 *
 * @example
 * ```ts
 * const { url, close } = await startServe(command);
 * ```
 */
export async function startServe(
  command: ServeCommand,
  loaded?: UserModule,
): Promise<RunningServe> {
  requireSharedSecrets(command, loaded);
  const redis = command.redis;
  const backends = redis === undefined ? undefined : await redisBackends({ ...command, redis });
  const server = buildServer(command, backends, loaded);
  let listening: Awaited<ReturnType<typeof server.listen>>;
  try {
    listening = await server.listen({ host: command.host, port: command.port });
  } catch (error) {
    await backends?.close();
    throw error;
  }
  // Printed from the host as given (not the resolved address), with the port actually bound.
  const url = endpointUrl(command.host, listening.port, new URL(listening.url).pathname);
  const close = async (): Promise<void> => {
    // The server first (in-flight calls end and untrack), then the shared stores.
    await server.close();
    await backends?.close();
  };
  return { url, line: `conduit-mcp listening on ${url}`, close };
}

/** A started `serve --stdio` command. */
export interface RunningStdio {
  /** Resolves when stdin ended (or {@link RunningStdio.close} was called). */
  readonly closed: Promise<void>;
  /**
   * Cancels every request of the connection, then closes the server and the shared stores.
   * The caller bounds the wait: a tool that ignores its signal may hold the close until the
   * stream cancel timeout, and a stdio server must exit as soon as its input is gone.
   */
  close(): Promise<void>;
}

/**
 * Creates the server and serves it on this process's stdin/stdout.
 *
 * @example
 * ```ts
 * const running = await startStdio(command);
 * await running.closed; // the client closed stdin
 * await running.close();
 * ```
 */
export async function startStdio(
  command: ServeCommand,
  loaded?: UserModule,
): Promise<RunningStdio> {
  const redis = command.redis;
  const backends = redis === undefined ? undefined : await redisBackends({ ...command, redis });
  const server = buildServer(command, backends, loaded);
  const serving = serveStdio(server);
  return {
    closed: serving.closed,
    async close() {
      await serving.close();
      await server.close();
      await backends?.close();
    },
  };
}

/**
 * The server a command serves: the module's own server as it is, else one built from the
 * module's options (or the demo's) and the flags.
 */
function buildServer(
  command: ServeCommand,
  backends: RedisBackends | undefined,
  loaded: UserModule | undefined,
): McpServer {
  if (loaded?.kind === "server") return loaded.server;
  return createMcpServer(serveOptions(command, backends, loaded?.options));
}

/**
 * The flags that configure a server (not where it is served): a module that exports a ready
 * server configures it in code, so these cannot apply to it and are refused rather than ignored.
 *
 * @example
 * ```ts
 * configFlags(parseCli(["serve", "x.js", "--metrics"]).command); // ["--metrics"]
 * ```
 */
export function configFlags(command: ServeCommand): string[] {
  const given: string[] = [];
  if (command.sessions) given.push(command.requireSession ? "--require-session" : "--sessions");
  if (Object.keys(command.tokens).length > 0) given.push("--token");
  if (command.oauth !== undefined) given.push("--oauth-issuer");
  if (command.metricsAuth === true) given.push("--metrics-auth");
  if (command.trustProxy !== undefined) given.push("--trust-proxy");
  if (command.maxRows !== undefined) given.push("--max-rows");
  if (command.maxRowsPerScope !== undefined) given.push("--max-rows-per-scope");
  if (command.rowTtlMs !== undefined) given.push("--row-ttl-ms");
  if (command.maxTasks !== undefined) given.push("--max-tasks");
  if (command.maxTasksPerScope !== undefined) given.push("--max-tasks-per-scope");
  if (command.streamCancelTimeoutMs !== undefined) given.push("--stream-cancel-timeout");
  if (command.closeGraceMs !== undefined) given.push("--close-grace");
  if (command.closeDelayMs !== undefined) given.push("--drain-delay-ms");
  if (command.stateKeys !== undefined) given.push("--state-key-file");
  if (command.secrets !== undefined) given.push("--secret-file (or CONDUIT_MCP_SECRET_FILE)");
  if (command.metrics) given.push("--metrics");
  if (command.maxConcurrentRequestsPerScope !== undefined) given.push("--max-requests-per-scope");
  if (command.maxConcurrentRequests !== undefined) given.push("--max-requests");
  if (command.redis !== undefined) given.push("--redis (or REDIS_URL)");
  return given;
}
