// McpServerOptions groups its HTTP, limit, timeout and list options (`http`, `limits`, `timeouts`,
// `lists`); the flat names of those options are still read, deprecated, for a deprecation period
// (docs/reference/options.md, "Deprecated flat names"). Both spellings must act alike, an error
// must name the option as the user wrote it, and giving both spellings of one option is refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { createMcpServer, defineTool, resolveOptions } from "../../src/server/index.js";
import { FLAT_ALIASES } from "../../src/server/option-declarations.js";

const echo = defineTool({ name: "echo", handler: () => "x" });

/** A value every option of that name accepts (and that differs from its default). */
function sample(flat: string): unknown {
  if (flat === "path") return "/other";
  if (flat === "allowedOrigins") return ["https://a.example"];
  if (flat === "trustProxy") return 1;
  if (flat === "cursorSecret") return "k".repeat(32);
  if (flat === "cancelOnDisconnect") return false;
  if (flat === "requireSession" || flat === "metrics") return true;
  if (flat === "metricsAuth") return undefined; // needs auth; covered below
  if (flat === "maxUriLength") return 100;
  if (flat === "requestTimeoutMs") return 70_000;
  // At least maxBodyBytes (1 MiB by default).
  if (flat.startsWith("maxBodyBytesInFlight")) return 2_097_152;
  return 7_000;
}

function refusal(build: () => unknown): InvalidOptionError {
  try {
    build();
  } catch (error) {
    assert.ok(error instanceof InvalidOptionError, String(error));
    return error;
  }
  assert.fail("not refused");
}

describe("grouped options and their deprecated flat names", () => {
  test("every flat name resolves exactly as its grouped spelling", () => {
    assert.ok(FLAT_ALIASES.size >= 29, `${FLAT_ALIASES.size} aliases`);
    for (const [flat, path] of FLAT_ALIASES) {
      const value = sample(flat);
      if (value === undefined) continue;
      const [group, key] = path.split(".") as [string, string];
      const base = { tools: [echo], sessions: true };
      const fromFlat = resolveOptions({ ...base, [flat]: value });
      const fromGroup = resolveOptions({ ...base, [group]: { [key]: value } });
      assert.deepEqual(fromGroup, fromFlat, path);
      assert.deepEqual((fromGroup as unknown as Record<string, unknown>)[key], value, path);
    }
    const auth = { tokens: { "0123456789abcdef": "alice" } };
    assert.deepEqual(
      resolveOptions({ auth, http: { metricsAuth: true } }),
      resolveOptions({ auth, metricsAuth: true }),
    );
  });

  test("an error names the option as written", () => {
    assert.equal(refusal(() => createMcpServer({ maxBodyBytes: 0 })).option, "maxBodyBytes");
    const grouped = refusal(() => createMcpServer({ limits: { maxBodyBytes: 0 } }));
    assert.equal(grouped.option, "limits.maxBodyBytes");
    assert.match(grouped.message, /option limits\.maxBodyBytes must be a positive integer; got 0/);
    assert.equal(
      refusal(() => createMcpServer({ timeouts: { keepAliveMs: 2 ** 31 } })).option,
      "timeouts.keepAliveMs",
    );
    assert.equal(
      refusal(() => createMcpServer({ http: { requireSession: true } })).option,
      "http.requireSession",
    );
    assert.equal(refusal(() => createMcpServer({ requireSession: true })).option, "requireSession");
    assert.equal(refusal(() => createMcpServer({ limits: 5 as never })).option, "limits");
    const order = refusal(() =>
      createMcpServer({ headersTimeoutMs: 20_000, timeouts: { requestTimeoutMs: 15_000 } }),
    );
    assert.equal(order.option, "timeouts.requestTimeoutMs");
  });

  test("both spellings of one option are refused, naming the deprecated one", () => {
    const both = refusal(() => createMcpServer({ maxBodyBytes: 10, limits: { maxBodyBytes: 10 } }));
    assert.equal(both.option, "maxBodyBytes");
    assert.match(both.message, /left out when limits\.maxBodyBytes is given/);
    // Different options of one group may come from both spellings.
    const mixed = resolveOptions({ maxBodyBytes: 10, limits: { maxConnections: 3 } });
    assert.equal(mixed.maxBodyBytes, 10);
    assert.equal(mixed.maxConnections, 3);
  });

  test("a grouped body bound acts as the flat one on the wire (413)", async () => {
    for (const options of [{ limits: { maxBodyBytes: 64 } }, { maxBodyBytes: 64 }]) {
      const server = createMcpServer({ tools: [echo], ...options });
      try {
        const response = await server.fetch(
          new Request("http://127.0.0.1/mcp", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/list",
              params: { pad: "x".repeat(200) },
            }),
          }),
          { clientAddress: "127.0.0.1" },
        );
        assert.equal(response.status, 413, JSON.stringify(options));
      } finally {
        await server.close();
      }
    }
  });
});
