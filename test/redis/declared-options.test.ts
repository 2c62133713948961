// The Redis cancellation store, task store, reply bus, change feed and rate-limit store read their
// options with the declared
// schemas of src/redis/redis-option-declarations.ts: a bad value throws InvalidOptionError at
// construction naming the option (before any connection is made, so nothing is left open), and
// each store uses the declared default of an option it is not given.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { InvalidOptionError } from "../../src/errors.js";
import { listOptions } from "../../src/option-schema.js";
import {
  createRedisBackends,
  RedisCancellationStore,
  RedisChangeFeed,
  RedisRateLimitStore,
  RedisReplyBus,
  RedisTaskStore,
} from "../../src/redis/index.js";
import {
  BACKENDS_OPTIONS,
  CANCELLATION_STORE_OPTIONS,
  CHANGE_FEED_OPTIONS,
  RATE_LIMIT_STORE_OPTIONS,
  REPLY_BUS_OPTIONS,
  TASK_STORE_OPTIONS,
} from "../../src/redis/redis-option-declarations.js";

/** A URL nothing listens on: the stores are never meant to connect here. */
const NOWHERE = "redis://127.0.0.1:1";

type Make = (options: Record<string, unknown>) => { close(): Promise<void> };

const STORES: ReadonlyArray<{
  readonly name: string;
  readonly make: Make;
  readonly shape: z.ZodRawShape;
  readonly bad: ReadonlyArray<readonly [string, unknown]>;
}> = [
  {
    name: "RedisCancellationStore",
    make: (options) => new RedisCancellationStore(options as never),
    shape: CANCELLATION_STORE_OPTIONS,
    bad: [
      ["maxRows", 0],
      ["maxRowsPerScope", 1.5],
      ["catchUpLength", 0],
      ["shareAfterMs", 60_001],
      ["leaseMs", 2],
      ["nodeId", "has space"],
      ["clock", 5],
      ["shards", 1_025],
    ],
  },
  {
    name: "RedisTaskStore",
    make: (options) => new RedisTaskStore(options as never),
    shape: TASK_STORE_OPTIONS,
    bad: [
      ["maxTasksPerScope", 0],
      ["maxTasks", -1],
      ["maxResultBytes", Number.POSITIVE_INFINITY],
      ["maxTaskBytesPerScope", "1"],
      ["maxTaskBytes", 0.5],
      ["leaseMs", 2],
      ["nodeId", ""],
      ["shards", 0],
    ],
  },
  {
    name: "RedisReplyBus",
    make: (options) => new RedisReplyBus(options as never),
    shape: REPLY_BUS_OPTIONS,
    bad: [["maxMessageBytes", 0]],
  },
  {
    name: "RedisChangeFeed",
    make: (options) => new RedisChangeFeed(options as never),
    shape: CHANGE_FEED_OPTIONS,
    bad: [],
  },
  {
    name: "RedisRateLimitStore",
    make: (options) => new RedisRateLimitStore(options as never),
    shape: RATE_LIMIT_STORE_OPTIONS,
    bad: [["maxBuckets", 1.5]],
  },
];

/** What every store refuses the same way. */
const SHARED_BAD: ReadonlyArray<readonly [string, unknown]> = [
  ["redis", ""],
  ["redis", { not: "a client" }],
  ["prefix", "a{b}"],
  ["prefix", ""],
  ["commandTimeoutMs", 0],
  ["commandTimeoutMs", 2 ** 31],
  ["logger", "console"],
];

describe("Redis store options, declared", () => {
  for (const store of STORES) {
    it(`${store.name} refuses a bad value at construction, naming the option`, () => {
      for (const [option, value] of [...SHARED_BAD, ...store.bad]) {
        assert.throws(
          () => store.make({ redis: NOWHERE, [option]: value }),
          (error: unknown) =>
            error instanceof InvalidOptionError &&
            error.option === option &&
            error.message.startsWith(`option ${option} must be `),
          `${store.name} ${option}=${String(value)}`,
        );
      }
      for (const options of [null, undefined, "redis://127.0.0.1:1"]) {
        assert.throws(
          () => store.make(options as never),
          (error: unknown) => error instanceof InvalidOptionError && error.option === "options",
        );
      }
    });

    it(`${store.name} declares every option with a description and a default`, () => {
      const entries = listOptions(z.object(store.shape));
      assert.deepEqual(
        entries.map((entry) => entry.path),
        Object.keys(store.shape),
      );
      for (const entry of entries) {
        assert.ok(entry.description.length >= 10, `${store.name}.${entry.path}: description`);
        assert.notEqual(entry.default, "", `${store.name}.${entry.path}: default`);
      }
    });
  }

  it("createRedisBackends refuses a bad option before any store is built, naming it under its group", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["options", null as never],
      ["leaseMs", { leaseMs: 2 }],
      ["prefix", { prefix: "{x}" }],
      ["nodeId", { nodeId: "has space" }],
      ["commandTimeoutMs", { commandTimeoutMs: 0 }],
      ["logger", { logger: 1 }],
      ["cancellation", { cancellation: 5 }],
      ["cancellation.maxRows", { cancellation: { maxRows: 0 } }],
      ["cancellation.shards", { cancellation: { shards: 2_000 } }],
      ["tasks.maxTasks", { tasks: { maxTasks: -1 } }],
      ["replies.maxMessageBytes", { replies: { maxMessageBytes: 0 } }],
      ["changes", { changes: "none" }],
      ["registry", { registry: [] }],
      ["sessions", { sessions: true }],
    ];
    for (const [option, options] of cases) {
      assert.throws(
        () => createRedisBackends(NOWHERE, options as never),
        (error: unknown) =>
          error instanceof InvalidOptionError &&
          error.option === option &&
          error.message.startsWith(`option ${option} must be `),
        option,
      );
    }
    assert.deepEqual(
      listOptions(z.object(BACKENDS_OPTIONS)).map((entry) => entry.path),
      Object.keys(BACKENDS_OPTIONS),
    );
  });

  it("a store given only `redis` takes the declared defaults", async () => {
    const bus = new RedisReplyBus({ redis: NOWHERE, logger: () => {} });
    const limits = new RedisRateLimitStore({ redis: NOWHERE, logger: () => {} });
    try {
      const fields = bus as unknown as { timeoutMs: number; maxMessageBytes: number };
      assert.equal(fields.timeoutMs, 1_000);
      assert.equal(fields.maxMessageBytes, 2_097_152);
      const own = limits as unknown as { timeoutMs: number; prefix: string };
      assert.equal(own.timeoutMs, 250);
      assert.equal(own.prefix, "conduit-mcp");
    } finally {
      await Promise.all([bus.close(), limits.close()]);
    }
  });
});
