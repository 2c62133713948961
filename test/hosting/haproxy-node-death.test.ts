/**
 * A node dying mid-call behind HAProxy (round robin), with the settings docs/load-balancers.md
 * recommends: health checks with `on-marked-down shutdown-sessions` and no replay of a request
 * that reached a node. Both official clients (SDK 1.x on 2025-11-25, 2.x on 2026-07-28) see the
 * failure within seconds instead of waiting for their own 60 s request timeout, and the call is
 * never run a second time on another node.
 *
 * - SIGKILL: the kernel closes the node's sockets; HAProxy answers 502 at once.
 * - SIGSTOP (a host that vanished: sockets open, nothing answers): two failed checks (`inter 1s
 *   fall 2`) mark the node down and `shutdown-sessions` ends its calls: 502 within ~3 s.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import {
  type ChildNode,
  type Haproxy,
  haproxySkipReason,
  startHaproxy,
  startNode,
} from "../helpers/haproxy.js";

/** The backend settings of docs/load-balancers.md ("Recommended HAProxy settings"). */
const RECOMMENDED = `
global
    maxconn 1000
defaults
    mode http
    timeout connect 2s
    timeout client 10m
    timeout server 10m
    timeout http-request 10s
    retries 3
    retry-on conn-failure
    option redispatch 1
frontend mcp
    bind 127.0.0.1:{{PORT}}
    default_backend nodes
backend nodes
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
{{SERVERS}}
`;

/** Generous against the ~3 s expected, far below the clients' own 60 s. */
const SEEN_WITHIN_MS = 15_000;

type Call = Promise<{ outcome: "resolved" | "rejected"; message: string; at: number }>;

async function legacyCall(url: string): Promise<{ call: Call; close: () => Promise<void> }> {
  const client = new LegacyClient({ name: "lb", version: "1.0.0" });
  await client.connect(new LegacyTransport(new URL(url)));
  const call = client
    .callTool({ name: "sleep", arguments: { ms: 30_000 } }, undefined, { timeout: 60_000 })
    .then(
      (r) => ({ outcome: "resolved" as const, message: JSON.stringify(r), at: performance.now() }),
      (e: Error) => ({ outcome: "rejected" as const, message: e.message, at: performance.now() }),
    );
  return { call, close: () => client.close() };
}

async function modernCall(url: string): Promise<{ call: Call; close: () => Promise<void> }> {
  const client = new ModernClient({ name: "lb", version: "1.0.0" });
  await client.connect(new ModernTransport(new URL(url)));
  const call = client
    .callTool({ name: "sleep", arguments: { ms: 30_000 } }, { timeout: 60_000 } as never)
    .then(
      (r) => ({ outcome: "resolved" as const, message: JSON.stringify(r), at: performance.now() }),
      (e: Error) => ({ outcome: "rejected" as const, message: e.message, at: performance.now() }),
    );
  return { call, close: () => client.close() };
}

/** The node running a call: the one whose in-flight gauge is up (`--metrics`). */
async function busyNode(nodes: readonly ChildNode[]): Promise<ChildNode> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    for (const node of nodes) {
      const text = await (await fetch(node.url.replace(/\/mcp$/, "/metrics"))).text();
      const gauge = /^conduit_mcp_in_flight_requests (\d+)$/m.exec(text);
      if (gauge !== null && Number(gauge[1]) > 0) return node;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no node reports the call in flight");
}

const skip = haproxySkipReason();

describe("a node dies mid-call behind HAProxy (recommended settings)", {
  skip: skip ?? false,
}, () => {
  let nodes: ChildNode[] = [];
  let lb: Haproxy | null = null;

  async function start(): Promise<void> {
    nodes = await Promise.all([startNode(["--metrics"]), startNode(["--metrics"])]);
    lb = await startHaproxy({ nodes, config: RECOMMENDED });
  }
  async function stop(): Promise<void> {
    await lb?.stop();
    lb = null;
    for (const node of nodes) await node.stop();
    nodes = [];
  }
  after(stop);

  for (const [era, open] of [
    ["SDK 1.x (2025-11-25)", legacyCall],
    ["SDK 2.x (2026-07-28)", modernCall],
  ] as const) {
    for (const how of ["kill", "freeze"] as const) {
      test(`${era}: ${how === "kill" ? "SIGKILL" : "SIGSTOP"} of the node running the call is seen within seconds, and the call is not replayed`, async () => {
        await start();
        try {
          const { call, close } = await open(lb?.url as string);
          const node = await busyNode(nodes);
          const struck = performance.now();
          if (how === "kill") node.kill();
          else node.freeze();
          const result = await call;
          const seenAfter = result.at - struck;
          console.log(
            `# ${era} ${how}: ${result.outcome} after ${Math.round(seenAfter)} ms: ${result.message.slice(0, 80)}`,
          );
          assert.equal(
            result.outcome,
            "rejected",
            "the call failed (it was not run again elsewhere)",
          );
          assert.match(result.message, /502/, "HAProxy's 502, not the client's own timeout");
          assert.ok(seenAfter < SEEN_WITHIN_MS, `seen after ${Math.round(seenAfter)} ms`);
          // The surviving node never ran the call.
          const survivor = nodes.find((n) => n !== node) as ChildNode;
          const metrics = await (await fetch(survivor.url.replace(/\/mcp$/, "/metrics"))).text();
          assert.doesNotMatch(metrics, /conduit_mcp_tool_calls_total\{tool="sleep",[^}]*\} [1-9]/);
          assert.match(metrics, /^conduit_mcp_in_flight_requests 0$/m);
          await close().catch(() => undefined);
        } finally {
          await stop();
        }
      });
    }
  }
});
