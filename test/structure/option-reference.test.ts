// The option reference cannot go stale: docs/reference/options.md and docs/reference/cli.md are
// written by `npm run docs:options` from the declared option schemas and the CLI's flag table,
// and this test fails when an option or a flag has no description, when a public options type
// and its schema disagree on the members, or when the committed pages differ from what the
// script writes (run `npm run docs:options` and commit them).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import type { z } from "zod";

import {
  CLI_PAGE,
  OPTIONS_PAGE,
  optionSections,
  renderCliPage,
  renderOptionsPage,
} from "../../scripts/lib/option-reference.js";
import { CLI_FLAGS, type CliFlag } from "../../src/cli/flags.js";
import type {
  RedisBackendsOptions,
  RedisCancellationStoreOptions,
  RedisChangeFeedOptions,
  RedisRateLimitStoreOptions,
  RedisReplyBusOptions,
  RedisTaskStoreOptions,
} from "../../src/redis/index.js";
import type {
  BACKENDS_OPTIONS,
  CANCELLATION_STORE_OPTIONS,
  CHANGE_FEED_OPTIONS,
  RATE_LIMIT_STORE_OPTIONS,
  REPLY_BUS_OPTIONS,
  TASK_STORE_OPTIONS,
} from "../../src/redis/redis-option-declarations.js";
import type {
  DeprecatedFlatOptions,
  HttpOptions,
  LimitOptions,
  ListOptions,
  McpServerOptions,
  SessionOptions,
  TimeoutOptions,
} from "../../src/server/index.js";
import type {
  HTTP_OPTIONS,
  LIMIT_OPTIONS,
  LIST_OPTIONS,
  SERVER_OPTIONS,
  SESSION_OPTIONS,
  TIMEOUT_OPTIONS,
} from "../../src/server/option-declarations.js";

// Compile-time: each public options type has exactly the members its schema declares.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Members<S extends z.ZodRawShape> = keyof S;
const sameMembers: [
  Same<
    Exclude<keyof McpServerOptions, keyof DeprecatedFlatOptions>,
    keyof z.input<typeof SERVER_OPTIONS>
  >,
  Same<keyof HttpOptions, Members<typeof HTTP_OPTIONS>>,
  Same<keyof LimitOptions, Members<typeof LIMIT_OPTIONS>>,
  Same<keyof TimeoutOptions, Members<typeof TIMEOUT_OPTIONS>>,
  Same<keyof ListOptions, Members<typeof LIST_OPTIONS>>,
  Same<keyof SessionOptions, Members<typeof SESSION_OPTIONS>>,
  Same<
    keyof DeprecatedFlatOptions,
    keyof (HttpOptions & LimitOptions & TimeoutOptions & ListOptions)
  >,
  Same<keyof RedisReplyBusOptions, Members<typeof REPLY_BUS_OPTIONS>>,
  Same<keyof RedisChangeFeedOptions, Members<typeof CHANGE_FEED_OPTIONS>>,
  Same<keyof RedisRateLimitStoreOptions, Members<typeof RATE_LIMIT_STORE_OPTIONS>>,
  Same<keyof RedisCancellationStoreOptions, Members<typeof CANCELLATION_STORE_OPTIONS>>,
  Same<keyof RedisTaskStoreOptions, Members<typeof TASK_STORE_OPTIONS>>,
  Same<keyof RedisBackendsOptions, Members<typeof BACKENDS_OPTIONS>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true];

describe("option reference", () => {
  it("every public options type matches its declared schema", () => {
    assert.ok(sameMembers.every(Boolean));
  });

  it("every declared option has a description, what it accepts and a default", () => {
    let count = 0;
    for (const section of optionSections()) {
      for (const entry of section.entries) {
        count++;
        assert.ok(entry.description.trim().length >= 10, `${entry.path}: description`);
        assert.ok(entry.accepts.trim() !== "", `${entry.path}: accepts`);
        assert.ok(entry.default.trim() !== "", `${entry.path}: default`);
      }
    }
    assert.ok(count > 50, `only ${count} options listed`);
  });

  it("every CLI flag has a description", () => {
    for (const [name, flag] of Object.entries(CLI_FLAGS) as [string, CliFlag][]) {
      assert.ok(flag.description.trim().length >= 8, `--${name}: description`);
      assert.equal(flag.value === undefined, flag.type === "boolean", `--${name}: value`);
    }
  });

  it("the committed pages are what `npm run docs:options` writes", () => {
    for (const [page, text] of [
      [OPTIONS_PAGE, renderOptionsPage()],
      [CLI_PAGE, renderCliPage()],
    ] as const) {
      const committed = readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
      assert.equal(committed, text, `${page} is stale: run npm run docs:options and commit it`);
    }
  });
});
