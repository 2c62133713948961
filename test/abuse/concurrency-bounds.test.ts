/**
 * Abuse: the requests and SSE streams one scope may have running are bounded
 * (`maxConcurrentRequestsPerScope`, `maxOpenStreamsPerScope`) and so is the total
 * (`maxConcurrentRequests`). Beyond its scope's bound a request is refused at once (429,
 * `Retry-After: 1`, -32000 with its id); the total never refuses a scope under its own bound, it
 * takes a unit back from the scope holding the most; one tenant at its bound does not affect another; every
 * unit is given back exactly once, whatever ends the request (answer, error, cancel,
 * disconnect, abandonment of a stubborn tool), so the counters return to 0.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createMcpServer, type McpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "../server/fixtures.js";

const ALICE = { authorization: "Bearer alice-secret-0123456789" };
const BOB = { authorization: "Bearer bob-secret-0123456789" };
const AUTH = { tokens: { "alice-secret-0123456789": "alice", "bob-secret-0123456789": "bob" } };

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string, server: McpServer) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), auth: AUTH, ...options });
  const { url } = await server.listen();
  try {
    await run(url, server);
  } finally {
    await server.close();
  }
}

/** Waits until the server holds nothing: no request, no stream, no scope entry. */
async function drained(server: McpServer): Promise<void> {
  await until(
    () => {
      const { requests, streams, scopes } = server.concurrency();
      return requests === 0 && streams === 0 && scopes === 0;
    },
    3_000,
    `counters back to 0 (now ${JSON.stringify(server.concurrency())})`,
  );
}

describe("per-scope concurrency bounds", () => {
  test("a tenant at its bound gets 429 at once; another tenant is unaffected; a cancel still gets through", async () => {
    await withServer({ maxConcurrentRequestsPerScope: 3 }, async (url, server) => {
      const running = [1, 2, 3].map((n) =>
        rpc(url, callBody(`a${n}`, "sleep", { ms: 10_000, tag: `bound-a${n}` }), ALICE),
      );
      await until(() => server.concurrency().requests === 3, 2_000, "alice's 3 calls");

      const started = performance.now();
      const refused = await rpc(url, callBody("a4", "echo", { text: "x" }), ALICE);
      assert.ok(performance.now() - started < 500, "refused at once");
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.deepEqual(refused.json, {
        jsonrpc: "2.0",
        id: "a4",
        error: { code: -32000, message: "Too many concurrent requests" },
      });
      // Other methods of the same scope too (the bound counts requests, not tool calls).
      assert.equal((await rpc(url, { jsonrpc: "2.0", id: 9, method: "ping" }, ALICE)).status, 429);

      // Bob is another scope: his calls run, up to his own bound of three at the same time.
      const bobLong = [1, 2].map((n) =>
        rpc(url, callBody(`b${n}`, "sleep", { ms: 200, tag: `bound-b${n}` }), BOB),
      );
      const bobEcho = await rpc(url, callBody("b0", "echo", { text: "hi" }), BOB);
      assert.equal(bobEcho.status, 200);
      assert.equal(bobEcho.json.result.content[0].text, "hi");
      for (const answer of await Promise.all(bobLong)) assert.equal(answer.status, 200);

      // Alice at her bound can still cancel (notifications are not held to the scope bound)...
      assert.equal((await rpc(url, cancelBody("a1", "enough"), ALICE)).status, 202);
      const first = await running[0];
      assert.equal(first?.json.error.code, -32800);
      // ...and that frees one unit: her next request runs.
      await until(() => server.concurrency().requests === 2, 2_000, "one unit back");
      const a5 = await rpc(url, callBody("a5", "echo", { text: "y" }), ALICE);
      assert.equal(a5.status, 200, `${a5.text} ${JSON.stringify(server.concurrency())}`);

      for (const id of ["a2", "a3"]) await rpc(url, cancelBody(id), ALICE);
      await Promise.all(running);
      await drained(server);
    });
  });

  test("units come back after an answer, a tool error, a cancel, a disconnect and an abandoned stubborn tool", async () => {
    await withServer(
      { maxConcurrentRequestsPerScope: 2, streamCancelTimeoutMs: 100 },
      async (url, server) => {
        // Answer and tool error.
        assert.equal((await rpc(url, callBody(1, "echo", { text: "ok" }), ALICE)).status, 200);
        assert.equal((await rpc(url, callBody(2, "boom", {}), ALICE)).json.error.code, -32603);
        await drained(server);

        // Disconnect: the client goes away mid-call.
        const controller = new AbortController();
        const gone = fetch(url, {
          method: "POST",
          signal: controller.signal,
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...ALICE,
          },
          body: JSON.stringify(callBody(3, "sleep", { ms: 10_000, tag: "bound-gone" })),
        }).catch(() => null);
        await until(() => probes.has("bound-gone"), 2_000, "the call to start");
        controller.abort();
        await gone;
        await drained(server);

        // Abandoned: a stubborn tool ignores its cancel; its unit comes back at the stream
        // cancel timeout although its handler is still running.
        probes.delete("bound-stubborn");
        const stubborn = rpc(
          url,
          callBody(4, "stubborn", { ms: 1_500, tag: "bound-stubborn" }),
          ALICE,
        );
        await until(() => probes.has("bound-stubborn"), 2_000, "the stubborn call to start");
        await rpc(url, cancelBody(4), ALICE);
        assert.equal((await stubborn).json.error.code, -32800);
        await drained(server);
        assert.equal(probes.get("bound-stubborn")?.finishedAt, null, "still running, yet released");
        // Both units usable again (no leak, no double release below 0).
        const two = await Promise.all([
          rpc(url, callBody(5, "sleep", { ms: 50, tag: "bound-5" }), ALICE),
          rpc(url, callBody(6, "sleep", { ms: 50, tag: "bound-6" }), ALICE),
        ]);
        assert.deepEqual(
          two.map((answer) => answer.status),
          [200, 200],
        );
        await until(() => probes.get("bound-stubborn")?.finishedAt !== null, 3_000, "stubborn end");
        await drained(server);
        // The late settle of the abandoned call did not release a second time.
        await until(() => server.concurrency().requests === 0, 100);
        const three = await Promise.all(
          [7, 8, 9].map((id) =>
            rpc(url, callBody(id, "sleep", { ms: 300, tag: `b-${id}` }), ALICE),
          ),
        );
        assert.deepEqual(three.map((answer) => answer.status).sort(), [200, 200, 429]);
        await drained(server);
      },
    );
  });

  test("SSE streams per scope: beyond the bound a JSON-accepting call runs without a stream; an SSE-only one gets 429", async () => {
    await withServer(
      { maxConcurrentRequestsPerScope: 10, maxOpenStreamsPerScope: 1 },
      async (url, server) => {
        const progress = { progressToken: "p" };
        const streamed = rpc(
          url,
          callBody("s1", "count", { to: 20, intervalMs: 20, tag: "s1" }, progress),
          ALICE,
        );
        await until(() => server.concurrency().streams === 1, 2_000, "one stream");

        // Same scope, stream bound reached: answered as one JSON body, progress dropped.
        const plain = await rpc(
          url,
          callBody("s2", "count", { to: 3, intervalMs: 1, tag: "s2" }, progress),
          ALICE,
        );
        assert.equal(plain.status, 200);
        assert.match(plain.headers.get("content-type") ?? "", /^application\/json/);
        assert.equal(plain.json.result.content[0].text, "counted to 3");

        // A client that accepts only SSE cannot be served without a stream: 429 at once.
        const sseOnly = await rpc(url, callBody("s3", "echo", { text: "x" }), {
          ...ALICE,
          accept: "text/event-stream",
        });
        assert.equal(sseOnly.status, 429);
        assert.equal(sseOnly.headers.get("retry-after"), "1");
        assert.match(sseOnly.text, /"id":"s3".*Too many concurrent requests/);

        // Bob has his own stream budget.
        const bob = await rpc(
          url,
          callBody("b1", "count", { to: 2, intervalMs: 1, tag: "sb" }, progress),
          BOB,
        );
        assert.match(bob.headers.get("content-type") ?? "", /^text\/event-stream/);
        assert.match(bob.text, /notifications\/progress/);

        const first = await streamed;
        assert.match(first.headers.get("content-type") ?? "", /^text\/event-stream/);
        assert.match(first.text, /counted to 20/);
        await drained(server);
      },
    );
  });

  test("the global bound makes room: the largest scope's oldest call is closed, the new request served", async () => {
    await withServer(
      { maxConcurrentRequests: 3, maxConcurrentRequestsPerScope: 5 },
      async (url, server) => {
        // Alice holds two, Bob one: the bound is full.
        const aliceOldest = rpc(
          url,
          callBody("g1", "sleep", { ms: 10_000, tag: "g1" }),
          ALICE,
        ).then(
          () => "answered",
          () => "closed",
        );
        await until(() => server.concurrency().requests === 1, 2_000, "alice's first call");
        const aliceYounger = rpc(url, callBody("g2", "sleep", { ms: 10_000, tag: "g2" }), ALICE);
        await until(() => server.concurrency().requests === 2, 2_000, "alice's two calls");
        const bob = rpc(url, callBody("g3", "sleep", { ms: 10_000, tag: "g3" }), BOB);
        await until(() => server.concurrency().requests === 3, 2_000, "three calls");
        // Bob, under his own bound, is served: Alice holds the most, her oldest call goes.
        const ping = await rpc(url, { jsonrpc: "2.0", id: "g4", method: "ping" }, BOB);
        assert.equal(ping.status, 200);
        assert.deepEqual(ping.json.result, {});
        assert.equal(await aliceOldest, "closed");
        await until(() => probes.get("g1")?.abortedAt != null, 2_000, "g1 cancelled");
        assert.equal(probes.get("g2")?.abortedAt, null, "alice's younger call runs on");
        assert.equal(probes.get("g3")?.abortedAt, null, "bob's call runs on");
        assert.ok(server.concurrency().requests <= 3, "the bound still holds");
        // Cancels still get through at the bound.
        assert.equal((await rpc(url, cancelBody("g2"), ALICE)).status, 202);
        assert.equal((await rpc(url, cancelBody("g3"), BOB)).status, 202);
        assert.equal((await aliceYounger).json.error.code, -32800);
        assert.equal((await bob).json.error.code, -32800);
        await drained(server);
      },
    );
  });

  test("the bounds are validated", () => {
    for (const option of [
      "maxConcurrentRequestsPerScope",
      "maxOpenStreamsPerScope",
      "maxConcurrentRequests",
    ] as const) {
      for (const value of [0, -1, 1.5, "8", Number.POSITIVE_INFINITY]) {
        assert.throws(
          () => createMcpServer({ tools: [], [option]: value as number }),
          (error: Error) => error.name === "InvalidOptionError" && error.message.includes(option),
          `${option}: ${String(value)}`,
        );
      }
    }
  });
});
