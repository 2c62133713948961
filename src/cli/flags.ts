/**
 * The flags of `conduit-mcp serve`, declared once: how node:util's parseArgs reads each, what it
 * does, its default and the environment variable it falls back to. The `--help` text
 * ({@link usage}) and docs/reference/cli.md (`npm run docs:options`) are written from this table;
 * a test fails when a flag has no description or the reference is stale.
 */

/** One flag of `conduit-mcp serve`. */
export interface CliFlag {
  /** `"string"` flags take a value, `"boolean"` ones do not. */
  readonly type: "string" | "boolean";
  /** What the value is, as `--help` shows it (`MS`, `N|infinity`); string flags only. */
  readonly value?: string;
  readonly multiple?: true;
  readonly short?: string;
  /** What it does: one or two sentences. */
  readonly description: string;
  /** The default when the flag is absent, as `--help` shows it; absent: off / none. */
  readonly default?: string;
  /** The environment variable read when the flag is absent (an empty one counts as unset). */
  readonly env?: string;
  /** The HTTP door only: refused with `--stdio`. */
  readonly httpOnly?: true;
}

/** Every flag, in `--help` order. */
export const CLI_FLAGS = {
  host: {
    type: "string",
    value: "HOST",
    description: "interface to bind",
    default: "127.0.0.1",
    httpOnly: true,
  },
  port: {
    type: "string",
    value: "PORT",
    description: "TCP port, 0 picks a free one",
    default: "3000",
    httpOnly: true,
  },
  sessions: { type: "boolean", description: "mint Mcp-Session-Id on initialize", httpOnly: true },
  "require-session": {
    type: "boolean",
    description: "reject requests without a session (implies --sessions)",
    httpOnly: true,
  },
  token: {
    type: "string",
    value: "ID=SECRET",
    multiple: true,
    description:
      'accept "Authorization: Bearer SECRET" as principal ID (repeatable; tokens then scope cancellation per principal; SECRET at least 16 bytes)',
    httpOnly: true,
  },
  "token-file": {
    type: "string",
    value: "PATH",
    description:
      "read ID=SECRET lines from PATH (blank lines and # comments ignored), so secrets stay out of the process list",
    httpOnly: true,
  },
  "oauth-issuer": {
    type: "string",
    value: "URL",
    description: "accept OAuth access tokens (JWT) issued by URL (exact iss)",
    httpOnly: true,
  },
  "oauth-jwks-url": {
    type: "string",
    value: "URL",
    description: "the issuer's JWKS (https; http only on loopback)",
    httpOnly: true,
  },
  "oauth-audience": {
    type: "string",
    value: "URI",
    description:
      "this server's canonical URI, the audience tokens must name (required on a public --host)",
    default: "the endpoint URL",
    httpOnly: true,
  },
  "oauth-scopes": {
    type: "string",
    value: "a,b",
    description: "scopes every token must hold (403 insufficient_scope)",
    httpOnly: true,
  },
  "oauth-authorization-server": {
    type: "string",
    value: "URL",
    multiple: true,
    description: "published in the protected resource metadata (repeatable)",
    default: "the issuer",
    httpOnly: true,
  },
  "metrics-auth": {
    type: "boolean",
    description: "GET /metrics needs the same credentials as /mcp",
    httpOnly: true,
  },
  "trust-proxy": {
    type: "string",
    value: "HOPS|CIDR[,CIDR]",
    description:
      "read X-Forwarded-For from this many proxies, or from proxies in these ranges (also: loopback, linklocal, uniquelocal)",
    httpOnly: true,
  },
  "max-rows": {
    type: "string",
    value: "N|infinity",
    description: "global cap of cancellation rows",
    default: "10000",
  },
  "max-rows-per-scope": {
    type: "string",
    value: "N|infinity",
    description: "cancellation rows per tenant scope",
    default: "256",
  },
  "row-ttl-ms": {
    type: "string",
    value: "MS",
    description:
      "cancellation rows older than this are removed by the janitor, which runs at least every MS",
    default: "300000",
  },
  "max-tasks": {
    type: "string",
    value: "N|infinity",
    description: "global cap of tasks, running or finished",
    default: "10000",
  },
  "max-tasks-per-scope": {
    type: "string",
    value: "N|infinity",
    description:
      "tasks one client may hold; a finished one makes room, beyond that a new task is refused",
    default: "100",
  },
  "max-sessions-per-scope": {
    type: "string",
    value: "N",
    description:
      "sessions one client (principal or IP bucket) may hold; beyond, initialize gets 429",
    default: "64",
  },
  "max-requests-per-scope": {
    type: "string",
    value: "N",
    description: "requests one client may have running; beyond, 429",
    default: "64",
  },
  "max-requests": {
    type: "string",
    value: "N",
    description: "requests running in all; beyond, 503",
    default: "10000",
  },
  "stream-cancel-timeout": {
    type: "string",
    value: "MS",
    description: "how long a cancelled tool may run before it is abandoned",
    default: "5000",
  },
  "close-grace": {
    type: "string",
    value: "MS",
    description: "on SIGINT/SIGTERM, how long in-flight calls may finish before they are cancelled",
    default: "5000",
  },
  "drain-ms": {
    type: "string",
    value: "MS",
    description: "the same as --close-grace (the deploy guide's name)",
    default: "5000",
  },
  "drain-delay-ms": {
    type: "string",
    value: "MS",
    description:
      "on SIGINT/SIGTERM, how long the node first goes on serving with GET /ready answering 503, so a load balancer takes it out of rotation before it stops admitting",
    default: "0",
  },
  metrics: {
    type: "boolean",
    description: "serve Prometheus metrics at GET /metrics",
    httpOnly: true,
  },
  redis: {
    type: "string",
    value: "URL",
    description:
      "share cancellations and in-flight requests (and, with --sessions, sessions) with every node on this Redis (redis:// or rediss://; needs the optional ioredis package). --max-rows and --max-rows-per-scope then bound the shared table; tasks are shared too (--max-tasks, --max-tasks-per-scope)",
    default: "$REDIS_URL when set, else memory",
    env: "REDIS_URL",
  },
  "redis-lease-ms": {
    type: "string",
    value: "MS",
    description:
      "this node's lease in Redis, renewed every MS/3; entries of a node that died without closing go, and its running tasks turn failed, within about two leases (needs --redis)",
    default: "15000",
  },
  "redis-share-after-ms": {
    type: "string",
    value: "MS",
    description:
      "how long a call runs before its in-flight entry goes to Redis; shorter calls cost no Redis round trip (0..60000; needs --redis)",
    default: "50",
  },
  "state-key-file": {
    type: "string",
    value: "PATH",
    description:
      "keys sealing the requestState of input_required results (ctx.elicit/sample/roots), one a line, newest first, each at least 32 bytes; give every node the same file so a retry can reach any of them",
    default: "a random key per process",
  },
  "secret-file": {
    type: "string",
    value: "PATH",
    description:
      "the secrets every node behind one load balancer shares, in the format of --state-key-file: the list-cursor secret (from the first line) and, without --state-key-file, the requestState keys, so a next page or a retry may reach any node (required with --redis on a non-loopback --host)",
    default: "$CONDUIT_MCP_SECRET_FILE when set, else random per process",
    env: "CONDUIT_MCP_SECRET_FILE",
  },
  stdio: {
    type: "boolean",
    description:
      "serve over stdin/stdout (one client: the process that started this one) instead of HTTP; logs go to stderr and the process exits when stdin closes",
  },
  help: { type: "boolean", short: "h", description: "show this help" },
  version: { type: "boolean", short: "v", description: "show the version" },
} as const satisfies Readonly<Record<string, CliFlag>>;

/** A flag's name. */
export type CliFlagName = keyof typeof CLI_FLAGS;

/** The table as node:util's parseArgs takes it (type, multiple, short). */
export const PARSE_OPTIONS = Object.fromEntries(
  Object.entries(CLI_FLAGS).map(([name, flag]: [string, CliFlag]) => [
    name,
    {
      type: flag.type,
      ...(flag.multiple === true ? { multiple: true } : {}),
      ...(flag.short === undefined ? {} : { short: flag.short }),
    },
  ]),
) as unknown as {
  readonly [K in CliFlagName]: Pick<
    (typeof CLI_FLAGS)[K],
    Extract<keyof (typeof CLI_FLAGS)[K], "type" | "multiple" | "short">
  >;
};

/** The flags of the HTTP door (refused with `--stdio`). */
export const HTTP_ONLY_FLAGS = (Object.keys(CLI_FLAGS) as CliFlagName[]).filter(
  (name) => (CLI_FLAGS[name] as CliFlag).httpOnly === true,
) as readonly Exclude<CliFlagName, "help" | "version">[];

/** How a flag is written in `--help`: `-h, --help`, `--port PORT`. */
export function flagSpelling(name: string, flag: CliFlag): string {
  const long = `--${name}${flag.value === undefined ? "" : ` ${flag.value}`}`;
  return flag.short === undefined ? long : `-${flag.short}, ${long}`;
}

const COLUMN = 33;
const WIDTH = 95;

/** The options part of `--help`: every flag, its description and default, wrapped. */
export function usageOptions(): string {
  const lines: string[] = [];
  for (const [name, flag] of Object.entries(CLI_FLAGS) as [string, CliFlag][]) {
    const spelling = `  ${flagSpelling(name, flag)}`;
    const text =
      flag.default === undefined
        ? flag.description
        : `${flag.description} (default ${flag.default})`;
    const wrapped = wrap(text, WIDTH - COLUMN);
    if (spelling.length <= COLUMN - 1) {
      lines.push(`${spelling.padEnd(COLUMN)}${wrapped[0]}`);
    } else {
      lines.push(spelling, `${" ".repeat(COLUMN)}${wrapped[0]}`);
    }
    for (const line of wrapped.slice(1)) lines.push(`${" ".repeat(COLUMN)}${line}`);
  }
  return lines.join("\n");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}
