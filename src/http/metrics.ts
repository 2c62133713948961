/**
 * Server metrics in the Prometheus text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/; README, "Server options"). Counters live in
 * memory, per server instance; the gauges are read from the registry at scrape time. Label values
 * are bounded: methods outside the known set count as `other`, tools are the server's own.
 */
import diagnosticsChannel from "node:diagnostics_channel";

import type { CancellationRegistry } from "../cancellation/index.js";
import { ChannelName, type RequestCancelledMessage } from "../diagnostics.js";
import type { DispatchObserver, HandlerEnd, HandlerInfo, ToolOutcome } from "../protocol/index.js";

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
]);

const CANCELLATION_SOURCES = ["notification", "disconnect", "library"] as const;
const TOOL_OUTCOMES: readonly ToolOutcome[] = ["ok", "error", "cancelled", "killed"];
/** Every method whose handler runs tracked and cancellable, like a tool. */
const HANDLER_METHODS = ["tools/call", "resources/read", "prompts/get", "completion/complete"];

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
  private readonly handlerCalls = new Map<string, Record<ToolOutcome, number>>(
    HANDLER_METHODS.map((method) => [method, { ok: 0, error: 0, cancelled: 0, killed: 0 }]),
  );
  private readonly cancellations: Record<string, number> = {
    notification: 0,
    disconnect: 0,
    library: 0,
  };
  private subscribed = false;
  /** Bound once: subscribe/unsubscribe need the same function. */
  private readonly onCancelled = (message: unknown): void => {
    const source = (message as RequestCancelledMessage).source ?? "library";
    if (source in this.cancellations) {
      this.cancellations[source] = (this.cancellations[source] ?? 0) + 1;
    }
  };

  constructor(toolNames: readonly string[]) {
    for (const name of toolNames) {
      this.toolCalls.set(name, { ok: 0, error: 0, cancelled: 0, killed: 0 });
    }
  }

  /** Counts one answered request (`method` already bounded by {@link methodLabel}). */
  readonly recordRequest = (method: string, status: number): void => {
    let byStatus = this.requests.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.requests.set(method, byStatus);
    }
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  };

  toolCall(tool: string, outcome: ToolOutcome): void {
    const counts = this.toolCalls.get(tool);
    if (counts !== undefined) counts[outcome]++;
  }

  handlerEnded(info: HandlerInfo, end: HandlerEnd): void {
    const counts = this.handlerCalls.get(info.method);
    if (counts !== undefined) counts[end.outcome]++;
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
          `conduit_mcp_handler_calls_total{method="${method}",outcome="${outcome}"} ${counts[outcome]}`,
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
    return `${lines.join("\n")}\n`;
  }
}

/** Prometheus label escaping: backslash, double quote, newline. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}
