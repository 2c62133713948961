/**
 * The migration guide's servers (docs/migrating.md) are real: the official SDK 1.x server
 * (examples/migration/sdk1-server.ts), the SDK 2.x one (sdk2-server.ts) and their conduit-mcp port
 * (conduit-server.ts) each run as their own process on 127.0.0.1 and pass the same client tour —
 * tools, progress, a client-side cancel, a resource, a prompt — with `@modelcontextprotocol/sdk`
 * 1.x (2025-11-25) and, for the servers that speak it, `@modelcontextprotocol/client` 2.x pinned
 * to 2026-07-28.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

interface Running {
  child: ChildProcess;
  url: URL;
}

/** Starts one example server on a free port and waits (at most 30 s) for its "listening on" line. */
async function start(file: string): Promise<Running> {
  const child = spawn(process.execPath, ["--import", "tsx", `examples/migration/${file}`], {
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start: ${output}`)), 30_000);
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(new URL(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited with ${code}: ${output}`));
    });
  });
  return { child, url };
}

async function stop({ child }: Running): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

type CallOptions = { signal?: AbortSignal; onprogress?: (progress: { progress: number }) => void };

/** `callTool` with options: SDK 1.x takes them third (after a result schema), 2.x second. */
function callTool(
  client: LegacyClient | ModernClient,
  params: { name: string; arguments: Record<string, unknown> },
  options: CallOptions = {},
): Promise<unknown> {
  return client instanceof LegacyClient
    ? client.callTool(params, undefined, options)
    : client.callTool(params, options);
}

/** The one tour every server must pass; both clients share these method names and shapes. */
async function tour(client: LegacyClient | ModernClient): Promise<void> {
  const c = client as LegacyClient;
  const tools = await c.listTools();
  assert.deepEqual(tools.tools.map((t) => t.name).sort(), ["countdown", "word_count"]);

  const counted = await callTool(client, {
    name: "word_count",
    arguments: { text: "one two  three" },
  });
  assert.deepEqual((counted as { content?: unknown }).content, [{ type: "text", text: "3" }]);

  const progress: number[] = [];
  const done = await callTool(
    client,
    { name: "countdown", arguments: { from: 2 } },
    {
      onprogress: (p) => progress.push(p.progress),
    },
  );
  assert.deepEqual((done as { content?: unknown }).content, [{ type: "text", text: "lift-off" }]);
  assert.deepEqual(progress, [0, 1]);

  // A cancel from the client: the call rejects at once instead of running its 60 s.
  const controller = new AbortController();
  const started = performance.now();
  const cancelled = callTool(
    client,
    { name: "countdown", arguments: { from: 60 } },
    {
      signal: controller.signal,
      onprogress: () => controller.abort(),
    },
  );
  await assert.rejects(cancelled);
  assert.ok(performance.now() - started < 10_000, "the cancelled call ended within 10 s");

  const readme = await c.readResource({ uri: "notes://readme" });
  assert.deepEqual(readme.contents, [
    { uri: "notes://readme", mimeType: "text/markdown", text: "# Notes" },
  ]);

  const prompt = await c.getPrompt({ name: "summarise", arguments: { topic: "otters" } });
  assert.equal(prompt.messages.length, 1);
  assert.equal(prompt.messages[0]?.role, "user");
  assert.deepEqual(prompt.messages[0]?.content, {
    type: "text",
    text: "Summarise what we know about otters.",
  });
}

const SERVERS = [
  { file: "sdk1-server.ts", modern: "the SDK 1.x server speaks 2025-11-25 only" },
  { file: "sdk2-server.ts", modern: true },
  { file: "conduit-server.ts", modern: true },
] as const;

for (const { file, modern } of SERVERS) {
  describe(`migration guide server ${file}`, () => {
    let running: Running;
    before(async () => {
      running = await start(file);
    });
    after(async () => {
      await stop(running);
    });

    test("passes the tour with the SDK 1.x client (2025-11-25)", async () => {
      const client = new LegacyClient({ name: "migration-2025", version: "1.0.0" });
      await client.connect(new LegacyTransport(running.url));
      try {
        await tour(client);
      } finally {
        await client.close();
      }
    });

    test("passes the tour with the 2.x client pinned to 2026-07-28", {
      skip: modern === true ? false : modern,
    }, async () => {
      const client = new ModernClient(
        { name: "migration-2026", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new ModernTransport(running.url));
      try {
        assert.equal(client.getProtocolEra(), "modern");
        await tour(client);
      } finally {
        await client.close();
      }
    });
  });
}
