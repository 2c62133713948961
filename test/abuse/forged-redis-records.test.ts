/**
 * Records written straight into Redis by someone who can write to it (docs/redis.md, "Who can do
 * what with access to Redis"): a forged task record (garbage numbers, an unknown status, a
 * "result" that is not JSON, or JSON that tries to add members to the response) and a forged
 * session record (garbage fields, an oversized principal). The node reading them must answer
 * each request with exactly one well-formed JSON-RPC response of its own id — never a response
 * spliced with the forged text, never a crash — and keep serving others. And a node whose clock
 * runs hours ahead wipes no live session (the store ages them by Redis's clock). Real
 * redis-server, real node on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Redis } from "ioredis";

import { sleepTool } from "../../src/cli/demo-tools.js";
import { RedisSessionStore, RedisTaskStore } from "../../src/redis/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import { postFrom } from "./post-from.js";

const skip = redisSkipReason();
const V = "2025-11-25";
const FROM = "127.0.0.2";

function rpc(id: number, method: string, params: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, params };
}

/** Exactly one JSON-RPC response with this id, and nothing the server did not write. */
function wellFormed(text: string, id: number): Record<string, unknown> {
  const message = JSON.parse(text) as Record<string, unknown>;
  assert.equal(message.jsonrpc, "2.0");
  assert.equal(message.id, id);
  assert.equal("result" in message, !("error" in message), text.slice(0, 200));
  for (const key of Object.keys(message)) {
    assert.ok(
      ["jsonrpc", "id", "result", "error"].includes(key),
      `member ${key} in ${text.slice(0, 200)}`,
    );
  }
  return message;
}

describe("records forged in Redis", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let raw: Redis;
  let node: McpServer;
  let url: string;
  let sessions: RedisSessionStore;
  let tasks: RedisTaskStore;

  before(async () => {
    redis = await startRedisServer();
    raw = new Redis(redis.url);
    sessions = new RedisSessionStore({
      redis: redis.url,
      prefix: freshPrefix("forged"),
      logger: () => {},
    });
    tasks = new RedisTaskStore({
      redis: redis.url,
      prefix: freshPrefix("forged"),
      logger: () => {},
    });
    assert.ok(await sessions.ready(5_000));
    assert.ok(await tasks.ready(5_000));
    node = createMcpServer({
      tools: [sleepTool],
      sessions: { store: sessions },
      tasks: { store: tasks },
      onError: false,
    });
    ({ url } = await node.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(async () => {
    await node?.close();
    await sessions?.close();
    await tasks?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  async function keysLike(pattern: string): Promise<string[]> {
    return raw.keys(pattern);
  }

  test("a forged task record is read as a task, never spliced into the response", async () => {
    const created = await postFrom(
      url,
      FROM,
      rpc(1, "tools/call", { name: "sleep", arguments: { ms: 10 }, task: {} }),
      { "mcp-protocol-version": V },
    );
    const taskId = (JSON.parse(created.text).result?.task?.taskId ?? "") as string;
    assert.ok(taskId.length > 0, created.text);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [key] = (await keysLike("*:tk:*")).filter((k) => k.includes(taskId));
    assert.ok(key !== undefined, "the task's key");
    const forgeries: Record<string, string>[] = [
      {
        s: "completed",
        r: '{"content":[{"type":"text","text":"x"}]},"injected":true',
        c: "NaN",
        u: "1e400",
        l: "-5",
        p: "abc",
      },
      { s: "completed", r: "not json {", m: '"\\u001b[31mred"' },
      { s: "bogus-status", er: '{"code":1}}],"injected":1', e: "soon" },
      { s: "input_required", ir: "[[[[" },
    ];
    let id = 10;
    for (const fields of forgeries) {
      await raw.hset(key, fields);
      for (const method of ["tasks/get", "tasks/result", "tasks/list"]) {
        id++;
        const params = method === "tasks/list" ? {} : { taskId };
        const answer = await postFrom(url, FROM, rpc(id, method, params), {
          "mcp-protocol-version": V,
        });
        assert.ok(
          answer.status === 200 || answer.status === 400,
          `${method} → ${answer.status} ${answer.text.slice(0, 300)} ${JSON.stringify(fields)}`,
        );
        assert.doesNotMatch(
          answer.text,
          /injected|\u001b/,
          `${method}: ${answer.text.slice(0, 200)}`,
        );
        wellFormed(answer.text, id);
      }
    }
    // Still serving others.
    const other = await postFrom(
      url,
      "127.0.0.3",
      rpc(99, "tools/call", { name: "sleep", arguments: { ms: 1 } }),
      {
        "mcp-protocol-version": V,
      },
    );
    assert.match(other.text, /slept 1 ms/);
  });

  test("a forged session record neither crashes the node nor grants more than it names", async () => {
    const init = await postFrom(
      url,
      FROM,
      rpc(0, "initialize", {
        protocolVersion: V,
        capabilities: {},
        clientInfo: { name: "f", version: "1" },
      }),
    );
    const sessionId = init.headers["mcp-session-id"] as string;
    assert.equal(typeof sessionId, "string");
    const [key] = (await keysLike("*:sess:*")).filter((k) => k.endsWith(sessionId));
    assert.ok(key !== undefined, "the session's key");
    await raw.hset(key, {
      protocolVersion: "1999-01-01\r\nx-injected: 1",
      lastSeenAt: "NaN",
      createdAt: "-1",
      logLevel: "s\u001b[2Jloud",
      caps: "s" + "elicitation.form ".repeat(1_000),
      principalId: "s" + "p".repeat(200_000),
      bytes: "-99999999",
    });
    const answer = await postFrom(url, FROM, rpc(5, "tools/list", {}), {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": V,
    });
    // The forged principal is not this request's (no auth): the session is refused, not adopted.
    assert.ok(
      [200, 400, 403, 404].includes(answer.status),
      `${answer.status} ${answer.text.slice(0, 200)}`,
    );
    assert.equal(answer.headers["x-injected"], undefined);
    assert.doesNotMatch(answer.text, /\u001b|ppppp/);
    const other = await postFrom(
      url,
      "127.0.0.4",
      rpc(6, "tools/call", { name: "sleep", arguments: { ms: 1 } }),
      {
        "mcp-protocol-version": V,
      },
    );
    assert.match(other.text, /slept 1 ms/);
  });

  test("a node whose clock runs two hours ahead wipes no live session", async () => {
    const init = await postFrom(
      url,
      FROM,
      rpc(0, "initialize", {
        protocolVersion: V,
        capabilities: {},
        clientInfo: { name: "f", version: "1" },
      }),
    );
    const sessionId = init.headers["mcp-session-id"] as string;
    // The janitor of a node two hours ahead, with a 30 min TTL.
    assert.equal(await sessions.cleanup(30 * 60_000, Date.now() + 2 * 3_600_000), 0);
    const answer = await postFrom(url, FROM, rpc(7, "tools/list", {}), {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": V,
    });
    assert.equal(answer.status, 200, answer.text);
  });
});
