/**
 * Both eras on one endpoint at the same time: a 2025-era client
 * (`@modelcontextprotocol/sdk` 1.x, cancels by POSTing notifications/cancelled) and a 2026-07-28
 * client (`@modelcontextprotocol/client` 2.x, cancels by closing its stream) served by the same
 * running server, each with calls in flight, each cancelling its own calls and only those.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { createMcpServer } from "../../src/server/index.js";
import { probes, testTools, until } from "../server/fixtures.js";

describe("a 2025-era and a 2026-07-28 client on the same server", () => {
  test("each cancels its own calls, by its own era's means, while the other's keep running", async () => {
    const server = createMcpServer({
      tools: testTools(),
      auth: {
        tokens: { "secret-legacy-0123456789": "legacy", "secret-modern-0123456789": "modern" },
      },
      sessions: true,
    });
    const { url } = await server.listen();
    const legacy = new LegacyClient({ name: "legacy", version: "1.0.0" });
    const modern = new ModernClient(
      { name: "modern", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    try {
      await legacy.connect(
        new LegacyTransport(new URL(url), {
          requestInit: { headers: { authorization: "Bearer secret-legacy-0123456789" } },
        }),
      );
      await modern.connect(
        new ModernTransport(new URL(url), {
          requestInit: { headers: { authorization: "Bearer secret-modern-0123456789" } },
        }),
      );
      assert.equal(modern.getProtocolEra(), "modern");

      // Two long calls per client, all four in flight at once.
      const legacyStop = new AbortController();
      const modernStop = new AbortController();
      const legacyCancelled = legacy.callTool(
        { name: "sleep", arguments: { ms: 60_000, tag: "mix-legacy-cancel" } },
        undefined,
        { signal: legacyStop.signal },
      );
      const legacyKept = legacy.callTool({
        name: "sleep",
        arguments: { ms: 400, tag: "mix-legacy-keep" },
      });
      const modernCancelled = modern.callTool(
        { name: "sleep", arguments: { ms: 60_000, tag: "mix-modern-cancel" } },
        { signal: modernStop.signal },
      );
      const modernKept = modern.callTool({
        name: "sleep",
        arguments: { ms: 400, tag: "mix-modern-keep" },
      });
      await until(
        () =>
          ["mix-legacy-cancel", "mix-legacy-keep", "mix-modern-cancel", "mix-modern-keep"].every(
            (tag) => probes.has(tag),
          ),
        3000,
        "four calls running",
      );
      assert.equal(server.registry.inFlightCount, 4);
      // The 2025 call runs in its session's scope; the modern one never has a session.
      assert.match(probes.get("mix-legacy-cancel")?.scope ?? "", /^session:/);
      assert.equal(probes.get("mix-modern-cancel")?.scope, "principal:modern");

      modernStop.abort();
      legacyStop.abort();
      await assert.rejects(modernCancelled);
      await assert.rejects(legacyCancelled);
      await until(
        () =>
          probes.get("mix-legacy-cancel")?.abortedAt != null &&
          probes.get("mix-modern-cancel")?.abortedAt != null,
        3000,
        "both cancelled calls aborted",
      );
      assert.equal(probes.get("mix-legacy-cancel")?.reason?.source, "notification");
      assert.equal(probes.get("mix-modern-cancel")?.reason?.source, "disconnect");

      // The calls nobody cancelled finish normally.
      assert.deepEqual((await legacyKept).content, [{ type: "text", text: "slept 400 ms" }]);
      assert.deepEqual((await modernKept).content, [{ type: "text", text: "slept 400 ms" }]);
      assert.equal(probes.get("mix-legacy-keep")?.abortedAt, null);
      assert.equal(probes.get("mix-modern-keep")?.abortedAt, null);
      await until(() => server.registry.inFlightCount === 0, 2000, "in-flight gauge 0");
    } finally {
      await legacy.close();
      await modern.close();
      await server.close();
    }
  });
});
