/**
 * The {@link SessionStore} contract suite: every store (memory, Redis) runs it through its own
 * factory. Not a test file itself: `runSessionStoreContract(name, factory)` declares the tests.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  type SessionRecord,
  type SessionStore,
  sessionRecordBytes,
} from "../../src/sessions/session-store.js";

/** What the factory is asked for; each test gets a fresh, empty store. */
export interface ContractStoreOptions {
  readonly maxSessions?: number;
  readonly maxSessionsPerScope?: number;
  readonly maxSessionBytesPerScope?: number;
  readonly maxSessionBytes?: number;
  /** The store's clock (what `get` stamps as `lastSeenAt`). */
  readonly clock?: () => number;
}

/** Builds a fresh store; the suite closes it. */
export type ContractStoreFactory = (options: ContractStoreOptions) => Promise<SessionStore>;

/** A record created by `creatorScope` at `at`. */
export function sessionRecord(id: string, creatorScope: string, at = 0): SessionRecord {
  return {
    id,
    principalId: null,
    creatorScope,
    protocolVersion: "2025-11-25",
    createdAt: at,
    lastSeenAt: at,
    logLevel: null,
  };
}

/**
 * Declares the contract tests for one store.
 *
 * @example
 * ```ts
 * runSessionStoreContract("MemorySessionStore", async (options) => new MemorySessionStore(options));
 * ```
 */
export function runSessionStoreContract(name: string, factory: ContractStoreFactory): void {
  async function withStore(
    options: ContractStoreOptions,
    body: (store: SessionStore) => Promise<void>,
  ): Promise<void> {
    const store = await factory(options);
    try {
      await body(store);
    } finally {
      await store.close();
    }
  }

  describe(`SessionStore contract: ${name}`, () => {
    it("create, get (refreshed), setLogLevel and delete round-trip every field", async () => {
      let now = 1_000;
      await withStore({ clock: () => now }, async (store) => {
        const record = { ...sessionRecord("s1", "principal:alice", 1_000), principalId: "alice" };
        assert.equal(await store.create(record), "created");
        now = 2_000;
        assert.deepEqual(await store.get("s1"), { ...record, lastSeenAt: 2_000 });
        assert.equal(await store.setLogLevel("s1", "debug"), true);
        assert.equal((await store.get("s1"))?.logLevel, "debug");
        assert.equal(await store.setLogLevel("nope", "debug"), false);
        assert.equal(await store.size(), 1);
        assert.equal(await store.delete("s1"), true);
        assert.equal(await store.delete("s1"), false);
        assert.equal(await store.get("s1"), undefined);
      });
    });

    it("keeps the client's askable capabilities (a flag list) with the session", async () => {
      await withStore({}, async (store) => {
        const record = {
          ...sessionRecord("c1", "ip:203.0.113.7"),
          clientCapabilities: "elicitation.form roots",
        };
        assert.equal(await store.create(record), "created");
        assert.equal((await store.get("c1"))?.clientCapabilities, "elicitation.form roots");
        await store.create({ ...sessionRecord("c2", "ip:203.0.113.7"), clientCapabilities: "" });
        assert.equal((await store.get("c2"))?.clientCapabilities, "");
      });
    });

    it("a creator at its per-scope quota is refused with scope-full; other creators are not", async () => {
      await withStore({ maxSessionsPerScope: 2 }, async (store) => {
        assert.equal(await store.create(sessionRecord("a1", "ip:203.0.113.7")), "created");
        assert.equal(await store.create(sessionRecord("a2", "ip:203.0.113.7")), "created");
        assert.equal(await store.create(sessionRecord("a3", "ip:203.0.113.7")), "scope-full");
        assert.equal(await store.get("a3"), undefined);
        assert.equal(await store.create(sessionRecord("b1", "ip:198.51.100.1")), "created");
        // A deleted session frees its creator's quota.
        assert.equal(await store.delete("a1"), true);
        assert.equal(await store.create(sessionRecord("a3", "ip:203.0.113.7")), "created");
        assert.equal(await store.size(), 3);
      });
    });

    it("re-creating an existing id replaces it and does not count twice", async () => {
      await withStore({ maxSessionsPerScope: 1 }, async (store) => {
        assert.equal(await store.create(sessionRecord("x", "ip:203.0.113.7", 0)), "created");
        assert.equal(await store.create(sessionRecord("x", "ip:203.0.113.7", 5)), "created");
        assert.equal(await store.size(), 1);
      });
    });

    it("at the global bound the least recently used session of the largest creator is evicted", async () => {
      let now = 0;
      await withStore(
        { maxSessions: 4, maxSessionsPerScope: 3, clock: () => now },
        async (store) => {
          // The hog holds three sessions, the bystander one: the store is full.
          assert.equal(await store.create(sessionRecord("h1", "ip:192.0.2.66", 0)), "created");
          assert.equal(await store.create(sessionRecord("h2", "ip:192.0.2.66", 1)), "created");
          assert.equal(await store.create(sessionRecord("h3", "ip:192.0.2.66", 2)), "created");
          assert.equal(await store.create(sessionRecord("v1", "ip:198.51.100.1", 3)), "created");
          now = 10;
          await store.get("h1"); // h1 is used again: h2 is now the hog's least recently used
          // A newcomer is never refused by the global bound: the hog loses h2.
          assert.equal(await store.create(sessionRecord("n1", "ip:203.0.113.9", 11)), "created");
          assert.equal(await store.size(), 4);
          assert.equal(await store.get("h2"), undefined, "the hog's least recently used went");
          assert.notEqual(await store.get("v1"), undefined, "the bystander's session stays");
          assert.notEqual(await store.get("h1"), undefined);
          assert.notEqual(await store.get("n1"), undefined);
        },
      );
    });

    it("a hog cannot evict a bystander: the largest creator pays, even when it is the creator", async () => {
      await withStore({ maxSessions: 3, maxSessionsPerScope: 10 }, async (store) => {
        assert.equal(await store.create(sessionRecord("v1", "ip:198.51.100.1", 0)), "created");
        for (let i = 0; i < 20; i++) {
          assert.equal(
            await store.create(sessionRecord(`h${i}`, "ip:192.0.2.66", i + 1)),
            "created",
          );
        }
        assert.equal(await store.size(), 3);
        assert.notEqual(await store.get("v1"), undefined, "20 creations never evicted v1");
      });
    });

    it("among creators holding equally many, the one that reached the count last pays", async () => {
      let now = 0;
      await withStore({ maxSessions: 3 }, async (store) => {
        await store.create(sessionRecord("established", "ip:198.51.100.1", 0));
        await store.create(sessionRecord("other", "ip:198.51.100.2", 1));
        // A rotating flooder: one session per address, each creator as large as everyone else.
        for (let i = 0; i < 10; i++) {
          now = 10 + i;
          assert.equal(
            await store.create(sessionRecord(`r${i}`, `ip:192.0.2.${i}`, now)),
            "created",
          );
          assert.notEqual(await store.get("established"), undefined, `kept after r${i}`);
          assert.notEqual(await store.get("other"), undefined, `kept after r${i}`);
        }
        assert.equal(await store.size(), 3);
        assert.notEqual(await store.get("r9"), undefined, "the flooder's newest is the survivor");
      });
    });

    it("a creator's record bytes are bounded (long principals), not only its count", async () => {
      const principal = "p".repeat(8_000);
      const long = (id: string) => ({
        ...sessionRecord(id, `principal:${principal}`),
        principalId: principal,
      });
      assert.ok(sessionRecordBytes(long("a")) > 16_000);
      await withStore({ maxSessionBytesPerScope: 40_000 }, async (store) => {
        assert.equal(await store.create(long("a")), "created");
        assert.equal(await store.create(long("b")), "created");
        assert.equal(await store.create(long("c")), "scope-full");
        assert.equal(await store.create(sessionRecord("d", "ip:203.0.113.9")), "created");
        // A deleted record gives its bytes back.
        assert.equal(await store.delete("a"), true);
        assert.equal(await store.create(long("c")), "created");
        assert.equal(await store.size(), 3);
      });
    });

    it("at the global byte bound the creator holding the most bytes pays, never a small one", async () => {
      const one = sessionRecordBytes(sessionRecord("x".repeat(8), "ip:198.51.100.1"));
      await withStore({ maxSessionBytes: one * 10 }, async (store) => {
        const ended: string[] = [];
        store.onEnded?.((id) => ended.push(id));
        let at = 1;
        assert.equal(
          await store.create(sessionRecord("small-00", "ip:198.51.100.7", at++)),
          "created",
        );
        for (let i = 0; i < 9; i++) {
          assert.equal(
            await store.create(sessionRecord(`big-000${i}`, "ip:198.51.100.1", at++)),
            "created",
          );
        }
        for (let i = 0; i < 5; i++) {
          assert.equal(
            await store.create(sessionRecord(`new-000${i}`, "ip:198.51.100.2", at++)),
            "created",
          );
        }
        assert.equal(await store.size(), 10);
        assert.notEqual(await store.get("small-00"), undefined);
        for (let i = 0; i < 5; i++) assert.equal(await store.get(`big-000${i}`), undefined);
        assert.notEqual(await store.get("big-0005"), undefined);
      });
    });

    it("a bound of 0 refuses every session with full", async () => {
      await withStore({ maxSessions: 0 }, async (store) => {
        assert.equal(await store.create(sessionRecord("x", "ip:203.0.113.7")), "full");
        assert.equal(await store.size(), 0);
      });
    });

    it("cleanup removes sessions idle strictly longer than the TTL and frees their quota", async () => {
      let now = 0;
      await withStore({ maxSessionsPerScope: 2, clock: () => now }, async (store) => {
        await store.create(sessionRecord("old", "ip:203.0.113.7", 0));
        await store.create(sessionRecord("kept", "ip:203.0.113.7", 0));
        now = 50;
        await store.get("kept");
        assert.equal(await store.cleanup(100, 100), 0, "idle exactly the TTL is kept");
        assert.equal(await store.cleanup(99, 100), 1, "old is 100 ms idle, kept 50 ms");
        assert.equal(await store.get("old"), undefined);
        assert.equal(await store.create(sessionRecord("new", "ip:203.0.113.7", 100)), "created");
      });
    });
  });
}
