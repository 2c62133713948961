/**
 * Command-line parsing for `conduit-mcp`. Pure: takes the argument list, returns
 * either a command or a message for the user, so the rules are testable without a process.
 * Strict on purpose: an unknown flag or a bad value is reported before anything listens, since a
 * typo in a security flag (`--trust-proxy`, `--token`) must never start a server with defaults.
 *
 * @example
 * ```ts
 * const parsed = parseCli(["serve", "--port", "0", "--token", "alice=s3cret"]);
 * if (parsed.ok && parsed.command.kind === "serve") parsed.command.tokens; // { s3cret: "alice" }
 * ```
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { InvalidOptionError } from "../errors.js";
import { parseTrustProxy } from "../identity/index.js";
import { canonicalResource, scopeList, serviceUrl } from "../identity/oauth/index.js";
import { HTTP_ONLY_FLAGS, PARSE_OPTIONS, usageOptions } from "./flags.js";

/** `conduit-mcp serve …`: everything needed to build and start the demo server. */
export interface ServeCommand {
  readonly kind: "serve";
  /** Interface to bind; default 127.0.0.1 (local servers SHOULD bind to loopback, MCP A.3). */
  readonly host: string;
  /** TCP port; 0 picks a free one. Default 3000. */
  readonly port: number;
  /** Mint `Mcp-Session-Id` on initialize (implied by `requireSession`). */
  readonly sessions: boolean;
  /** Answer 400 to requests without a session. */
  readonly requireSession: boolean;
  /** Bearer secret → principal id, the shape of `createMcpServer({ auth: { tokens } })`. */
  readonly tokens: Readonly<Record<string, string>>;
  /**
   * OAuth 2.1 access tokens (`--oauth-issuer`, `--oauth-jwks-url`, …): the shape of
   * `createMcpServer({ auth: { oauth } })` except `resource`, which serve.ts fills in from the
   * endpoint URL when `--oauth-audience` is absent.
   */
  readonly oauth?: CliOAuth;
  /** `GET /metrics` needs the same credentials as the endpoint (`--metrics-auth`). */
  readonly metricsAuth?: boolean;
  /** Hop count or CIDR list, checked with `parseTrustProxy`; absent → trust no proxy. */
  readonly trustProxy?: number | string;
  /** Global cap of cancellation rows (`Infinity` disables it). */
  readonly maxRows?: number;
  /** Per-scope quota of cancellation rows (`Infinity` disables it). */
  readonly maxRowsPerScope?: number;
  /** Age after which the janitor removes a cancellation row (`--row-ttl-ms`). Default 300 000. */
  readonly rowTtlMs?: number;
  /** Global cap of tasks (`--max-tasks`; `Infinity` disables it). */
  readonly maxTasks?: number;
  /** Tasks one scope may hold, running or finished (`--max-tasks-per-scope`; `Infinity` disables it). */
  readonly maxTasksPerScope?: number;
  /** Sessions one creating scope may hold (`--max-sessions-per-scope`). */
  readonly maxSessionsPerScope?: number;
  /** Requests one scope may have running (`--max-requests-per-scope`). */
  readonly maxConcurrentRequestsPerScope?: number;
  /** Requests running in all (`--max-requests`). */
  readonly maxConcurrentRequests?: number;
  /** How long a cancelled tool may keep its request before it is abandoned. */
  readonly streamCancelTimeoutMs?: number;
  /** How long a shutdown waits for in-flight calls before cancelling them. */
  readonly closeGraceMs?: number;
  /** `--drain-delay-ms`: serving, not ready, before the drain stops admitting. */
  readonly closeDelayMs?: number;
  /** Serve `GET /metrics`. */
  readonly metrics: boolean;
  /**
   * Redis URL (`--redis`, else `REDIS_URL`): cancellation rows, in-flight entries and, with
   * `sessions`, the sessions themselves are shared by every node on it (docs/redis.md). Absent → memory.
   */
  readonly redis?: string;
  /** This node's Redis lease (`--redis-lease-ms`); only with `redis`. Store default 15 000. */
  readonly redisLeaseMs?: number;
  /** How long a call runs before it is shared in Redis (`--redis-share-after-ms`). Store default 50. */
  readonly redisShareAfterMs?: number;
  /**
   * Keys sealing `requestState` of input-required results (`--state-key-file`), newest first;
   * absent → a random key per process (docs/asking-the-client.md).
   */
  readonly stateKeys?: readonly string[];
  /**
   * Secrets shared by every node (`--secret-file`, else `$CONDUIT_MCP_SECRET_FILE`), newest
   * first: the list-cursor secret (the first, through HKDF) and, unless `stateKeys` is given, the
   * keys sealing `requestState`. Absent → random per process.
   */
  readonly secrets?: readonly string[];
  /**
   * Serve over stdin/stdout instead of HTTP (`--stdio`): newline-delimited JSON-RPC, logs on
   * stderr, exit when stdin closes.
   */
  readonly stdio: boolean;
  /**
   * The user's module to serve (`serve ./my-server.js`), as given; absent → the demo tools.
   * See load-module.ts for what it may export.
   */
  readonly module?: string;
}

/** The `--oauth-*` flags, checked. */
export interface CliOAuth {
  readonly issuer: string;
  readonly jwksUrl: string;
  /** `--oauth-audience`: the canonical resource URI tokens must name. */
  readonly resource?: string;
  /** `--oauth-scopes a,b`: scopes every token must hold. */
  readonly scopes: readonly string[];
  /** `--oauth-authorization-server` (repeatable); default the issuer. */
  readonly authorizationServers?: readonly string[];
}

/** What the command line asks for. */
export type CliCommand = ServeCommand | { readonly kind: "help" } | { readonly kind: "version" };

/** The outcome of {@link parseCli}: a command, or a one-line message for stderr (exit code 2). */
export type CliParse =
  | { readonly ok: true; readonly command: CliCommand }
  | { readonly ok: false; readonly message: string };

/** Default TCP port of `conduit-mcp serve`. */
export const DEFAULT_PORT = 3000;
/** Default bind address of `conduit-mcp serve`. */
export const DEFAULT_HOST = "127.0.0.1";

/** Shortest static secret (the library refuses shorter ones too: src/http/authenticate.ts). */
const MIN_SECRET_BYTES = 16;

/** `setTimeout` clamps larger delays to 1 ms, so a timeout flag above this would misfire. */
const MAX_TIMER_MS = 2_147_483_647;

/** The `--help` text. */
export const USAGE = `Usage: conduit-mcp serve [MODULE] [options]

Serves MCP tools over Streamable HTTP at /mcp (or over stdio with --stdio): those of MODULE, a
JavaScript (or, with tsx installed, TypeScript) file exporting a server made by createMcpServer,
a default options object ({ tools, ... }), or tools (an array named "tools", or defineTool()
results under any name); without MODULE, the demo tools (echo, sleep, count, crunch, stubborn).

Options:
${usageOptions()}

Over HTTP, the first line on stdout is "conduit-mcp listening on http://HOST:PORT/mcp".
With --stdio, stdout carries only MCP messages.
SIGINT or SIGTERM closes the server gracefully. Exit codes: 0 ok, 1 runtime error, 2 bad usage
(a module that cannot be loaded or exports nothing to serve included).`;

const OPTIONS = PARSE_OPTIONS;

/**
 * Parses `argv` (without the node and script paths). `env` supplies `REDIS_URL` when `--redis`
 * is absent (main.ts passes `process.env`; the default keeps the function pure for tests).
 *
 * @example
 * ```ts
 * parseCli(["serve", "--port", "x"]);
 * // { ok: false, message: "--port must be an integer from 0 to 65535; got \"x\"" }
 * ```
 */
export function parseCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): CliParse {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // node:util throws TypeError with codes ERR_PARSE_ARGS_*; its message names the flag.
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { ok: true, command: { kind: "help" } };
  if (values.version) return { ok: true, command: { kind: "version" } };
  const [command, ...extra] = positionals;
  if (command === undefined) return { ok: false, message: "missing command (try: serve)" };
  if (command !== "serve") {
    return { ok: false, message: `unknown command ${JSON.stringify(command)} (try: serve)` };
  }
  if (extra.length > 1) {
    return { ok: false, message: `unexpected argument ${JSON.stringify(extra[1])}` };
  }
  try {
    const served = serveCommand(values, env);
    const module = extra[0];
    return { ok: true, command: module === undefined ? served : { ...served, module } };
  } catch (error) {
    if (error instanceof UsageProblem) return { ok: false, message: error.message };
    throw error;
  }
}

/** A bad flag value; caught in {@link parseCli} and turned into a message. */
class UsageProblem extends Error {}

function serveCommand(
  values: {
    host?: string | undefined;
    port?: string | undefined;
    sessions?: boolean | undefined;
    "require-session"?: boolean | undefined;
    token?: string[] | undefined;
    "token-file"?: string | undefined;
    "oauth-issuer"?: string | undefined;
    "oauth-jwks-url"?: string | undefined;
    "oauth-audience"?: string | undefined;
    "oauth-scopes"?: string | undefined;
    "oauth-authorization-server"?: string[] | undefined;
    "metrics-auth"?: boolean | undefined;
    "trust-proxy"?: string | undefined;
    "max-rows"?: string | undefined;
    "max-rows-per-scope"?: string | undefined;
    "row-ttl-ms"?: string | undefined;
    "max-tasks"?: string | undefined;
    "max-tasks-per-scope"?: string | undefined;
    "max-sessions-per-scope"?: string | undefined;
    "max-requests-per-scope"?: string | undefined;
    "max-requests"?: string | undefined;
    "stream-cancel-timeout"?: string | undefined;
    "close-grace"?: string | undefined;
    "drain-ms"?: string | undefined;
    "drain-delay-ms"?: string | undefined;
    metrics?: boolean | undefined;
    redis?: string | undefined;
    "redis-lease-ms"?: string | undefined;
    "redis-share-after-ms"?: string | undefined;
    "state-key-file"?: string | undefined;
    "secret-file"?: string | undefined;
    stdio?: boolean | undefined;
  },
  env: Readonly<Record<string, string | undefined>>,
): ServeCommand {
  const requireSession = values["require-session"] === true;
  const command: { -readonly [K in keyof ServeCommand]: ServeCommand[K] } = {
    kind: "serve",
    host: host(values.host ?? DEFAULT_HOST),
    port: values.port === undefined ? DEFAULT_PORT : integer("--port", values.port, 0, 65_535),
    // Requiring a session without minting any would refuse every request.
    sessions: values.sessions === true || requireSession,
    requireSession,
    tokens: tokens([
      ...(values.token ?? []),
      ...(values["token-file"] === undefined ? [] : tokenFile(values["token-file"])),
    ]),
    metrics: values.metrics === true,
    stdio: values.stdio === true,
  };
  if (command.stdio) {
    // Flags of the HTTP door would be silently ignored on stdio; a security flag (--token)
    // ignored without a word is worse than a refusal.
    const httpOnly = HTTP_ONLY_FLAGS.find((flag) => values[flag] !== undefined);
    if (httpOnly !== undefined) {
      throw new UsageProblem(`--${httpOnly} applies to HTTP only; it cannot be used with --stdio`);
    }
  }
  const oauth = oauthFlags(values);
  if (oauth !== undefined) command.oauth = oauth;
  if (values["metrics-auth"] === true) {
    if (!command.metrics) throw new UsageProblem("--metrics-auth needs --metrics");
    if (oauth === undefined && Object.keys(command.tokens).length === 0) {
      throw new UsageProblem("--metrics-auth needs --token, --token-file or --oauth-issuer");
    }
    command.metricsAuth = true;
  }
  if (values["trust-proxy"] !== undefined) command.trustProxy = trustProxy(values["trust-proxy"]);
  if (values["max-rows"] !== undefined)
    command.maxRows = rowLimit("--max-rows", values["max-rows"]);
  if (values["max-rows-per-scope"] !== undefined) {
    command.maxRowsPerScope = rowLimit("--max-rows-per-scope", values["max-rows-per-scope"]);
  }
  if (values["row-ttl-ms"] !== undefined) {
    command.rowTtlMs = integer("--row-ttl-ms", values["row-ttl-ms"], 1, MAX_TIMER_MS);
  }
  if (values["max-tasks"] !== undefined) {
    command.maxTasks = rowLimit("--max-tasks", values["max-tasks"]);
  }
  if (values["max-tasks-per-scope"] !== undefined) {
    command.maxTasksPerScope = rowLimit("--max-tasks-per-scope", values["max-tasks-per-scope"]);
  }
  const bound = (flag: string, text: string | undefined): number | undefined =>
    text === undefined ? undefined : integer(flag, text, 1, Number.MAX_SAFE_INTEGER);
  const sessionsPerScope = bound("--max-sessions-per-scope", values["max-sessions-per-scope"]);
  if (sessionsPerScope !== undefined) command.maxSessionsPerScope = sessionsPerScope;
  const perScope = bound("--max-requests-per-scope", values["max-requests-per-scope"]);
  if (perScope !== undefined) command.maxConcurrentRequestsPerScope = perScope;
  const total = bound("--max-requests", values["max-requests"]);
  if (total !== undefined) command.maxConcurrentRequests = total;
  if (values["stream-cancel-timeout"] !== undefined) {
    command.streamCancelTimeoutMs = integer(
      "--stream-cancel-timeout",
      values["stream-cancel-timeout"],
      1,
      MAX_TIMER_MS,
    );
  }
  if (values["close-grace"] !== undefined && values["drain-ms"] !== undefined) {
    throw new UsageProblem("--close-grace and --drain-ms are the same setting: give one of them");
  }
  if (values["close-grace"] !== undefined) {
    command.closeGraceMs = integer("--close-grace", values["close-grace"], 0, MAX_TIMER_MS);
  }
  if (values["drain-ms"] !== undefined) {
    command.closeGraceMs = integer("--drain-ms", values["drain-ms"], 0, MAX_TIMER_MS);
  }
  if (values["drain-delay-ms"] !== undefined) {
    command.closeDelayMs = integer("--drain-delay-ms", values["drain-delay-ms"], 0, MAX_TIMER_MS);
  }
  // The flag wins over the environment; an empty REDIS_URL counts as unset (a common shell idiom).
  if (values.redis !== undefined) command.redis = redisUrl("--redis", values.redis);
  else if (env.REDIS_URL !== undefined && env.REDIS_URL !== "") {
    command.redis = redisUrl("REDIS_URL", env.REDIS_URL);
  }
  if (values["redis-lease-ms"] !== undefined) {
    if (command.redis === undefined) {
      throw new UsageProblem("--redis-lease-ms needs --redis URL (or REDIS_URL)");
    }
    // The store renews every lease/3 ms and needs at least 3 (RedisCancellationStore leaseMs).
    command.redisLeaseMs = integer("--redis-lease-ms", values["redis-lease-ms"], 3, MAX_TIMER_MS);
  }
  if (values["redis-share-after-ms"] !== undefined) {
    if (command.redis === undefined) {
      throw new UsageProblem("--redis-share-after-ms needs --redis URL (or REDIS_URL)");
    }
    command.redisShareAfterMs = integer(
      "--redis-share-after-ms",
      values["redis-share-after-ms"],
      0,
      60_000,
    );
  }
  if (values["state-key-file"] !== undefined) {
    command.stateKeys = keyFile("--state-key-file", values["state-key-file"]);
  }
  // As with REDIS_URL: the flag wins, an empty variable counts as unset.
  const secretFile =
    values["secret-file"] ??
    (env.CONDUIT_MCP_SECRET_FILE === "" ? undefined : env.CONDUIT_MCP_SECRET_FILE);
  if (secretFile !== undefined) {
    const flag = values["secret-file"] === undefined ? "CONDUIT_MCP_SECRET_FILE" : "--secret-file";
    command.secrets = keyFile(flag, secretFile);
  }
  return command;
}

/** Most keys a `--state-key-file` may list (rotation needs two or three). */
const MAX_STATE_KEYS = 16;
/** Shortest key: 256 bits, as `inputRequired.keys` asks (src/protocol/asking/request-state.ts). */
const MIN_STATE_KEY_BYTES = 32;

/**
 * `--state-key-file PATH` or `--secret-file PATH`: one key a line, newest first; blank lines and
 * `#` comments skipped. A problem names the line number, never its content (it is a key).
 */
function keyFile(flag: string, path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageProblem(`${flag} ${show(path)} cannot be read (${String(code ?? "error")})`);
  }
  const keys: string[] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (Buffer.byteLength(line, "utf8") < MIN_STATE_KEY_BYTES) {
      throw new UsageProblem(
        `${flag} ${show(path)} line ${index + 1}: a key needs at least ${MIN_STATE_KEY_BYTES} bytes`,
      );
    }
    keys.push(line);
    if (keys.length > MAX_STATE_KEYS) {
      throw new UsageProblem(`${flag} ${show(path)} has more than ${MAX_STATE_KEYS} keys`);
    }
  }
  if (keys.length === 0) throw new UsageProblem(`${flag} ${show(path)} has no key`);
  return keys;
}

/** Decimal digits only: `Number()` would also accept "", " 1", "0x10", "1e3". */
function integer(flag: string, text: string, min: number, max: number): number {
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageProblem(`${flag} must be an integer from ${min} to ${max}; got ${show(text)}`);
  }
  return value;
}

/** A positive integer or `infinity` (`infinity` disables the bound). */
function rowLimit(flag: string, text: string): number {
  if (text.toLowerCase() === "infinity") return Number.POSITIVE_INFINITY;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageProblem(`${flag} must be a positive integer or "infinity"; got ${show(text)}`);
  }
  return value;
}

/**
 * A `redis://` or `rediss://` URL, checked before anything listens so a typo exits 2. The message
 * never echoes the value: a Redis URL may carry a password.
 */
function redisUrl(source: string, text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== "redis:" && url.protocol !== "rediss:") ||
    !url.hostname
  ) {
    throw new UsageProblem(`${source} must be a redis:// or rediss:// URL with a host`);
  }
  return text;
}

function host(text: string): string {
  // An IPv6 literal may be given bracketed, as in a URL; node:net wants it bare.
  const bare = /^\[(.*)\]$/.exec(text)?.[1] ?? text;
  if (bare.length === 0 || bare.length > 253 || /[\s/[\]@]/.test(bare)) {
    throw new UsageProblem(`--host must be a host name or IP address; got ${show(text)}`);
  }
  return bare;
}

/**
 * `ID=SECRET` pairs → `{ SECRET: ID }`. The secret goes in an `Authorization: Bearer` header, so
 * it must be visible ASCII without spaces; one secret cannot name two principals.
 */
function tokens(pairs: readonly string[]): Record<string, string> {
  const map: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const id = eq === -1 ? "" : pair.slice(0, eq);
    const secret = eq === -1 ? "" : pair.slice(eq + 1);
    if (id.length === 0 || secret.length === 0) {
      throw new UsageProblem("--token must be ID=SECRET with a non-empty ID and SECRET");
    }
    if (!/^[\x21-\x7e]+$/.test(secret)) {
      throw new UsageProblem(`--token ${show(id)}: SECRET must be visible ASCII without spaces`);
    }
    if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
      throw new UsageProblem(
        `--token ${show(id)}: SECRET must be at least ${MIN_SECRET_BYTES} bytes (a short secret can be guessed)`,
      );
    }
    if (Object.hasOwn(map, secret) && map[secret] !== id) {
      throw new UsageProblem(
        `--token: the same SECRET is given for ${show(map[secret])} and ${show(id)}`,
      );
    }
    map[secret] = id;
  }
  // Built on a null prototype so a secret spelled "__proto__" is a key like any other; spreading
  // copies it as an own property of an ordinary object.
  return { ...map };
}

/** Most lines read from a `--token-file`. */
const MAX_TOKEN_FILE_LINES = 10_000;

/**
 * `--token-file PATH`: one `ID=SECRET` a line; blank lines and `#` comments are skipped. A
 * problem names the line number, never its content (it holds a secret).
 */
function tokenFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageProblem(
      `--token-file ${show(path)} cannot be read (${String(code ?? "error")})`,
    );
  }
  const lines = text.split(/\r?\n/);
  if (lines.length > MAX_TOKEN_FILE_LINES) {
    throw new UsageProblem(
      `--token-file ${show(path)} has more than ${MAX_TOKEN_FILE_LINES} lines`,
    );
  }
  const pairs: string[] = [];
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0 || eq === line.length - 1) {
      throw new UsageProblem(`--token-file ${show(path)} line ${index + 1}: expected ID=SECRET`);
    }
    pairs.push(line);
  }
  if (pairs.length === 0)
    throw new UsageProblem(`--token-file ${show(path)} has no ID=SECRET line`);
  return pairs;
}

/** The `--oauth-*` flags, checked with the library's own rules (exit 2 instead of a crash). */
function oauthFlags(values: {
  "oauth-issuer"?: string | undefined;
  "oauth-jwks-url"?: string | undefined;
  "oauth-audience"?: string | undefined;
  "oauth-scopes"?: string | undefined;
  "oauth-authorization-server"?: string[] | undefined;
}): CliOAuth | undefined {
  const issuer = values["oauth-issuer"];
  const jwksUrl = values["oauth-jwks-url"];
  if (issuer === undefined && jwksUrl === undefined) {
    const stray = (["oauth-audience", "oauth-scopes", "oauth-authorization-server"] as const).find(
      (flag) => values[flag] !== undefined,
    );
    if (stray !== undefined)
      throw new UsageProblem(`--${stray} needs --oauth-issuer and --oauth-jwks-url`);
    return undefined;
  }
  if (issuer === undefined || jwksUrl === undefined) {
    throw new UsageProblem("--oauth-issuer and --oauth-jwks-url go together");
  }
  const url = (flag: string, text: string): string => {
    try {
      serviceUrl(flag, text);
    } catch {
      throw new UsageProblem(
        `${flag} must be an https URL (http only on a loopback host); got ${show(text)}`,
      );
    }
    return text;
  };
  const oauth: { -readonly [K in keyof CliOAuth]: CliOAuth[K] } = {
    issuer: url("--oauth-issuer", issuer),
    jwksUrl: url("--oauth-jwks-url", jwksUrl),
    scopes: [],
  };
  const audience = values["oauth-audience"];
  if (audience !== undefined) {
    try {
      oauth.resource = canonicalResource("--oauth-audience", audience);
    } catch {
      throw new UsageProblem(
        `--oauth-audience must be an https URL without query or fragment (http only on a loopback host); got ${show(audience)}`,
      );
    }
  }
  const scopesText = values["oauth-scopes"];
  if (scopesText !== undefined) {
    const scopes = scopeList(scopesText.split(",").map((scope) => scope.trim()));
    if (scopes === null || scopes.length === 0) {
      throw new UsageProblem(
        `--oauth-scopes must be comma-separated scope names; got ${show(scopesText)}`,
      );
    }
    oauth.scopes = scopes;
  }
  const servers = values["oauth-authorization-server"];
  if (servers !== undefined) {
    oauth.authorizationServers = servers.map((server) =>
      url("--oauth-authorization-server", server),
    );
  }
  return oauth;
}

/** Validated here with the library's own parser so a bad value exits 2 instead of crashing. */
function trustProxy(text: string): number | string {
  const option = /^\d+$/.test(text.trim()) ? Number(text.trim()) : text;
  try {
    parseTrustProxy(option);
  } catch (error) {
    if (error instanceof InvalidOptionError) {
      throw new UsageProblem(
        `--trust-proxy must be a hop count or comma-separated IP addresses / CIDR ranges; got ${show(text)}`,
      );
    }
    throw error;
  }
  return option;
}

/** Quotes a user value for a message, bounded so a huge argument cannot flood the terminal. */
function show(value: string | undefined): string {
  return JSON.stringify((value ?? "").slice(0, 80));
}
