import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import {
  isWellFormedSessionId,
  MemorySessionStore,
  mintSessionId,
  SessionJanitor,
} from "../../src/sessions/index.js";

import { runSessionStoreContract, sessionRecord } from "./session-store-contract.js";

const record = (id: string, at: number) => sessionRecord(id, "ip:127.0.0.1", at);

runSessionStoreContract("MemorySessionStore", async (options) => new MemorySessionStore(options));

describe("MemorySessionStore", () => {
  test("a creator evicted down to one session can always create again (no stale counts)", async () => {
    const store = new MemorySessionStore({ maxSessions: 2, maxSessionsPerScope: 2 });
    for (let i = 0; i < 50; i++) {
      const scope = `ip:192.0.2.${i % 3}`;
      assert.equal(await store.create(sessionRecord(`s${i}`, scope, i)), "created");
      assert.ok((await store.size()) <= 2);
    }
    for (let i = 0; i < 50; i++) await store.delete(`s${i}`);
    assert.equal(await store.size(), 0);
    assert.equal(await store.create(sessionRecord("again", "ip:192.0.2.0", 99)), "created");
  });

  test("get refreshes lastSeenAt; cleanup removes sessions idle strictly longer than the TTL", async () => {
    let now = 1000;
    const store = new MemorySessionStore({ clock: () => now });
    await store.create(record("old", 0));
    await store.create(record("used", 0));
    now = 5000;
    await store.get("used");
    assert.equal(await store.cleanup(5000, 5000), 0, "exactly the TTL is kept");
    assert.equal(await store.cleanup(4999, 5000), 1);
    assert.equal(await store.get("old"), undefined);
    assert.equal((await store.get("used"))?.lastSeenAt, 5000);
  });

  test("onEnded hears every session the store ends: delete, cleanup, eviction", async () => {
    const store = new MemorySessionStore({ maxSessions: 2, clock: () => 0 });
    const ended: string[] = [];
    const stop = store.onEnded((id) => ended.push(id));
    store.onEnded(() => {
      throw new Error("a listener's bug");
    });
    await store.create(record("a", 0));
    await store.create(record("b", 0));
    await store.create(record("c", 0)); // evicts one of the two
    assert.equal(ended.length, 1);
    await store.delete("c");
    assert.equal(await store.cleanup(0, 10), 1);
    assert.equal(ended.length, 3);
    assert.deepEqual(new Set(ended), new Set(["a", "b", "c"]));
    stop();
    await store.create(record("d", 0));
    await store.delete("d");
    assert.equal(ended.length, 3);
  });

  test("setLogLevel and delete", async () => {
    const store = new MemorySessionStore();
    await store.create(record("s", 0));
    assert.equal(await store.setLogLevel("s", "error"), true);
    assert.equal((await store.get("s"))?.logLevel, "error");
    assert.equal(await store.setLogLevel("nope", "error"), false);
    assert.equal(await store.delete("s"), true);
    assert.equal(await store.delete("s"), false);
  });

  test("bad maxSessions or maxSessionsPerScope throws", () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      assert.throws(() => new MemorySessionStore({ maxSessions: bad }), InvalidOptionError);
      assert.throws(() => new MemorySessionStore({ maxSessionsPerScope: bad }), InvalidOptionError);
    }
  });

  test("the janitor sweeps and stops", async () => {
    const store = new MemorySessionStore();
    await store.create(record("stale", 0));
    const janitor = new SessionJanitor(store, 10, 60_000, () => 1000);
    assert.equal(await janitor.sweep(), 1);
    janitor.stop();
    janitor.stop();
  });
});

describe("session ids", () => {
  test("192 bits, base64url, visible ASCII, unique", () => {
    const ids = new Set(Array.from({ length: 1000 }, mintSessionId));
    assert.equal(ids.size, 1000);
    for (const id of ids) {
      assert.match(id, /^[A-Za-z0-9_-]{32}$/);
      assert.equal(isWellFormedSessionId(id), true);
    }
    assert.equal(isWellFormedSessionId("short"), false);
    assert.equal(isWellFormedSessionId("has space and more chars"), false);
  });
});
