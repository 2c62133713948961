/**
 * What a tenant leaves behind is counted against the bucket that made it (its principal, else its
 * IPv4 address or IPv6 /64), never against a session: opening sessions does not multiply its
 * tasks or subscriptions. Subscriptions have a byte budget per bucket, and the global bound
 * evicts from the largest bucket instead of refusing the others. A request with no stable
 * identity (`server.fetch` without `clientAddress`) makes nothing a later request must find.
 * Real servers on 127.0.0.1; other clients on 127.0.0.x.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { sleepTool } from "../../src/cli/demo-tools.js";
import { createMcpServer } from "../../src/server/index.js";
import { postFrom } from "./post-from.js";

const V2025 = "2025-11-25";

function call(id: number, method: string, params: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, params };
}

async function openSession(url: string, from: string): Promise<string> {
  const answer = await postFrom(
    url,
    from,
    call(0, "initialize", {
      protocolVersion: V2025,
      capabilities: {},
      clientInfo: { name: "bucket", version: "1.0.0" },
    }),
  );
  const id = answer.headers["mcp-session-id"];
  assert.equal(typeof id, "string", answer.text);
  return id as string;
}

function inSession(url: string, from: string, session: string, body: unknown) {
  return postFrom(url, from, body, { "mcp-session-id": session, "mcp-protocol-version": V2025 });
}

function errorOf(text: string): { code: number; message: string } | undefined {
  return JSON.parse(text).error;
}

describe("quotas count against the creating bucket, not the session", () => {
  test("one address's sessions share its task quota; another address is served", async () => {
    const server = createMcpServer({
      tools: [sleepTool],
      sessions: true,
      tasks: { maxTasksPerScope: 3 },
      onError: false,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const sessions = [];
      for (let i = 0; i < 3; i++) sessions.push(await openSession(url, "127.0.0.2"));
      const created = [];
      for (const [i, session] of sessions.entries()) {
        created.push(
          await inSession(
            url,
            "127.0.0.2",
            session,
            call(i, "tools/call", { name: "sleep", arguments: { ms: 60_000 }, task: {} }),
          ),
        );
      }
      for (const answer of created)
        assert.equal(typeof JSON.parse(answer.text).result?.task?.taskId, "string", answer.text);
      const fourth = await inSession(
        url,
        "127.0.0.2",
        await openSession(url, "127.0.0.2"),
        call(9, "tools/call", { name: "sleep", arguments: { ms: 60_000 }, task: {} }),
      );
      assert.equal(fourth.status, 429, fourth.text);
      assert.equal(errorOf(fourth.text)?.code, -32000);
      const other = await inSession(
        url,
        "127.0.0.3",
        await openSession(url, "127.0.0.3"),
        call(10, "tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} }),
      );
      assert.equal(typeof JSON.parse(other.text).result?.task?.taskId, "string", other.text);
    } finally {
      await server.close();
    }
  });

  test("one address's sessions share its subscription quota and byte budget", async () => {
    const server = createMcpServer({
      sessions: {
        maxSubscriptionsPerSession: 4,
        maxSubscriptionsPerScope: 6,
        maxSubscriptionBytesPerScope: 20_000,
      },
      onError: false,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const accepted: boolean[] = [];
      for (let s = 0; s < 2; s++) {
        const session = await openSession(url, "127.0.0.2");
        for (let k = 0; k < 4; k++) {
          const answer = await inSession(
            url,
            "127.0.0.2",
            session,
            call(k, "resources/subscribe", { uri: `memo://a/${s}/${k}` }),
          );
          accepted.push(errorOf(answer.text) === undefined);
        }
      }
      assert.deepEqual(accepted, [true, true, true, true, true, true, false, false]);
      // Bytes: two 8 KiB URIs fit the 20 000-byte budget of 127.0.0.3, the third does not.
      const session = await openSession(url, "127.0.0.3");
      const answers = [];
      for (let k = 0; k < 3; k++) {
        const uri = `memo://b/${k}/${"u".repeat(8_000)}`;
        answers.push(
          await inSession(url, "127.0.0.3", session, call(k, "resources/subscribe", { uri })),
        );
      }
      assert.deepEqual(
        answers.map((answer) => errorOf(answer.text)?.code ?? 0),
        [0, 0, -32000],
      );
      assert.match(errorOf(answers[2]?.text ?? "{}")?.message ?? "", /for this client/);
    } finally {
      await server.close();
    }
  });

  test("the global subscription bound evicts from the largest bucket; a small tenant is served", async () => {
    const server = createMcpServer({
      sessions: { maxSubscriptions: 10, maxSubscriptionsPerSession: 64 },
      onError: false,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const big = await openSession(url, "127.0.0.2");
      for (let k = 0; k < 10; k++) {
        const answer = await inSession(
          url,
          "127.0.0.2",
          big,
          call(k, "resources/subscribe", { uri: `memo://big/${k}` }),
        );
        assert.equal(errorOf(answer.text), undefined, answer.text);
      }
      const small = await openSession(url, "127.0.0.3");
      const answer = await inSession(
        url,
        "127.0.0.3",
        small,
        call(1, "resources/subscribe", { uri: "memo://small" }),
      );
      assert.equal(errorOf(answer.text), undefined, answer.text);
    } finally {
      await server.close();
    }
  });
});

describe("server.fetch without clientAddress", () => {
  test("refuses to create a task (nobody could find it again), naming clientAddress", async () => {
    const server = createMcpServer({ tools: [sleepTool], onError: false });
    try {
      const ask = (body: unknown, clientAddress?: string) =>
        server.fetch(
          new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body: JSON.stringify(body),
          }),
          clientAddress === undefined ? {} : { clientAddress },
        );
      const refused = await ask(
        call(1, "tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} }),
      );
      assert.equal(refused.status, 400);
      const error = ((await refused.json()) as { error: { code: number; message: string } }).error;
      assert.equal(error.code, -32600);
      assert.match(error.message, /clientAddress/);
      // A plain call still works, and with clientAddress the task is made.
      const plain = await ask(call(2, "tools/call", { name: "sleep", arguments: { ms: 1 } }));
      assert.equal(plain.status, 200);
      const made = await ask(
        call(3, "tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} }),
        "203.0.113.7",
      );
      const body = (await made.json()) as { result?: { task?: { taskId?: unknown } } };
      assert.equal(typeof body.result?.task?.taskId, "string");
    } finally {
      await server.close();
    }
  });
});
