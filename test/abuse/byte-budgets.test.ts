/**
 * Byte budgets of the tables that keep what clients sent or caused, per tenant (the paying bucket:
 * principal, else IP bucket, never a session) then in all, the global one evicting from the bucket
 * holding the most (docs/tenancy.md): session records, questions waiting for the client (2025
 * server requests), and `subscriptions/listen` filters (real server on 127.0.0.1, other clients on
 * 127.0.0.x).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ByteLedger } from "../../src/byte-ledger.js";
import {
  type ClientReply,
  PendingServerRequests,
  ServerRequestAsker,
  serverRequestSettings,
} from "../../src/protocol/asking/index.js";
import type { ResponseSink } from "../../src/protocol/wire/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { MemorySessionStore, sessionRecordBytes } from "../../src/sessions/index.js";
import { openListen } from "../subscriptions/listen-helpers.js";

function record(id: string, creatorScope: string, principalId: string | null = null) {
  return {
    id,
    principalId,
    creatorScope,
    protocolVersion: "2025-11-25",
    createdAt: 0,
    lastSeenAt: 0,
    logLevel: null,
  };
}

describe("ByteLedger", () => {
  test("the bucket's budget refuses; the global one drops the largest bucket's oldest first", () => {
    const ledger = new ByteLedger<string>({ maxBytesPerBucket: 100, maxBytes: 150 });
    assert.deepEqual(ledger.add("a1", "A", 60), []);
    assert.equal(ledger.add("a2", "A", 41), "bucket-full");
    assert.deepEqual(ledger.add("a2", "A", 40), []);
    assert.deepEqual(ledger.add("b1", "B", 30), []);
    // 130 held; 30 more from B: A (100) pays, oldest first, never B.
    assert.deepEqual(ledger.add("b2", "B", 30), ["a1"]);
    assert.equal(ledger.bytes, 100);
    assert.equal(ledger.bytesOf("A"), 40);
    assert.equal(ledger.bytesOf("B"), 60);
    assert.ok(ledger.remove("b1"));
    assert.equal(ledger.remove("b1"), false);
    assert.equal(new ByteLedger({ maxBytesPerBucket: 10, maxBytes: 0 }).add("x", "A", 1), "full");
  });
});

describe("session records", () => {
  test("a creator's bytes are bounded (long principals), not only its count", async () => {
    const principal = "p".repeat(8_000);
    const store = new MemorySessionStore({
      maxSessionsPerScope: 64,
      maxSessionBytesPerScope: 40_000,
    });
    const scope = `principal:${principal}`;
    const size = sessionRecordBytes(record("s0", scope, principal));
    assert.ok(size > 16_000);
    assert.equal(await store.create(record("s0", scope, principal)), "created");
    assert.equal(await store.create(record("s1", scope, principal)), "created");
    // A third would pass the 40 000 bytes: refused although 64 sessions are allowed.
    assert.equal(await store.create(record("s2", scope, principal)), "scope-full");
    assert.equal(await store.create(record("t0", "ip:203.0.113.9")), "created");
    assert.equal(await store.size(), 3);
  });

  test("the global byte budget evicts the creator holding the most bytes, never a small one", async () => {
    const one = sessionRecordBytes(record("x".repeat(32), "ip:198.51.100.1"));
    const store = new MemorySessionStore({ maxSessionBytes: one * 10 });
    const ended: string[] = [];
    store.onEnded((id) => ended.push(id));
    assert.equal(
      await store.create(record("small-0".padEnd(32, "."), "ip:198.51.100.7")),
      "created",
    );
    for (let i = 0; i < 9; i++) {
      assert.equal(
        await store.create(record(`big-${i}`.padEnd(32, "."), "ip:198.51.100.1")),
        "created",
      );
    }
    // Full (10 records' bytes): each new session of anyone evicts one of the big creator's.
    for (let i = 0; i < 5; i++) {
      assert.equal(
        await store.create(record(`new-${i}`.padEnd(32, "."), "ip:198.51.100.2")),
        "created",
      );
    }
    assert.equal(ended.length, 5);
    assert.ok(
      ended.every((id) => id.startsWith("big-")),
      ended.join(),
    );
    assert.ok((await store.get("small-0".padEnd(32, "."))) !== undefined);
    assert.ok(store.bytes <= one * 10);
  });
});

/** A sink that records what the asker sends (as a 2025 request's SSE stream would carry it). */
function recordingSink(): ResponseSink & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    streamable: true,
    ended: false,
    notify: (json: string) => {
      sent.push(json);
      return Promise.resolve();
    },
  } as unknown as ResponseSink & { sent: string[] };
}

describe("questions waiting for the client", () => {
  test("a bucket's sessions share one byte budget; the global budget withdraws the largest bucket's oldest", async () => {
    const settings = serverRequestSettings({
      maxPerScope: 100,
      maxBytesPerScope: 40_000,
      maxBytes: 60_000,
    });
    const ask = (scope: string, bucket: string) => {
      const sink = recordingSink();
      const asker = new ServerRequestAsker(settings, sink, { scope, bucket }, { elicitation: {} });
      const promise = asker.elicit("x".repeat(15_000), { type: "object", properties: {} });
      promise.catch(() => {});
      return { promise, sink };
    };
    // Two sessions of one address: 2 × 15 KiB fit its 40 000 bytes, the third does not.
    const a1 = ask("session:a1", "ip:127.0.0.2");
    const a2 = ask("session:a2", "ip:127.0.0.2");
    const a3 = ask("session:a3", "ip:127.0.0.2");
    await assert.rejects(
      a3.promise,
      (error: Error & { reason?: string }) => error.reason === "too-many",
    );
    assert.equal(settings.table.size, 2);
    // Another address: its first ask fits its own budget; its second passes 60 000 in all,
    // so 127.0.0.2's oldest (a1) is withdrawn, never 127.0.0.3's.
    const b1 = ask("session:b1", "ip:127.0.0.3");
    assert.equal(settings.table.size, 3);
    const b2 = ask("session:b2", "ip:127.0.0.3");
    await assert.rejects(
      a1.promise,
      (error: Error & { reason?: string }) => error.reason === "too-many",
    );
    assert.ok(a1.sink.sent.some((json) => json.includes("notifications/cancelled")));
    assert.equal(settings.table.size, 3);
    assert.ok(settings.table.bytes <= 60_000);
    // b1 still waits and is answered.
    const id = JSON.parse(b1.sink.sent[0] as string).id as string;
    const reply: ClientReply = { ok: true, result: { action: "decline" } };
    await settings.table.route("session:b1", id, reply);
    assert.deepEqual(await b1.promise, { action: "decline" });
    for (const open of [a2, b2]) void open;
    assert.ok(settings.table instanceof PendingServerRequests);
  });
});

describe("subscriptions/listen filters", () => {
  const uris = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `test://${tag}/${i}/${"u".repeat(2_000)}`);

  test("one address is held to its bytes; at the global bytes the largest bucket's oldest listener ends", async () => {
    const server = createMcpServer({
      maxListenersPerScope: 8,
      maxListenUris: 64,
      maxListenBytesPerScope: 60_000,
      maxListenBytes: 120_000,
      keepAliveMs: 1_000,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    const open = [];
    try {
      // 127.0.0.2: two listeners of 20 URIs × 2 KiB (~42 KB each) pass 60 000 on the second.
      const first = await openListen(
        url,
        { resourceSubscriptions: uris("a", 20) },
        { localAddress: "127.0.0.2" },
      );
      open.push(first);
      await first.next((m) => m.method === "notifications/subscriptions/acknowledged");
      const refused = await openListen(
        url,
        { resourceSubscriptions: uris("b", 20) },
        { localAddress: "127.0.0.2" },
      );
      open.push(refused);
      await refused.ended;
      assert.match(refused.text, /-32000/);
      // Others fill the global 120 000: 127.0.0.3 (~42 KB), then 127.0.0.4 (~42 KB) passes it.
      const third = await openListen(
        url,
        { resourceSubscriptions: uris("c", 20) },
        { localAddress: "127.0.0.3" },
      );
      open.push(third);
      await third.next((m) => m.method === "notifications/subscriptions/acknowledged");
      const small = await openListen(
        url,
        { resourceSubscriptions: uris("d", 5) },
        { localAddress: "127.0.0.4" },
      );
      open.push(small);
      await small.next((m) => m.method === "notifications/subscriptions/acknowledged");
      const fourth = await openListen(
        url,
        { resourceSubscriptions: uris("e", 20) },
        { localAddress: "127.0.0.5" },
      );
      open.push(fourth);
      await fourth.next((m) => m.method === "notifications/subscriptions/acknowledged");
      // The oldest of the largest buckets (127.0.0.2 ties 127.0.0.3; "ip:127.0.0.2" sorts first) ended.
      await first.ended;
      assert.match(first.text, /"resultType":"complete"/);
      assert.equal(server.resources.updated(uris("d", 5)[0] as string), 1);
      await small.next((m) => m.method === "notifications/resources/updated");
      assert.equal(server.concurrency().listeners, 3);
    } finally {
      for (const listen of open) listen.close();
      await server.close();
    }
  });
});
