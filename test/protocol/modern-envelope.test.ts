/**
 * The 2026-07-28 envelope helpers in isolation
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http):
 * the era claim, the base64 sentinel of standard header values, the ladder's order.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  checkModernRequest,
  decodeHeaderValue,
  type JsonRpcRequest,
  looksModernVersion,
  modernClaim,
} from "../../src/protocol/index.js";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

function request(method: string, params: Record<string, unknown>): JsonRpcRequest {
  return { jsonrpc: "2.0", id: 9, method, params };
}

describe("modern envelope", () => {
  test("modernClaim reads only params._meta's protocolVersion", () => {
    assert.equal(modernClaim({ _meta: META }), "2026-07-28");
    assert.equal(modernClaim({ _meta: { progressToken: 1 } }), undefined);
    assert.equal(modernClaim(undefined), undefined);
    assert.equal(modernClaim({ _meta: null }), undefined);
    assert.equal(modernClaim("x"), undefined);
  });

  test("looksModernVersion: dates from 2026-07-28 on", () => {
    assert.equal(looksModernVersion("2026-07-28"), true);
    assert.equal(looksModernVersion("2027-01-01"), true);
    assert.equal(looksModernVersion("2025-11-25"), false);
    assert.equal(looksModernVersion("v999.0.0"), false);
  });

  test("decodeHeaderValue: the =?base64?…?= sentinel carries UTF-8; anything else is literal", () => {
    const encoded = `=?base64?${Buffer.from("héllo wörld").toString("base64")}?=`;
    assert.equal(decodeHeaderValue(encoded), "héllo wörld");
    assert.equal(decodeHeaderValue("  echo "), "echo");
    assert.equal(decodeHeaderValue("ZWNobw=="), "ZWNobw==", "no wrapper: literal");
    assert.equal(decodeHeaderValue("=?base64?ZWNo?="), "ech");
    assert.equal(decodeHeaderValue("=?base64?ZWN?="), null, "bad padding");
    assert.equal(decodeHeaderValue("=?base64?ZW!o?="), null, "bad character");
    assert.equal(decodeHeaderValue("=?base64?/w==?="), null, "bytes that are not UTF-8");
    assert.equal(
      decodeHeaderValue("=?BASE64?ZWNobw==?="),
      "=?BASE64?ZWNobw==?=",
      "markers are case-sensitive",
    );
  });

  test("a non-ASCII Mcp-Name must come in the sentinel form and match after decoding", () => {
    const message = request("resources/read", { uri: "file:///é", _meta: META });
    const base = { protocolVersion: "2026-07-28", method: "resources/read" };
    const encoded = `=?base64?${Buffer.from("file:///é").toString("base64")}?=`;
    assert.equal(checkModernRequest(message, { ...base, name: encoded }).ok, true);
    assert.equal(checkModernRequest(message, { ...base, name: "file:///e" }).ok, false);
  });

  test("the ladder checks the version header before the version itself", () => {
    const message = request("tools/list", {
      _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
    });
    const mismatch = checkModernRequest(message, {
      protocolVersion: "2026-07-28",
      method: "tools/list",
      name: undefined,
    });
    assert.equal(mismatch.ok === false && JSON.parse(mismatch.json).error.code, -32020);
    const unsupported = checkModernRequest(message, {
      protocolVersion: "2099-01-01",
      method: "tools/list",
      name: undefined,
    });
    assert.equal(unsupported.ok === false && unsupported.status, 400);
    assert.equal(unsupported.ok === false && JSON.parse(unsupported.json).error.code, -32022);
  });

  test("a valid envelope yields the capabilities and the log level", () => {
    const message = request("tools/list", {
      _meta: { ...META, "io.modelcontextprotocol/logLevel": "warning" },
    });
    const envelope = checkModernRequest(message, {
      protocolVersion: "2026-07-28",
      method: "tools/list",
      name: undefined,
    });
    assert.ok(envelope.ok);
    assert.deepEqual(envelope.clientCapabilities, {});
    assert.equal(envelope.logLevel, "warning");
    assert.deepEqual(envelope.paramHeaders, new Map());
  });

  test("a tools/call envelope carries its Mcp-Param-* headers, read from every header only when first asked; other methods none", () => {
    const all = { "mcp-param-region": ["us"], "mcp-name": ["echo"], "mcp-param-x": ["1", "2"] };
    let reads = 0;
    const distinct = {
      get headersDistinct() {
        reads++;
        return all;
      },
    };
    const call = checkModernRequest(request("tools/call", { name: "echo", _meta: META }), {
      protocolVersion: "2026-07-28",
      method: "tools/call",
      name: "echo",
      distinct,
    });
    assert.ok(call.ok);
    assert.equal(reads, 0, "not read by the envelope check itself");
    assert.deepEqual(
      [...call.paramHeaders],
      [
        ["mcp-param-region", "us"],
        ["mcp-param-x", null],
      ],
    );
    assert.equal(call.paramHeaders.size, 2);
    assert.equal(reads, 1, "read once, then kept");
    const list = checkModernRequest(request("tools/list", { _meta: META }), {
      protocolVersion: "2026-07-28",
      method: "tools/list",
      name: undefined,
      distinct,
    });
    assert.ok(list.ok);
    assert.equal(list.paramHeaders.size, 0);
    assert.equal(reads, 1, "other methods never read them");
  });
});
