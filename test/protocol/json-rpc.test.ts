import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  classifyEra,
  classifyMessage,
  errorResponseJson,
  isLoggingLevel,
  loggingLevelRank,
  successResponseJson,
} from "../../src/protocol/index.js";

describe("classifyMessage", () => {
  test("requests, notifications, responses", () => {
    assert.equal(classifyMessage({ jsonrpc: "2.0", id: 1, method: "ping" }).kind, "request");
    assert.equal(classifyMessage({ jsonrpc: "2.0", id: null, method: "ping" }).kind, "request");
    assert.equal(
      classifyMessage({ jsonrpc: "2.0", method: "notifications/initialized" }).kind,
      "notification",
    );
    assert.equal(classifyMessage({ jsonrpc: "2.0", id: 3, result: {} }).kind, "response");
    assert.equal(
      classifyMessage({ jsonrpc: "2.0", id: 3, error: { code: 1, message: "x" } }).kind,
      "response",
    );
  });

  test("invalid shapes keep a usable id", () => {
    for (const body of [[], [1], "x", 5, null, {}, { jsonrpc: "1.0", id: 1, method: "ping" }]) {
      assert.equal(classifyMessage(body).kind, "invalid", JSON.stringify(body));
    }
    assert.deepEqual(classifyMessage({ jsonrpc: "2.0", id: 4, method: 12 }), {
      kind: "invalid",
      id: 4,
    });
    assert.deepEqual(classifyMessage({ id: "a", method: "ping" }), { kind: "invalid", id: "a" });
    assert.deepEqual(classifyMessage({ jsonrpc: "2.0", id: {}, method: "ping" }), {
      kind: "invalid",
      id: null,
    });
  });

  test("fractional and unsafe integer ids are invalid (they could not be echoed as sent)", () => {
    const unsafe = JSON.parse('{"jsonrpc":"2.0","id":1152921504606846977,"method":"ping"}');
    for (const body of [{ jsonrpc: "2.0", id: 0.5, method: "ping" }, unsafe]) {
      assert.deepEqual(classifyMessage(body), { kind: "invalid", id: null });
    }
    const largestSafe = { jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method: "ping" };
    assert.equal(classifyMessage(largestSafe).kind, "request");
    assert.equal(classifyMessage({ jsonrpc: "2.0", id: -3, method: "ping" }).kind, "request");
  });
});

describe("serialisers", () => {
  test("ids are echoed as sent; data only when given", () => {
    assert.equal(successResponseJson('a"b', "{}"), '{"jsonrpc":"2.0","id":"a\\"b","result":{}}');
    assert.equal(successResponseJson(null, "{}"), '{"jsonrpc":"2.0","id":null,"result":{}}');
    assert.equal(
      errorResponseJson(0, -32601, "m"),
      '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"m"}}',
    );
    assert.deepEqual(JSON.parse(errorResponseJson(1, -32602, "m", { errors: [] })).error.data, {
      errors: [],
    });
  });
});

describe("classifyEra", () => {
  test("no header or a supported 2025 revision is the 2025 era; anything else is 400", () => {
    assert.equal(classifyEra(undefined).era, "2025");
    assert.equal(classifyEra("2025-03-26").era, "2025");
    const rejected = classifyEra("2024-11-05\u0000");
    assert.equal(rejected.era, "rejected");
    if (rejected.era === "rejected") {
      assert.equal(rejected.status, 400);
      assert.doesNotMatch(rejected.json, /\\u0000/);
    }
  });
});

describe("logging levels", () => {
  test("eight levels in severity order", () => {
    assert.equal(isLoggingLevel("emergency"), true);
    assert.equal(isLoggingLevel("verbose"), false);
    assert.ok(loggingLevelRank("error") > loggingLevelRank("warning"));
  });
});
