/**
 * The observability pack against a real server on 127.0.0.1 (docs/observability.md): calls
 * through the official 1.x client (a session, a tool call, a task, a call refused at its scope's
 * bound), then `GET /metrics` is scraped and parsed. Every documented series must be exposed with
 * its documented type, label values stay bounded (no tenant, no address, no session id), the
 * histograms are consistent, and every series the Grafana dashboard and the alert rules use is
 * documented and exposed, so neither can rot. `promtool check metrics` lints the scraped text
 * when promtool is installed (Debian `prometheus`, .ci/apt.d/prometheus.txt).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parse as parseYaml } from "yaml";

import { countTool, echoTool, sleepTool } from "../../src/cli/demo-tools.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

const root = new URL("../../", import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), "utf8");

/** One documented series: `| \`name\` | type | labels | meaning |` rows of the Series table. */
interface Documented {
  readonly name: string;
  readonly type: string;
  readonly labels: readonly string[];
}

function documentedSeries(): Documented[] {
  const rows: Documented[] = [];
  for (const line of read("docs/observability.md").split("\n")) {
    const match = /^\| `(conduit_mcp_\w+)` \| (counter|gauge|histogram) \| ([^|]*) \|/.exec(line);
    if (match === null) continue;
    const labels = [...(match[3] as string).matchAll(/`(\w+)`/g)].map((m) => m[1] as string);
    rows.push({ name: match[1] as string, type: match[2] as string, labels });
  }
  return rows;
}

/** A parsed exposition: TYPE by family, samples by series name. */
interface Scrape {
  readonly types: Map<string, string>;
  readonly samples: Array<{ name: string; labels: Record<string, string>; value: number }>;
}

/** Parses the text format (https://prometheus.io/docs/instrumenting/exposition_formats/). */
function parseExposition(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Scrape["samples"] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) {
      assert.ok(!types.has(type[1] as string), `TYPE of ${type[1]} given twice`);
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(sample !== null, `not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (sample[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    const value = Number(sample[3]);
    assert.ok(!Number.isNaN(value), `not a number: ${line}`);
    samples.push({ name: sample[1] as string, labels, value });
  }
  return { types, samples };
}

function value(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = scrape.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found !== undefined, `${name}${JSON.stringify(labels)} is exposed`);
  return found.value;
}

/** The `conduit_mcp_*` names a PromQL expression uses, histogram suffixes taken off. */
function seriesIn(expr: string, histograms: ReadonlySet<string>): string[] {
  return [...expr.matchAll(/conduit_mcp_\w+/g)].map(([name]) => {
    const family = name.replace(/_(bucket|sum|count)$/, "");
    return histograms.has(family) ? family : name;
  });
}

describe("metrics scrape (docs/observability.md)", () => {
  let server: McpServer;
  let url: string;
  let scrape: Scrape;
  let text: string;
  let sessionId = "";
  const documented = documentedSeries();

  before(async () => {
    server = createMcpServer({
      name: "scrape",
      version: "1.0.0",
      tools: [echoTool, sleepTool, countTool],
      sessions: true,
      tasks: {},
      metrics: true,
      // One request at a time per scope, so a second concurrent call is refused (429).
      maxConcurrentRequestsPerScope: 1,
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
    const client = new Client({ name: "scrape-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    try {
      sessionId = transport.sessionId ?? "";
      await client.listTools();
      await client.callTool({ name: "echo", arguments: { text: "hi" } });
      // A task, run to its result.
      let result: unknown;
      for await (const message of client.experimental.tasks.callToolStream({
        name: "count",
        arguments: { to: 2, intervalMs: 10 },
      })) {
        if (message.type === "result") result = message.result;
        if (message.type === "error") throw message.error;
      }
      assert.ok(result !== undefined, "the task ran to its result");
      // A refused call: the scope's one unit is held by a running sleep.
      const sleeping = client.callTool({ name: "sleep", arguments: { ms: 300 } });
      await until(() => server.registry.inFlightCount === 1, 5_000, "the sleep to run");
      await assert.rejects(client.callTool({ name: "echo", arguments: { text: "refused" } }));
      await sleeping;
      await until(() => server.registry.inFlightCount === 0, 5_000, "the sleep to end");
    } finally {
      await client.close();
    }
    text = await (await fetch(new URL("/metrics", url))).text();
    scrape = parseExposition(text);
  });

  after(async () => {
    await server?.close();
  });

  test("the docs list the series (the table parses)", () => {
    assert.ok(documented.length >= 19, `${documented.length} documented series`);
  });

  test("every documented series is exposed, with its documented type and labels", () => {
    for (const series of documented) {
      assert.equal(scrape.types.get(series.name), series.type, `TYPE of ${series.name}`);
      const sampleName = series.type === "histogram" ? `${series.name}_count` : series.name;
      const samples = scrape.samples.filter((s) => s.name === sampleName);
      assert.ok(samples.length > 0, `${sampleName} has samples`);
      for (const sample of samples) {
        assert.deepEqual(Object.keys(sample.labels).sort(), [...series.labels].sort(), sampleName);
      }
    }
  });

  test("every exposed family is documented", () => {
    const names = new Set(documented.map((series) => series.name));
    for (const family of scrape.types.keys()) assert.ok(names.has(family), `${family} documented`);
  });

  test("the calls made show up: durations, the task, the session, the refusal by scope kind", () => {
    assert.ok(
      value(scrape, "conduit_mcp_request_duration_seconds_count", { method: "tools/call" }) >= 3,
    );
    assert.ok(
      value(scrape, "conduit_mcp_request_duration_seconds_sum", { method: "tools/call" }) > 0,
    );
    assert.ok(
      value(scrape, "conduit_mcp_handler_duration_seconds_count", { method: "tools/call" }) >= 3,
    );
    assert.equal(value(scrape, "conduit_mcp_tool_duration_seconds_count", { tool: "sleep" }), 1);
    // The sleep ran 300 ms: counted above the 0.25 s bucket, within the 0.5 s one... or later
    // under load, but never within 0.25 s.
    assert.equal(
      value(scrape, "conduit_mcp_tool_duration_seconds_bucket", { tool: "sleep", le: "0.25" }),
      0,
    );
    assert.equal(value(scrape, "conduit_mcp_tool_duration_seconds_count", { tool: "count" }), 1);
    assert.equal(value(scrape, "conduit_mcp_tool_duration_seconds_count", { tool: "other" }), 0);
    assert.equal(value(scrape, "conduit_mcp_refused_total", { kind: "ip", limit: "scope" }), 1);
    assert.equal(
      value(scrape, "conduit_mcp_refused_total", { kind: "session", limit: "scope" }),
      0,
    );
    assert.equal(
      value(scrape, "conduit_mcp_requests_total", { method: "tools/call", status: "429" }),
      1,
    );
    assert.equal(value(scrape, "conduit_mcp_sessions"), 1);
    assert.equal(value(scrape, "conduit_mcp_tasks"), 1);
    // The one task ran to its result; every other status is shown at 0.
    assert.equal(value(scrape, "conduit_mcp_tasks_by_status", { status: "completed" }), 1);
    for (const status of ["working", "input_required", "failed", "cancelled"]) {
      assert.equal(value(scrape, "conduit_mcp_tasks_by_status", { status }), 0, status);
    }
    assert.equal(value(scrape, "conduit_mcp_scope_in_flight", { kind: "ip" }), 0);
    assert.equal(value(scrape, "conduit_mcp_store_reachable"), 1);
    assert.equal(value(scrape, "conduit_mcp_ready"), 1);
    assert.equal(value(scrape, "conduit_mcp_draining"), 0);
  });

  test("no label names a tenant: no address, no session id", () => {
    assert.ok(sessionId !== "", "the client had a session");
    assert.ok(!text.includes(sessionId), "the session id is in no label");
    assert.ok(!text.includes("127.0.0.1"), "the client address is in no label");
  });

  test("histograms are consistent: cumulative buckets, +Inf equals _count", () => {
    for (const [family, type] of scrape.types) {
      if (type !== "histogram") continue;
      const byLabels = new Map<string, number[]>();
      for (const s of scrape.samples.filter((x) => x.name === `${family}_bucket`)) {
        const { le, ...rest } = s.labels;
        const key = JSON.stringify(rest);
        const counts = byLabels.get(key) ?? [];
        counts.push(s.value);
        byLabels.set(key, counts);
        if (le === "+Inf") {
          assert.equal(s.value, value(scrape, `${family}_count`, rest), `${family} ${key}`);
        }
      }
      for (const [key, counts] of byLabels) {
        for (let i = 1; i < counts.length; i++) {
          assert.ok((counts[i] as number) >= (counts[i - 1] as number), `${family} ${key}`);
        }
      }
    }
  });

  test("every series the dashboard and the alert rules use is documented and exposed", () => {
    const histograms = new Set(documented.filter((s) => s.type === "histogram").map((s) => s.name));
    const names = new Set(documented.map((s) => s.name));
    const dashboard = JSON.parse(read("deploy/grafana/conduit-mcp.json")) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    const rules = parseYaml(read("deploy/prometheus/alerts.yml")) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
    };
    const uses: Array<[string, string]> = [];
    for (const panel of dashboard.panels) {
      assert.ok(panel.targets.length > 0, `panel ${panel.title} has queries`);
      for (const target of panel.targets) {
        for (const name of seriesIn(target.expr, histograms))
          uses.push([`panel ${panel.title}`, name]);
      }
    }
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      const used = seriesIn(rule.expr, histograms);
      assert.ok(used.length > 0, `alert ${rule.alert} uses a conduit_mcp series`);
      for (const name of used) uses.push([`alert ${rule.alert}`, name]);
    }
    assert.ok(uses.length >= 20, `${uses.length} uses`);
    for (const [where, name] of uses) {
      assert.ok(names.has(name), `${where}: ${name} is documented`);
      assert.ok(scrape.types.has(name), `${where}: ${name} is exposed`);
    }
  });

  test("promtool check metrics accepts the scraped text", (t) => {
    const probe = spawnSync("promtool", ["--version"], { encoding: "utf8" });
    if (probe.error !== undefined) {
      t.skip("promtool is not installed (Debian package prometheus, .ci/apt.d/prometheus.txt)");
      return;
    }
    const checked = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
  });
});
