import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import {
  type CliProcess,
  cancel,
  eventually,
  exitWithin,
  metric,
  rpc,
  runCli,
  startCli,
} from "./cli-process.js";

const CANCELLED = -32800;
const INTERNAL_ERROR = -32603;

describe("conduit-mcp serve", () => {
  let cli: CliProcess;
  before(async () => {
    cli = await startCli(["serve", "--port", "0", "--metrics", "--stream-cancel-timeout", "200"]);
  });
  after(async () => {
    await cli.kill();
  });

  it("prints exactly the listening line first", () => {
    assert.match(cli.firstLine, /^conduit-mcp listening on http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.notEqual(new URL(cli.url).port, "0");
  });

  it("lists the nine demo tools", async () => {
    const answer = await rpc(cli.url, { id: 1, method: "tools/list" });
    assert.equal(answer.status, 200);
    const tools = (answer.message?.result?.tools ?? []) as Array<{ name: string }>;
    assert.deepEqual(
      tools.map((tool) => tool.name),
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
  });

  it("calls echo and sleep", async () => {
    const echo = await rpc(cli.url, {
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi there" } },
    });
    assert.equal(echo.status, 200);
    assert.deepEqual(echo.message?.result?.content, [{ type: "text", text: "hi there" }]);
    const sleep = await rpc(cli.url, {
      id: 3,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 10 } },
    });
    assert.deepEqual(sleep.message?.result?.content, [{ type: "text", text: "slept 10 ms" }]);
  });

  it("answers out-of-bounds arguments with an isError result", async () => {
    const answer = await rpc(cli.url, {
      id: 4,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 600_001 } },
    });
    assert.equal(answer.message?.result?.isError, true);
  });

  it("cancels a sleep on notifications/cancelled, at once", async () => {
    const started = Date.now();
    const pending = rpc(cli.url, {
      id: 10,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 60_000 } },
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(await cancel(cli.url, 10), 202);
    const answer = await pending;
    assert.equal(answer.message?.error?.code, CANCELLED);
    assert.ok(Date.now() - started < 3_000, "the cancelled sleep was not answered promptly");
    assert.ok(
      await eventually(
        async () => (await metric(cli.url, "conduit_mcp_in_flight_requests")) === 0,
        2_000,
      ),
      "in-flight gauge did not return to 0",
    );
  });

  it("streams one progress notification per count step to the official client", async () => {
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(cli.url));
    await client.connect(transport);
    try {
      const steps: Array<{ progress: number; total?: number }> = [];
      const result = await client.callTool(
        { name: "count", arguments: { to: 4, intervalMs: 10 } },
        undefined,
        { onprogress: (p) => steps.push({ progress: p.progress, total: p.total as number }) },
      );
      assert.deepEqual(result.content, [{ type: "text", text: "counted to 4" }]);
      assert.deepEqual(
        steps.map((s) => [s.progress, s.total]),
        [
          [1, 4],
          [2, 4],
          [3, 4],
          [4, 4],
        ],
      );
    } finally {
      await client.close();
    }
  });

  it("stops crunch when cancelled (outcome cancelled, not killed)", async () => {
    const pending = rpc(cli.url, {
      id: 20,
      method: "tools/call",
      params: { name: "crunch", arguments: { ms: 60_000 } },
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(await cancel(cli.url, 20), 202);
    assert.equal((await pending).message?.error?.code, CANCELLED);
    const labels = { tool: "crunch", outcome: "cancelled" };
    assert.ok(
      await eventually(
        async () => (await metric(cli.url, "conduit_mcp_tool_calls_total", labels)) === 1,
        2_000,
      ),
      "crunch was not recorded as cancelled",
    );
    assert.equal(
      (await metric(cli.url, "conduit_mcp_tool_calls_total", {
        tool: "crunch",
        outcome: "killed",
      })) ?? 0,
      0,
    );
  });

  it("abandons stubborn at the stream cancel timeout (200 ms)", async () => {
    const pending = rpc(cli.url, {
      id: 30,
      method: "tools/call",
      params: { name: "stubborn", arguments: { ms: 4_000 } },
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const cancelledAt = Date.now();
    assert.equal(await cancel(cli.url, 30), 202);
    assert.equal((await pending).message?.error?.code, CANCELLED);
    const labels = { tool: "stubborn", outcome: "killed" };
    assert.ok(
      await eventually(
        async () => (await metric(cli.url, "conduit_mcp_tool_calls_total", labels)) === 1,
        2_000,
      ),
      "stubborn was not abandoned",
    );
    const killedAfter = Date.now() - cancelledAt;
    // Well before the tool's own 4 s, and not before the configured timeout.
    assert.ok(killedAfter >= 150 && killedAfter < 2_500, `killed after ${killedAfter} ms`);
    assert.equal(await metric(cli.url, "conduit_mcp_in_flight_requests"), 0);
  });

  it("exits 1 with a message when its port is taken (here, by the server above)", async () => {
    const port = new URL(cli.url).port;
    const { stdout, stderr, exit } = await runCli(["serve", "--port", port]);
    assert.equal(exit.code, 1);
    assert.equal(stdout, "");
    assert.match(stderr, /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
  });
});

describe("conduit-mcp shutdown", () => {
  it("exits 0 promptly on SIGTERM with a sleep in flight, which is answered 'Server is shutting down'", async () => {
    const cli = await startCli(["serve", "--port", "0", "--close-grace", "100"]);
    try {
      const pending = rpc(cli.url, {
        id: 1,
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 60_000 } },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const signalledAt = Date.now();
      cli.child.kill("SIGTERM");
      const exit = await exitWithin(cli, 5_000);
      assert.deepEqual(exit, { code: 0, signal: null });
      // The grace is 100 ms; the rest is process teardown, far below the sleep's 60 s.
      assert.ok(Date.now() - signalledAt < 5_000);
      // The in-flight call is stopped by the shutdown and told why before the server goes.
      const answer = await pending;
      assert.equal(answer.message?.error?.code, INTERNAL_ERROR);
      assert.equal(answer.message?.error?.message, "Server is shutting down");
    } finally {
      await cli.kill();
    }
  });

  it("exits 0 on SIGINT when idle", async () => {
    const cli = await startCli(["serve", "--port", "0"]);
    try {
      cli.child.kill("SIGINT");
      assert.deepEqual(await exitWithin(cli, 10_000), { code: 0, signal: null });
    } finally {
      await cli.kill();
    }
  });
});

describe("conduit-mcp usage", () => {
  it("exits 2 with a message on stderr for an unknown flag or a bad value", async () => {
    // Two representative cases; every rule is covered without a process in args.test.ts.
    for (const args of [
      ["serve", "--bogus"],
      ["serve", "--max-rows", "zero"],
    ]) {
      const { stdout, stderr, exit } = await runCli(args);
      assert.deepEqual(exit, { code: 2, signal: null }, args.join(" "));
      assert.equal(stdout, "", args.join(" "));
      assert.match(
        stderr,
        /^conduit-mcp: .+\nRun "conduit-mcp --help" for usage\.\n$/,
        args.join(" "),
      );
    }
  });

  it("prints help and version on stdout with exit 0", async () => {
    const help = await runCli(["--help"]);
    assert.equal(help.exit.code, 0);
    assert.match(help.stdout, /^Usage: conduit-mcp serve \[MODULE\] \[options\]/);
    assert.match(help.stdout, /--stream-cancel-timeout MS/);
    const version = await runCli(["--version"]);
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    assert.equal(version.stdout, `${pkg.version}\n`);
  });
});
