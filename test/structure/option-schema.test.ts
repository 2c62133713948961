// Options are checked one way (src/option-schema.ts). Node.js timers take at most 2^31 − 1 ms and
// fire after 1 ms for anything larger, so every option that becomes a timer delay is refused above
// it: a huge janitor interval must fail at construction, not sweep every millisecond.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { CancellationJanitor } from "../../src/cancellation/janitor.js";
import {
  CancellationRegistry,
  createMcpServer,
  InvalidOptionError,
  MemorySessionStore,
} from "../../src/index.js";
import { WorkerPool } from "../../src/isolation/index.js";
import { MAX_TIMER_MS, OPTION, readOption } from "../../src/option-schema.js";
import { RedisCancellationStore, RedisSessionStore } from "../../src/redis/index.js";

const TOO_LONG = MAX_TIMER_MS + 1;

function refuses(build: () => unknown, option: string, pattern?: RegExp): void {
  assert.throws(build, (error: unknown) => {
    assert.ok(error instanceof InvalidOptionError, String(error));
    assert.equal(error.option, option);
    assert.equal(error.code, "CONDUIT_ERR_INVALID_OPTION");
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  });
}

describe("option schema", () => {
  it("refuses a janitor interval above the timer limit, accepts the limit itself", () => {
    refuses(
      () => new CancellationRegistry({ janitorIntervalMs: TOO_LONG }),
      "janitorIntervalMs",
      /up to 2147483647; got 2147483648/,
    );
    refuses(
      () => new CancellationJanitor({ intervalMs: 2 ** 40, sweep: async () => 0 }),
      "janitorIntervalMs",
    );
    const registry = new CancellationRegistry({ janitorIntervalMs: MAX_TIMER_MS });
    registry.close();
  });

  it("refuses server timer options above the limit and wrong types, keeps the defaults", () => {
    for (const option of [
      "keepAliveMs",
      "closeGraceMs",
      "streamCancelTimeoutMs",
      "bodyTimeoutMs",
      "headersTimeoutMs",
      "keepAliveTimeoutMs",
    ]) {
      refuses(() => createMcpServer({ [option]: TOO_LONG }), option, /2147483647/);
    }
    refuses(() => createMcpServer({ maxBodyBytes: 0 }), "maxBodyBytes", /a positive integer/);
    refuses(() => createMcpServer({ metrics: "yes" as never }), "metrics", /a boolean/);
    refuses(() => createMcpServer({ name: "" }), "name", /1-200 characters/);
    refuses(
      () => createMcpServer({ sessions: { maxSessions: -1 } }),
      "sessions.maxSessions",
      /non-negative integer or Infinity/,
    );
  });

  it("refuses timer options of the worker pool and the Redis stores above the limit", () => {
    refuses(() => new WorkerPool({ idleTimeoutMs: TOO_LONG }), "idleTimeoutMs");
    const pool = new WorkerPool({ idleTimeoutMs: Number.POSITIVE_INFINITY });
    void pool.close();
    const redis = "redis://127.0.0.1:1";
    refuses(() => new RedisCancellationStore({ redis, leaseMs: TOO_LONG }), "leaseMs");
    refuses(
      () => new RedisCancellationStore({ redis, commandTimeoutMs: TOO_LONG }),
      "commandTimeoutMs",
    );
    refuses(() => new RedisSessionStore({ redis, commandTimeoutMs: TOO_LONG }), "commandTimeoutMs");
    refuses(() => new MemorySessionStore({ maxSessions: 1.5 }), "sessions.maxSessions");
  });

  it("readOption: undefined yields the fallback, a good value passes unchanged", () => {
    assert.equal(readOption(OPTION.timerMs, "x", undefined, 7), 7);
    assert.equal(readOption(OPTION.positiveLimit, "x", Number.POSITIVE_INFINITY, 1), Infinity);
    assert.equal(readOption(OPTION.timerOrZeroMs, "x", 0, 5), 0);
    refuses(() => readOption(OPTION.positiveInteger, "x", Number.NaN, 1), "x", /got NaN/);
  });
});
