/**
 * The door suite (test/doors/door-suite.ts) against `server.fetch` served by another runtime,
 * driven from Node by the official SDK 1.x and 2.x clients, and the time from a client's
 * disconnect to the handler's `ctx.signal` aborting there. Each `<runtime>.test.ts` beside it
 * runs this for one runtime. Not a test file itself.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

import { doorSuite } from "../doors/door-suite.js";
import type { WaitRecord } from "../doors/fixtures/door-tools.js";
import { type RuntimeName, startOn, whyNot } from "./hosts.js";

const LABELS: Record<RuntimeName, string> = {
  bun: "Bun.serve",
  deno: "Deno.serve",
  workerd: "a Cloudflare Worker (workerd)",
};

async function until(
  read: () => Promise<WaitRecord | null>,
  check: (record: WaitRecord) => boolean,
  what: string,
): Promise<WaitRecord> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const record = await read();
    if (record !== null && check(record)) return record;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

export function runtimeSuite(name: RuntimeName): void {
  const reason = whyNot(name);
  if (reason !== null) {
    test(`door suite on ${LABELS[name]}`, { skip: reason }, () => {});
    return;
  }
  doorSuite(`server.fetch on ${LABELS[name]}`, () => startOn(name));

  test(`${LABELS[name]}: a client's disconnect aborts ctx.signal (latency measured)`, async (t) => {
    const door = await startOn(name);
    const target = door.target;
    assert.ok(target.kind === "http" && target.records !== undefined);
    const records = target.records;
    const client = new Client(
      { name: `latency-${name}`, version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    try {
      await client.connect(
        new StreamableHTTPClientTransport(target.url, {
          requestInit: { headers: { authorization: "Bearer door-suite-token-alice" } },
        }),
      );
      const latencies: number[] = [];
      // The first round warms the path up; the others are measured.
      for (let round = 0; round < 6; round++) {
        const tag = `latency-${name}-${round}-${Math.random()}`;
        const controller = new AbortController();
        const call = client
          .callTool({ name: "wait", arguments: { ms: 30_000, tag } }, { signal: controller.signal })
          .catch((error: unknown) => error);
        await until(
          () => records(tag),
          () => true,
          "the call to start",
        );
        const closedAt = performance.timeOrigin + performance.now();
        controller.abort();
        const record = await until(
          () => records(tag),
          (r) => r.abortedAtWall !== null,
          "the abort in the runtime",
        );
        await call;
        assert.equal(record.source, "disconnect");
        assert.equal(record.finished, false);
        if (round > 0) latencies.push((record.abortedAtWall as number) - closedAt);
      }
      const sorted = [...latencies].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] as number;
      t.diagnostic(
        `${name}: disconnect → ctx.signal abort: median ${median.toFixed(1)} ms; rounds ${latencies
          .map((l) => l.toFixed(1))
          .join(", ")} ms`,
      );
      // Generous: a loaded 2-core host. The figure is the diagnostic above.
      assert.ok(median < 1_000, `median ${median.toFixed(1)} ms`);
    } finally {
      await client.close();
      await door.close();
    }
  });
}
