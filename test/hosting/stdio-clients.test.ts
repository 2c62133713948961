/**
 * `conduit-mcp serve MODULE --stdio` as desktop clients run it: the official clients'
 * `StdioClientTransport` spawns the CLI (here from source, through tsx; the packed build is
 * exercised by test/package/installed.test.ts) serving a user module, then lists, calls, follows progress,
 * cancels (the SDKs send `notifications/cancelled`) and shuts down by closing stdin. The module's
 * `probe` tool reports what the server process saw, over the same connection.
 * SDK 1.x speaks 2025-11-25; SDK 2.x is pinned to 2026-07-28.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVER = {
  command: process.execPath,
  args: [
    "--import",
    "tsx",
    "src/cli/main.ts",
    "serve",
    "test/hosting/fixtures/probe-tools.ts",
    "--stdio",
  ],
  cwd: ROOT,
  stderr: "pipe" as const,
};

/** What both SDKs' clients offer that these tests use. */
interface AnyClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: undefined,
    options?: { signal?: AbortSignal; onprogress?: (progress: { progress: number }) => void },
  ): Promise<unknown>;
  close(): Promise<void>;
}

interface Connected {
  readonly client: AnyClient;
  readonly stderr: () => string;
  /** Errors the transport reported (a line on stdout that is not a JSON-RPC message, …). */
  readonly errors: unknown[];
}

async function connectLegacy(): Promise<Connected> {
  const transport = new StdioClientTransport(SERVER);
  return connectWith(new Client({ name: "stdio-test", version: "1.0.0" }), transport);
}

/** SDK 2.x takes the request options second (no result schema argument). */
function modernCalls(client: ModernClient): AnyClient {
  return {
    listTools: () => client.listTools(),
    callTool: (params, _schema, options) => client.callTool(params, options),
    close: () => client.close(),
  };
}

async function connectModern(): Promise<Connected> {
  const transport = new ModernStdioTransport(SERVER);
  const client = new ModernClient(
    { name: "stdio-test-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const connected = await connectWith(client, transport);
  return { ...connected, client: modernCalls(client) };
}

async function connectWith(
  client: { connect(transport: never): Promise<void> },
  transport: {
    stderr: import("node:stream").Stream | null;
    onerror?: ((error: Error) => void) | undefined;
  },
): Promise<Connected> {
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await client.connect(transport as never);
  const errors: unknown[] = [];
  // Set after connect: the client installs its own handler, which this one wraps.
  const previous = transport.onerror;
  transport.onerror = (error) => {
    errors.push(error);
    previous?.(error);
  };
  return { client: client as unknown as AnyClient, stderr: () => stderr, errors };
}

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? "";
}

async function probe(client: AnyClient, tag: string) {
  return JSON.parse(text(await client.callTool({ name: "probe", arguments: { tag } }))) as {
    abortedAt: number | null;
    source: string | null;
    scope: string;
  } | null;
}

// A 2026-07-28 request's cancel is recorded as the stream close it stands for (stdio-connection.ts).
for (const [era, connect, cancelSource] of [
  ["SDK 1.x (2025-11-25)", connectLegacy, "notification"],
  ["SDK 2.x (2026-07-28)", connectModern, "disconnect"],
] as const) {
  describe(`stdio with the official ${era} client`, { timeout: 60_000 }, () => {
    test("lists the module's tools, calls one, follows progress, cancels by notification", async () => {
      const { client, errors } = await connect();
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name).sort(), ["echo", "probe", "steps", "wait"]);
        assert.equal(
          text(await client.callTool({ name: "echo", arguments: { text: "hi" } })),
          "hi",
        );

        const seen: number[] = [];
        const done = await client.callTool({ name: "steps", arguments: { to: 4 } }, undefined, {
          onprogress: ({ progress }) => seen.push(progress),
        });
        assert.equal(text(done), "4 steps");
        // In order, none lost but maybe the last few: a client reading progress and the response
        // in one chunk may retire the progress handler first (a client-side race that a loaded
        // machine makes likely: 1,2 of 4 seen at a load average of 17; the wire order itself is
        // tested in stdio.test.ts).
        assert.ok(seen.length >= 1, `progress seen: ${seen.join(",")}`);
        assert.deepEqual(seen, [1, 2, 3, 4].slice(0, seen.length));

        const controller = new AbortController();
        const call = client.callTool(
          { name: "wait", arguments: { ms: 30_000, tag: "sdk-cancel" } },
          undefined,
          { signal: controller.signal },
        );
        // The call is running once `probe` sees it (calls on one connection run concurrently).
        for (let i = 0; i < 200 && (await probe(client, "sdk-cancel")) === null; i++) {
          await sleep(10);
        }
        const abortedAt = Date.now();
        controller.abort("stop");
        await assert.rejects(call);
        let seenByServer = await probe(client, "sdk-cancel");
        for (let i = 0; i < 100 && seenByServer?.abortedAt == null; i++) {
          await sleep(10);
          seenByServer = await probe(client, "sdk-cancel");
        }
        assert.equal(seenByServer?.source, cancelSource);
        assert.ok(
          (seenByServer?.abortedAt as number) - abortedAt < 1_000,
          "the tool's signal aborted soon after the client cancelled",
        );
        assert.match(seenByServer?.scope ?? "", /^stdio:/);
        assert.deepEqual(errors, [], "every stdout line was a JSON-RPC message");
      } finally {
        await client.close();
      }
    });

    test("two client processes are two scopes", async () => {
      const first = await connect();
      const second = await connect();
      try {
        await Promise.all([
          first.client.callTool({ name: "wait", arguments: { ms: 0, tag: "scope" } }),
          second.client.callTool({ name: "wait", arguments: { ms: 0, tag: "scope" } }),
        ]);
        const [a, b] = await Promise.all([
          probe(first.client, "scope"),
          probe(second.client, "scope"),
        ]);
        assert.notEqual(a?.scope, b?.scope);
      } finally {
        await Promise.all([first.client.close(), second.client.close()]);
      }
    });

    test("closing stdin during a long call: the process exits by itself at once", async () => {
      const { client, stderr } = await connect();
      const call = client
        .callTool({ name: "wait", arguments: { ms: 60_000, tag: "eof" } })
        .catch((error: unknown) => error);
      for (let i = 0; i < 200 && (await probe(client, "eof")) === null; i++) await sleep(10);
      const started = performance.now();
      // The SDK ends stdin, waits up to 2 s for the exit, then sends SIGTERM: a close well under
      // 2 s means the server exited on its own, as the spec's shutdown sequence expects.
      await client.close();
      const took = performance.now() - started;
      assert.ok(took < 1_900, `closed in ${took.toFixed(0)} ms`);
      assert.match(stderr(), /stdin closed, exiting/);
      assert.doesNotMatch(stderr(), /SIGTERM/);
      await call;
    });
  });
}
