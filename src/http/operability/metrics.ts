/**
 * Server metrics in the Prometheus text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/; every series is described in
 * docs/observability.md). Counters and histograms live in memory, per server instance; the
 * gauges are read from their sources at scrape time. Label values are bounded: methods outside
 * the known set count as `other`, tools outside the server's own as `other`, scopes only by
 * kind (`principal`, `ip`, `session`), never by tenant.
 */
import diagnosticsChannel from "node:diagnostics_channel";

import type { CancellationRegistry } from "../../cancellation/index.js";
import { ChannelName, type RequestCancelledMessage } from "../../diagnostics.js";
import { GLOBAL_LIMIT, type LimitOutcome } from "../../protocol/asking/index.js";
import type {
  DispatchObserver,
  HandlerEnd,
  HandlerInfo,
  ToolOutcome,
} from "../../protocol/index.js";
import type { ExchangeLimits } from "../exchange.js";
import { escapeLabel, Histogram } from "./histogram.js";
import type { Readiness } from "./readiness.js";

/** Methods counted under their own name in `conduit_mcp_requests_total`; others are `other`. */
const METHOD_LABELS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "notifications/initialized",
  "notifications/cancelled",
  "server/discover",
  "resources/subscribe",
  "resources/unsubscribe",
  "subscriptions/listen",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "tasks/update",
]);

const CANCELLATION_SOURCES = ["notification", "disconnect", "library", "timeout"] as const;
const TOOL_OUTCOMES: readonly ToolOutcome[] = ["ok", "error", "cancelled", "killed"];
/** Every method whose handler runs tracked and cancellable, like a tool. */
const HANDLER_METHODS = ["tools/call", "resources/read", "prompts/get", "completion/complete"];

/** The label of a tool the server did not register (its name is the client's text). */
const OTHER = "other";
/** Scope kinds, by the prefix of the scope (identity/scope.ts); anything else is `other`. */
const SCOPE_KINDS = ["principal", "ip", "session", "other"] as const;
const LIMITS = ["scope", "global"] as const;

/** The index of a scope's kind in {@link SCOPE_KINDS}, from its first character. */
function scopeKind(scope: string): number {
  if (scope.startsWith("principal:")) return 0;
  if (scope.startsWith("ip:")) return 1;
  if (scope.startsWith("session:")) return 2;
  return 3;
}

/** Where the gauges are read from at scrape time (set once the server built them). */
export interface MetricsSources {
  readonly registry: CancellationRegistry;
  /** Units held per scope: requests by origin (principal, IP), by session, SSE streams. */
  readonly limits: ExchangeLimits;
  /** Readiness: draining, and whether the shared stores reach Redis. */
  readonly readiness: Readiness | null;
  /** The session store (null without sessions). Its count may cover every node (Redis). */
  readonly sessions: { size(): Promise<number> } | null;
  /** The task store (null without tasks). */
  readonly tasks: {
    size(): Promise<number>;
    countByStatus?(): Promise<Readonly<Record<string, number>> | null>;
  } | null;
  /** Open `subscriptions/listen` listeners of this node. */
  readonly listeners: { readonly size: number } | null;
  /** Standalone GET streams of sessions open on this node. */
  readonly streams: { readonly size: number } | null;
  /** Server-to-client requests (elicitation, sampling, roots) waiting for an answer here. */
  readonly pendingAsks: { readonly size: number } | null;
}

/**
 * The bounded label for a JSON-RPC method (`none` when the body had no usable method).
 *
 * @example
 * ```ts
 * methodLabel("tools/call"); // "tools/call"
 * methodLabel("x".repeat(10_000)); // "other"
 * ```
 */
export function methodLabel(method: string | null): string {
  if (method === null) return "none";
  return METHOD_LABELS.has(method) ? method : "other";
}

/**
 * Counters and their rendering.
 *
 * @example
 * ```ts
 * const metrics = new ServerMetrics(["echo"]);
 * metrics.subscribe();
 * res.end(await metrics.render(registry));
 * ```
 */
export class ServerMetrics implements DispatchObserver {
  private readonly requests = new Map<string, Map<number, number>>();
  private readonly toolCalls = new Map<string, Record<ToolOutcome, number>>();
  /** By method only: a resource's name is its URI, and template URIs are unbounded. */
  private readonly handlerCalls = new Map<string, Record<ToolOutcome, number>>();
  private readonly cancellations: Record<string, number> = {
    notification: 0,
    disconnect: 0,
    library: 0,
    timeout: 0,
  };
  /** Refusals (429/503), by scope kind × bound: `kind * 2 + (global ? 1 : 0)`. */
  private readonly refusals = new Float64Array(SCOPE_KINDS.length * LIMITS.length);
  /** Refusals by the rate limits, by scope kind. */
  private readonly rateRefusals = new Float64Array(SCOPE_KINDS.length);
  private readonly requestSeconds = new Histogram(
    "conduit_mcp_request_duration_seconds",
    "Time from a request's arrival to its answer's end (an SSE answer: its last event), by JSON-RPC method.",
    "method",
    [...METHOD_LABELS, "other", "none"],
  );
  private readonly handlerSeconds: Histogram;
  private readonly toolSeconds: Histogram;
  private sources: MetricsSources | null = null;
  private subscribed = false;
  /** Bound once: subscribe/unsubscribe need the same function. */
  private readonly onCancelled = (message: unknown): void => {
    const source = (message as RequestCancelledMessage).source ?? "library";
    if (source in this.cancellations) {
      this.cancellations[source] = (this.cancellations[source] ?? 0) + 1;
    }
  };

  /**
   * @param toolNames - the tools counted by name (others: `other`).
   * @param extensionMethods - the methods of the server's extensions whose handlers run as
   *   handler calls: counted by method beside the built-in ones (the server's own names, bounded).
   */
  constructor(toolNames: readonly string[], extensionMethods: readonly string[] = []) {
    const handlerMethods = [...new Set([...HANDLER_METHODS, ...extensionMethods])];
    for (const method of handlerMethods) {
      this.handlerCalls.set(method, { ok: 0, error: 0, cancelled: 0, killed: 0 });
    }
    this.handlerSeconds = new Histogram(
      "conduit_mcp_handler_duration_seconds",
      "Time a tracked handler ran (tools, resource reads, prompts, completions, extension methods), by method.",
      "method",
      handlerMethods,
    );
    for (const name of toolNames) {
      this.toolCalls.set(name, { ok: 0, error: 0, cancelled: 0, killed: 0 });
    }
    this.toolSeconds = new Histogram(
      "conduit_mcp_tool_duration_seconds",
      "Time a tool's handler ran, by tool (tools the server did not register at start: other).",
      "tool",
      [...this.toolCalls.keys(), OTHER],
    );
  }

  /** Gives the gauges their sources (the server, once it built them). */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  /**
   * Counts one answered request (`method` already bounded by {@link methodLabel}) and its
   * duration since `startedAt` (`performance.now()` when it arrived).
   */
  readonly recordRequest = (method: string, status: number, startedAt: number): void => {
    let byStatus = this.requests.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.requests.set(method, byStatus);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.requestSeconds.observe(method, (performance.now() - startedAt) / 1000);
  };

  /** Counts a request refused by the rate limits (`rateLimits`) under its bucket's kind. */
  rateLimited(bucket: string): void {
    const kind = scopeKind(bucket);
    this.rateRefusals[kind] = (this.rateRefusals[kind] as number) + 1;
  }

  /** Counts a 429/503 refusal under the kind of the scope at its bound (never the scope). */
  refused(scope: string, outcome: LimitOutcome): void {
    const index = scopeKind(scope) * 2 + (outcome === GLOBAL_LIMIT ? 1 : 0);
    this.refusals[index] = (this.refusals[index] as number) + 1;
  }

  toolCall(tool: string, outcome: ToolOutcome, seconds: number): void {
    const counts = this.toolCalls.get(tool);
    if (counts !== undefined) counts[outcome]++;
    this.toolSeconds.observe(counts === undefined ? OTHER : tool, seconds);
  }

  handlerEnded(info: HandlerInfo, end: HandlerEnd, seconds: number): void {
    const counts = this.handlerCalls.get(info.method);
    if (counts === undefined) return;
    counts[end.outcome]++;
    this.handlerSeconds.observe(info.method, seconds);
  }

  /** Starts counting cancellations from `conduit-mcp:request:cancelled` (by `source`). */
  subscribe(): void {
    if (this.subscribed) return;
    this.subscribed = true;
    diagnosticsChannel.subscribe(ChannelName.requestCancelled, this.onCancelled);
  }

  /** Stops counting (server close). */
  unsubscribe(): void {
    if (!this.subscribed) return;
    this.subscribed = false;
    diagnosticsChannel.unsubscribe(ChannelName.requestCancelled, this.onCancelled);
  }

  /** The exposition text. */
  async render(registry: CancellationRegistry): Promise<string> {
    const rows = await registry.size();
    const gauges = await this.renderGauges();
    const lines: string[] = [
      "# HELP conduit_mcp_in_flight_requests Requests tracked and running in this process.",
      "# TYPE conduit_mcp_in_flight_requests gauge",
      `conduit_mcp_in_flight_requests ${registry.inFlightCount}`,
      "# HELP conduit_mcp_cancellation_rows Cancellation rows held by the store.",
      "# TYPE conduit_mcp_cancellation_rows gauge",
      `conduit_mcp_cancellation_rows ${rows}`,
      "# HELP conduit_mcp_cancellations_total Cancellations recorded, by cause.",
      "# TYPE conduit_mcp_cancellations_total counter",
    ];
    for (const source of CANCELLATION_SOURCES) {
      lines.push(
        `conduit_mcp_cancellations_total{source="${source}"} ${this.cancellations[source]}`,
      );
    }
    lines.push(
      "# HELP conduit_mcp_tool_calls_total Tool calls, by tool and outcome.",
      "# TYPE conduit_mcp_tool_calls_total counter",
    );
    for (const [tool, counts] of this.toolCalls) {
      for (const outcome of TOOL_OUTCOMES) {
        lines.push(
          `conduit_mcp_tool_calls_total{tool="${escapeLabel(tool)}",outcome="${outcome}"} ${counts[outcome]}`,
        );
      }
    }
    lines.push(
      "# HELP conduit_mcp_handler_calls_total Tracked handler runs (tools, resource reads, prompts, completions), by method and outcome.",
      "# TYPE conduit_mcp_handler_calls_total counter",
    );
    for (const [method, counts] of this.handlerCalls) {
      for (const outcome of TOOL_OUTCOMES) {
        lines.push(
          `conduit_mcp_handler_calls_total{method="${escapeLabel(method)}",outcome="${outcome}"} ${counts[outcome]}`,
        );
      }
    }
    lines.push(
      "# HELP conduit_mcp_requests_total HTTP requests to the MCP endpoint, by JSON-RPC method and HTTP status.",
      "# TYPE conduit_mcp_requests_total counter",
    );
    for (const [method, byStatus] of this.requests) {
      for (const [status, count] of byStatus) {
        lines.push(
          `conduit_mcp_requests_total{method="${escapeLabel(method)}",status="${status}"} ${count}`,
        );
      }
    }
    lines.push(
      "# HELP conduit_mcp_refused_total Requests refused as busy (429 at a scope's bound, 503 at the global one), by scope kind and bound.",
      "# TYPE conduit_mcp_refused_total counter",
    );
    for (let kind = 0; kind < SCOPE_KINDS.length; kind++) {
      for (let limit = 0; limit < LIMITS.length; limit++) {
        lines.push(
          `conduit_mcp_refused_total{kind="${SCOPE_KINDS[kind]}",limit="${LIMITS[limit]}"} ${this.refusals[kind * 2 + limit]}`,
        );
      }
    }
    lines.push(
      "# HELP conduit_mcp_rate_limited_total Requests refused by the rate limits (429), by scope kind of the bucket.",
      "# TYPE conduit_mcp_rate_limited_total counter",
    );
    for (let kind = 0; kind < SCOPE_KINDS.length; kind++) {
      lines.push(
        `conduit_mcp_rate_limited_total{kind="${SCOPE_KINDS[kind]}"} ${this.rateRefusals[kind]}`,
      );
    }
    this.requestSeconds.render(lines);
    this.handlerSeconds.render(lines);
    this.toolSeconds.render(lines);
    lines.push(...gauges);
    return `${lines.join("\n")}\n`;
  }

  /** The gauges read from {@link MetricsSources} (none before {@link attach}). */
  private async renderGauges(): Promise<string[]> {
    const sources = this.sources;
    if (sources === null) return [];
    const lines: string[] = [
      "# HELP conduit_mcp_scope_in_flight Request units held now, by scope kind (requests count under their principal or IP, and under their session too).",
      "# TYPE conduit_mcp_scope_in_flight gauge",
    ];
    const held = new Float64Array(SCOPE_KINDS.length);
    const count = (scope: string, units: number): void => {
      const kind = scopeKind(scope);
      held[kind] = (held[kind] as number) + units;
    };
    sources.limits.requests.forEachHeld(count);
    sources.limits.sessionRequests.forEachHeld(count);
    for (let kind = 0; kind < SCOPE_KINDS.length; kind++) {
      lines.push(`conduit_mcp_scope_in_flight{kind="${SCOPE_KINDS[kind]}"} ${held[kind]}`);
    }
    const readiness = sources.readiness;
    const reachable = readiness === null || readiness.storesReachable ? 1 : 0;
    const ready = readiness === null || readiness.state === "ready" ? 1 : 0;
    const draining = readiness?.state === "draining" ? 1 : 0;
    lines.push(
      "# HELP conduit_mcp_store_reachable 1 while every shared store reaches its service (Redis); 0 during an outage. Always 1 on memory stores.",
      "# TYPE conduit_mcp_store_reachable gauge",
      `conduit_mcp_store_reachable ${reachable}`,
      "# HELP conduit_mcp_ready 1 while GET /ready answers 200 (reachable and not draining), else 0.",
      "# TYPE conduit_mcp_ready gauge",
      `conduit_mcp_ready ${ready}`,
      "# HELP conduit_mcp_draining 1 once the server began to close (SIGTERM in the CLI).",
      "# TYPE conduit_mcp_draining gauge",
      `conduit_mcp_draining ${draining}`,
    );
    gauge(
      lines,
      "conduit_mcp_listeners",
      "Open subscriptions/listen listeners on this node.",
      sources.listeners?.size ?? 0,
    );
    gauge(
      lines,
      "conduit_mcp_session_streams",
      "Standalone GET streams of sessions open on this node.",
      sources.streams?.size ?? 0,
    );
    gauge(
      lines,
      "conduit_mcp_pending_asks",
      "Server-to-client requests (elicitation, sampling, roots) waiting for their answer on this node.",
      sources.pendingAsks?.size ?? 0,
    );
    // A store that cannot count now (Redis away) leaves its series out of this scrape: the Redis
    // stores answer a failed count with 0, which a dashboard would read as "no sessions".
    const countable = readiness === null || readiness.storesReachable;
    const sessions = countable
      ? await countOrNull(sources.sessions?.size.bind(sources.sessions))
      : null;
    if (sessions !== null) {
      gauge(
        lines,
        "conduit_mcp_sessions",
        "Sessions held by the session store (with Redis: by every node).",
        sessions,
      );
    }
    const byStatus = countable
      ? await countOrNull(sources.tasks?.countByStatus?.bind(sources.tasks))
      : null;
    if (byStatus !== null) {
      lines.push(
        "# HELP conduit_mcp_tasks_by_status Tasks held by the task store, by status (with Redis: by every node).",
        "# TYPE conduit_mcp_tasks_by_status gauge",
      );
      for (const [status, count] of Object.entries(byStatus)) {
        lines.push(`conduit_mcp_tasks_by_status{status="${status}"} ${count}`);
      }
    }
    const tasks = countable ? await countOrNull(sources.tasks?.size.bind(sources.tasks)) : null;
    if (tasks !== null) {
      gauge(
        lines,
        "conduit_mcp_tasks",
        "Tasks held by the task store (with Redis: by every node).",
        tasks,
      );
    }
    return lines;
  }
}

function gauge(lines: string[], name: string, help: string, value: number): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
}

/** What a store counted, or null when it cannot count now (it threw: Redis away) or has no count. */
async function countOrNull<T>(count: (() => Promise<T | null>) | undefined): Promise<T | null> {
  if (count === undefined) return null;
  try {
    return await count();
  } catch {
    return null;
  }
}
