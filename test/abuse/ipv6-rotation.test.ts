/**
 * Abuse: one IPv6 /64 rotating its addresses stays one scope. Through a trusted proxy,
 * 20 addresses of one /64 share one scope — one in-flight set (any of them can cancel the
 * others' calls), one row quota, one concurrency bound — while another /64 is another scope.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "../server/fixtures.js";

const PREFIX = "2001:db8:aa:bb";
const SCOPE = `ip:${PREFIX}::/64`;
const from = (address: string) => ({ "x-forwarded-for": address });
/** The n-th rotating address: the low 64 bits change, the /64 does not. */
const rotating = (n: number) =>
  `${PREFIX}:${((n * 7919) % 65_536).toString(16)}:${n.toString(16)}:1:${n}`;

describe("IPv6 /64 rotation", () => {
  test("20 addresses of one /64 are one scope: one in-flight set, one row quota, one concurrency bound", async () => {
    const registry = new CancellationRegistry({ maxRowsPerScope: 5, janitor: false });
    const server = createMcpServer({
      tools: testTools(),
      registry,
      trustProxy: "127.0.0.1",
      maxConcurrentRequestsPerScope: 20,
    });
    const { url } = await server.listen();
    try {
      const calls = Array.from({ length: 20 }, (_, n) =>
        // Stubborn calls: a cancelled one keeps its row until it settles, so rows add up.
        rpc(url, callBody(`r${n}`, "stubborn", { ms: 1_500, tag: `v6-${n}` }), from(rotating(n))),
      );
      await until(() => server.concurrency().requests === 20, 3_000, "20 calls");
      for (let n = 0; n < 20; n++) assert.equal(probes.get(`v6-${n}`)?.scope, SCOPE);
      assert.equal(server.concurrency().scopes, 1, "one counter for the whole /64");
      for (let n = 0; n < 20; n++) assert.equal(await registry.isInFlight(`r${n}`, SCOPE), true);

      // The bound holds across the rotation: a 21st address of the /64 is refused...
      const refused = await rpc(url, callBody("r20", "echo", { text: "x" }), from(rotating(20)));
      assert.equal(refused.status, 429);
      // ...while another /64 is another scope and is served.
      const other = await rpc(
        url,
        callBody("o1", "echo", { text: "x" }),
        from("2001:db8:aa:bc::1"),
      );
      assert.equal(other.status, 200);

      // Another /64 cannot cancel the rotating /64's calls (its cancel lands in its own scope).
      assert.equal((await rpc(url, cancelBody("r3"), from("2001:db8:aa:bc::1"))).status, 202);
      assert.equal(probes.get("v6-3")?.abortedAt, null);

      // One address of the /64 cancels a call started by another one: same in-flight set.
      assert.equal((await rpc(url, cancelBody("r3", "rotated"), from(rotating(17)))).status, 202);
      assert.equal((await calls[3])?.json.error.code, -32800);
      assert.equal(probes.get("v6-3")?.reason?.reason, "rotated");

      // One row quota: cancels from ever new addresses of the /64 all count against the same
      // 5 rows (r3's is the first); beyond it they are refused, as for one address.
      const outcomes: number[] = [];
      for (let n = 4; n < 13; n++) {
        const answer = await rpc(url, cancelBody(`r${n}`), from(rotating(100 + n)));
        outcomes.push(answer.status === 200 && answer.json?.error !== undefined ? 0 : 1);
      }
      assert.deepEqual(outcomes, [1, 1, 1, 1, 0, 0, 0, 0, 0]);
      assert.equal(await registry.size(), 5);

      await Promise.all(calls);
      await until(() => server.concurrency().requests === 0, 3_000, "counters back to 0");
      assert.equal(server.concurrency().scopes, 0);
    } finally {
      await server.close();
      await registry.close();
    }
  });
});
