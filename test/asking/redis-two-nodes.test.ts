/**
 * 2025-11-25 asks across two conduit-mcp nodes sharing one real `redis-server` (sessions, the
 * cancellation registry and the reply bus on Redis). The call runs on one node; the client's
 * answer POST lands on the other, which hands it to the asking node over `RedisReplyBus`.
 *
 * - End to end: `@modelcontextprotocol/sdk` 1.x behind a round-robin proxy (no stickiness):
 *   elicitation, sampling and roots handlers answer, and the tools get the answers; at least one
 *   answer provably crossed nodes (counted on the bus).
 * - Raw HTTP, deterministic: the call on node A, the answer on node B; another session's answer
 *   on node B and a guessed id are ignored; a `notifications/cancelled` sent to node B withdraws
 *   A's waiting ask (the client is told on A's stream); nothing stays in either node's table.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import type { ServerReplyBus } from "../../src/index.js";
import { RedisCancellationStore, RedisReplyBus, RedisSessionStore } from "../../src/redis/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { transportCore } from "../../src/server/transport-core.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { type RoundRobinProxy, startRoundRobinProxy } from "../helpers/round-robin-proxy.js";
import { freshPrefix } from "../redis/helpers.js";
import { callBody, cancelBody, rpc, until } from "../server/fixtures.js";
import {
  answer,
  isRequest,
  isResponseTo,
  type Message,
  openCall,
  openSession,
  sessionHeaders,
} from "./stream.js";
import { askTools } from "./tools.js";

const skip = redisSkipReason();

/** One node and what the test looks at. */
interface Node {
  server: McpServer;
  url: string;
  bus: RedisReplyBus;
  /** Answers this node sent to another node, and answers it received from one. */
  forwarded: number;
  received: number;
  close(): Promise<void>;
}

async function startNode(redisUrl: string, prefix: string): Promise<Node> {
  const cancellation = new RedisCancellationStore({ redis: redisUrl, prefix, logger: () => {} });
  const sessions = new RedisSessionStore({ redis: redisUrl, prefix, logger: () => {} });
  const bus = new RedisReplyBus({ redis: redisUrl, prefix, logger: () => {} });
  const registry = new CancellationRegistry({ store: cancellation });
  const node = { forwarded: 0, received: 0 } as Node;
  // The bus as the server sees it, counting what crosses nodes.
  const counted: ServerReplyBus = {
    attach: (tag, deliver) =>
      bus.attach(tag, (scope, id, reply) => {
        node.received++;
        deliver(scope, id, reply);
      }),
    forward: (tag, scope, id, reply) => {
      node.forwarded++;
      return bus.forward(tag, scope, id, reply);
    },
  };
  const server = createMcpServer({
    tools: askTools,
    registry,
    sessions: { store: sessions },
    serverRequests: { bus: counted },
    onError: false,
  });
  assert.ok(await cancellation.ready(5_000), "cancellation store ready");
  assert.ok(await sessions.ready(5_000), "session store ready");
  assert.ok(await bus.ready(5_000), "reply bus ready");
  node.server = server;
  node.bus = bus;
  node.url = (await server.listen()).url;
  node.close = async () => {
    await server.close();
    await registry.close();
    await cancellation.close();
    await sessions.close();
    await bus.close();
  };
  return node;
}

const tableOf = (node: Node) => transportCore(node.server).dispatcher.serverRequests.table;

function textOf(result: Message): string {
  return result.content.map((block: { text: string }) => block.text).join("");
}

describe("2025-11-25 asks across two nodes on one Redis", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let a: Node;
  let b: Node;
  let proxy: RoundRobinProxy;

  before(async () => {
    redis = await startRedisServer();
    const prefix = freshPrefix("ask");
    a = await startNode(redis.url, prefix);
    b = await startNode(redis.url, prefix);
    proxy = await startRoundRobinProxy([a.url, b.url]);
  });
  after(async () => {
    await proxy?.close();
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  test("SDK 1.x behind a round-robin proxy: every handler gets its answer, across nodes", async () => {
    const client = new Client(
      { name: "two-nodes", version: "1.0.0" },
      { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { ok: true },
    }));
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      model: "m",
      content: { type: "text", text: "42" },
    }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: "file:///a" }, { uri: "file:///b" }],
    }));
    const before = a.forwarded + b.forwarded;
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    try {
      for (let round = 0; round < 3; round++) {
        const confirmed = await client.callTool({ name: "confirm", arguments: { action: "go" } });
        assert.equal(textOf(confirmed), "did go");
        const sampled = await client.callTool({ name: "ask-model", arguments: { question: "?" } });
        assert.equal(textOf(sampled), "m: 42");
        const roots = await client.callTool({ name: "list-roots", arguments: {} });
        assert.equal(textOf(roots), "file:///a,file:///b");
      }
    } finally {
      await client.close();
    }
    assert.ok(
      proxy.counts.every((count) => count > 0),
      `both nodes served: ${proxy.counts}`,
    );
    assert.ok(a.forwarded + b.forwarded > before, "at least one answer crossed nodes");
    assert.equal(tableOf(a).size + tableOf(b).size, 0);
  });

  test("raw: the call on node A, the answer on node B; another session's answer and a guessed id on B are ignored", async () => {
    const alice = await openSession(a.url, { elicitation: {} });
    const mallory = await openSession(b.url, { elicitation: {} });
    const call = await openCall(
      a.url,
      callBody(1, "confirm", { action: "ship" }),
      sessionHeaders(alice),
    );
    const asked = await call.next(isRequest("elicitation/create"));
    const no = { result: { action: "accept", content: { ok: false } } };
    assert.equal((await answer(b.url, asked.id, no, sessionHeaders(mallory))).status, 202);
    const [tag] = asked.id.split(".");
    const guessed = `${tag}.${randomBytes(16).toString("base64url")}`;
    assert.equal((await answer(b.url, guessed, no, sessionHeaders(alice))).status, 202);
    // The foreign and guessed answers did reach node A over the bus, and were refused there.
    await until(() => a.received >= 2, 2_000, "the forwarded answers to arrive");
    assert.equal(tableOf(a).size, 1, "the ask still waits");
    const yes = { result: { action: "accept", content: { ok: true } } };
    assert.equal((await answer(b.url, asked.id, yes, sessionHeaders(alice))).status, 202);
    assert.equal(textOf((await call.next(isResponseTo(1))).result), "did ship");
    assert.equal(tableOf(a).size + tableOf(b).size, 0);
  });

  test("raw: a cancel sent to node B withdraws A's waiting ask; the client is told on A's stream", async () => {
    const session = await openSession(a.url, { sampling: {} });
    const headers = sessionHeaders(session);
    const call = await openCall(a.url, callBody("x", "ask-model", { question: "?" }), headers);
    const asked = await call.next(isRequest("sampling/createMessage"));
    assert.equal((await rpc(b.url, cancelBody("x", "never mind"), headers)).status, 202);
    const withdrawn = await call.next((m) => m.method === "notifications/cancelled", 5_000);
    assert.equal(withdrawn.params.requestId, asked.id);
    await call.ended;
    assert.equal(tableOf(a).size, 0);
    assert.equal(tableOf(a).scopes, 0);
    await until(() => a.server.registry.inFlightCount === 0, 5_000, "the call untracked");
  });
});
