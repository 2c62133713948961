import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";
import { endpointUrl, serveOptions } from "../../src/cli/serve.js";

function command(argv: readonly string[]): ServeCommand {
  const parsed = parseCli(["serve", ...argv]);
  assert.ok(parsed.ok && parsed.command.kind === "serve");
  return parsed.command;
}

describe("endpointUrl", () => {
  it("brackets IPv6 literals and leaves other hosts alone", () => {
    assert.equal(endpointUrl("::1", 3000, "/mcp"), "http://[::1]:3000/mcp");
    assert.equal(endpointUrl("2001:db8::5", 80, "/mcp"), "http://[2001:db8::5]:80/mcp");
    assert.equal(endpointUrl("127.0.0.1", 8080, "/mcp"), "http://127.0.0.1:8080/mcp");
    assert.equal(endpointUrl("localhost", 1, "/x"), "http://localhost:1/x");
    // The result is a URL a client can parse back to the same host and port.
    const parsed = new URL(endpointUrl("::1", 4321, "/mcp"));
    assert.equal(parsed.hostname, "[::1]");
    assert.equal(parsed.port, "4321");
  });
});

describe("serveOptions", () => {
  it("leaves every option the flags did not set to the library default", async () => {
    const options = serveOptions(command([]));
    try {
      assert.equal(options.auth, undefined);
      assert.equal(options.http?.trustProxy, undefined);
      assert.equal(options.timeouts?.streamCancelTimeoutMs, undefined);
      assert.equal(options.timeouts?.closeGraceMs, undefined);
      assert.equal(options.sessions, false);
      assert.equal(options.http?.requireSession, false);
      assert.equal(options.http?.metrics, false);
      assert.deepEqual(
        (options.tools ?? []).map((tool) => tool.name),
        [
          "echo",
          "sleep",
          "count",
          "crunch",
          "stubborn",
          "stats",
          "confirm",
          "ask-model",
          "roll_dice",
        ],
      );
      assert.deepEqual(
        (options.resources ?? []).map((resource) => resource.uri),
        [
          "demo://logo.png",
          "demo://readme",
          "ui://demo/dice.html",
          "skill://roll-dice/SKILL.md",
          "skill://roll-dice/references/NOTATION.md",
        ],
      );
      assert.deepEqual(
        (options.extensions ?? []).map((extension) => extension.id),
        ["io.modelcontextprotocol/skills", "io.modelcontextprotocol/ui"],
      );
      assert.deepEqual(
        (options.resourceTemplates ?? []).map((template) => template.uriTemplate),
        ["demo://sleep/{ms}"],
      );
      assert.deepEqual(
        (options.prompts ?? []).map((prompt) => prompt.name),
        ["review"],
      );
    } finally {
      await options.registry?.close();
    }
  });

  it("maps tokens to auth.tokens (secret → principal id) and passes the other flags", async () => {
    const options = serveOptions(
      command([
        "--token",
        "alice=secret-s1-0123456789",
        "--token",
        "bob=secret-s2-0123456789",
        "--trust-proxy",
        "1",
        "--stream-cancel-timeout",
        "200",
        "--close-grace",
        "50",
        "--require-session",
        "--metrics",
      ]),
    );
    try {
      assert.deepEqual(options.auth, {
        tokens: { "secret-s1-0123456789": "alice", "secret-s2-0123456789": "bob" },
      });
      assert.equal(options.http?.trustProxy, 1);
      assert.equal(options.timeouts?.streamCancelTimeoutMs, 200);
      assert.equal(options.timeouts?.closeGraceMs, 50);
      assert.equal(options.sessions, true);
      assert.equal(options.http?.requireSession, true);
      assert.equal(options.http?.metrics, true);
    } finally {
      await options.registry?.close();
    }
  });

  it("builds the registry with the row limits", async () => {
    const options = serveOptions(command(["--max-rows", "2", "--max-rows-per-scope", "1"]));
    const registry = options.registry;
    assert.ok(registry);
    try {
      // A per-scope quota of 1: the second outstanding cancellation in one scope is refused.
      assert.deepEqual(await registry.cancel(1, null, "ip:10.0.0.1"), { ok: true });
      assert.deepEqual(await registry.cancel(2, null, "ip:10.0.0.1"), {
        ok: false,
        error: "cancellation_limit_reached",
      });
      assert.equal(await registry.size(), 1);
    } finally {
      await registry.close();
    }
  });

  it("passes the per-scope bounds: sessions per scope, requests per scope and in all", async () => {
    const options = serveOptions(
      command([
        "--sessions",
        "--max-sessions-per-scope",
        "3",
        "--max-requests-per-scope",
        "5",
        "--max-requests",
        "50",
      ]),
    );
    try {
      assert.deepEqual(options.sessions, { maxSessionsPerScope: 3 });
      assert.equal(options.limits?.maxConcurrentRequestsPerScope, 5);
      assert.equal(options.limits?.maxConcurrentRequests, 50);
    } finally {
      await options.registry?.close();
    }
    for (const flag of ["--max-sessions-per-scope", "--max-requests-per-scope", "--max-requests"]) {
      const parsed = parseCli(["serve", flag, "0"]);
      assert.equal(parsed.ok, false, `${flag} 0 is refused`);
    }
  });
});
