/**
 * A hang-up at any moment before the answer cancels the call: while an async `verify` runs,
 * while a (slow) session store looks the session up, while a (slow) cancellation store tracks
 * the request. And a client that half-closes its connection after its request is a hang-up.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { connect } from "node:net";
import { describe, test } from "node:test";

import { CancellationRegistry, MemoryCancellationStore } from "../../src/cancellation/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemorySessionStore } from "../../src/sessions/index.js";
import { callBody, probes, rpc, testTools, until } from "../server/fixtures.js";

/** A gate the test opens: `wait()` resolves once `open()` was called. */
function gate() {
  let open: () => void = () => {};
  let entered = 0;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    open,
    get entered() {
      return entered;
    },
    async wait(): Promise<void> {
      entered++;
      await opened;
    },
  };
}

/** POSTs `body` and resolves a function that hangs up (destroys the socket). */
function postThenHangUp(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): { hangUp: () => void } {
  const req = request(url, {
    method: "POST",
    agent: false,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
  });
  req.on("error", () => {});
  req.end(JSON.stringify(body));
  return { hangUp: () => req.destroy() };
}

/** After the hang-up: the tool never ran to its end, and nothing is left held. */
async function assertCancelled(server: McpServer, tag: string): Promise<void> {
  // Long enough for a call that was (wrongly) started to show up.
  await new Promise((resolve) => setTimeout(resolve, 150));
  const probe = probes.get(tag);
  if (probe !== undefined) {
    await until(() => probe.abortedAt !== null, 2_000, `${tag} aborted`);
    assert.equal(probe.remainingRan, false);
  }
  await until(
    () => server.concurrency().requests === 0 && server.registry.inFlightCount === 0,
    3_000,
    `nothing held after ${tag}`,
  );
}

describe("a hang-up at any moment before the answer cancels the call", () => {
  test("during an async verify", async () => {
    const verifying = gate();
    const server = createMcpServer({
      tools: testTools(),
      auth: {
        verify: async () => {
          await verifying.wait();
          return { id: "alice", scopes: [] };
        },
      },
    });
    const { url } = await server.listen();
    try {
      const client = postThenHangUp(url, callBody(1, "sleep", { ms: 1_500, tag: "hangup-verify" }));
      await until(() => verifying.entered === 1, 2_000, "verify running");
      client.hangUp();
      await new Promise((resolve) => setTimeout(resolve, 50));
      verifying.open();
      await assertCancelled(server, "hangup-verify");
    } finally {
      await server.close();
    }
  });

  test("during a slow session lookup", async () => {
    const looking = gate();
    const store = new MemorySessionStore();
    const slow = Object.assign(Object.create(store) as MemorySessionStore, {
      get: async (id: string) => {
        if (id === sessionId) await looking.wait();
        return store.get(id);
      },
    });
    let sessionId = "";
    const server = createMcpServer({ tools: testTools(), sessions: { store: slow } });
    const { url } = await server.listen();
    try {
      const init = await rpc(url, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "c", version: "1" },
        },
      });
      sessionId = init.headers.get("mcp-session-id") ?? "";
      assert.ok(sessionId);
      const client = postThenHangUp(
        url,
        callBody(1, "sleep", { ms: 1_500, tag: "hangup-session" }),
        { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
      );
      await until(() => looking.entered === 1, 2_000, "session lookup running");
      client.hangUp();
      await new Promise((resolve) => setTimeout(resolve, 50));
      looking.open();
      await assertCancelled(server, "hangup-session");
    } finally {
      await server.close();
    }
  });

  test("during a slow track (a store round trip)", async () => {
    const tracking = gate();
    const store = new MemoryCancellationStore();
    const addInFlight = store.addInFlight.bind(store);
    store.addInFlight = async (scope, requestId, handleId) => {
      if (requestId === "slow-track") await tracking.wait();
      return addInFlight(scope, requestId, handleId);
    };
    const registry = new CancellationRegistry({ store, janitor: false });
    const server = createMcpServer({ tools: testTools(), registry });
    const { url } = await server.listen();
    try {
      const client = postThenHangUp(
        url,
        callBody("slow-track", "sleep", { ms: 1_500, tag: "hangup-track" }),
      );
      await until(() => tracking.entered === 1, 2_000, "track running");
      client.hangUp();
      await new Promise((resolve) => setTimeout(resolve, 50));
      tracking.open();
      await assertCancelled(server, "hangup-track");
    } finally {
      await server.close();
      await registry.close();
      await store.close();
    }
  });

  test("a client that half-closes after its request is a hang-up: its call is cancelled", async () => {
    const server = createMcpServer({ tools: testTools() });
    const { port } = await server.listen();
    try {
      const body = JSON.stringify(callBody(1, "sleep", { ms: 1_500, tag: "half-close" }));
      const socket = connect(port, "127.0.0.1");
      socket.on("error", () => {});
      socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          `Accept: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await until(() => probes.has("half-close"), 2_000, "the call running");
      socket.end(); // FIN: nothing more will be sent; the socket could still read
      const probe = probes.get("half-close");
      await until(() => probe?.abortedAt !== null, 2_000, "the call aborted");
      assert.equal(probe?.reason?.source, "disconnect");
      socket.destroy();
    } finally {
      await server.close();
    }
  });
});
