/**
 * One end-to-end suite, run through every door of the request core: the official
 * `@modelcontextprotocol/sdk` 1.x client (2025-11-25) and `@modelcontextprotocol/client` 2.x
 * (pinned to 2026-07-28) list, call, follow progress, cancel (2025: `notifications/cancelled`,
 * which SDK 1.x sends for an aborted request; 2026-07-28: the client closes its stream, which is
 * what SDK 2.x does for an aborted request — https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation),
 * hang up mid-call, and stay within their tenant. Each `*.test.ts` beside it runs the suite
 * against one door; not a test file itself.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as LegacyStdioTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as LegacyHttpTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { records, TENANT_TOKENS, type WaitRecord } from "./fixtures/door-tools.js";

/** The principals of the HTTP doors' `auth.tokens`: two tenants. */
export { TENANT_TOKENS };

const TENANTS = ["door-suite-token-alice", "door-suite-token-bob"] as const;

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** How the suite reaches a door. */
export type DoorTarget =
  | {
      readonly kind: "http";
      /** The MCP endpoint (any path: a mounted door serves it under its own). */
      readonly url: URL;
      /** A client-side `fetch` (the in-process helper); default the global one. */
      readonly fetch?: FetchLike;
      /**
       * What the server saw of a `wait` call, when the server runs in another process (another
       * runtime): default this process's `records`.
       */
      readonly records?: (tag: string) => Promise<WaitRecord | null>;
      /**
       * True where the host learns that a client left only when it next writes to it (Deno.serve,
       * Cloudflare's workerd: docs/runtimes.md). A 2026-07-28 call is written to (keep-alives
       * every `keepAliveMs`); a 2025-era call answered with JSON is not, so for that one the
       * suite checks only that it gave no answer.
       */
      readonly disconnectSeenOnWrite?: boolean;
      /**
       * True when the server keeps 2025-era sessions (`sessions: true`): only then does it know
       * that a 2025-era client declared elicitation, so only then is the 2025-era
       * input-required round possible over HTTP (a stdio connection always knows).
       */
      readonly sessions?: boolean;
    }
  | {
      readonly kind: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      readonly cwd: string;
      readonly env: Record<string, string>;
      /** The file the server process logs its `wait` records to (`CONDUIT_DOOR_LOG`). */
      readonly log: string;
    };

/** A running door. */
export interface Door {
  readonly target: DoorTarget;
  close(): Promise<void>;
}

/** What both SDKs' clients offer that the suite uses. */
interface AnyClient {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options?: { signal?: AbortSignal; onprogress?: (progress: { progress: number }) => void },
  ): Promise<unknown>;
  close(): Promise<void>;
  /** Calls a tool as a task, answering its id; null where the suite cannot (see `tasks`). */
  startTask:
    | ((params: { name: string; arguments: Record<string, unknown> }) => Promise<string>)
    | null;
  /** Cancels a task, answering its status as the server reports it after the cancel. */
  cancelTask(taskId: string): Promise<string>;
}

/** What the suite's clients answer to the `ask_name` tool's question. */
const NAME = "Ada";

type Era = "2025-11-25" | "2026-07-28";

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? "";
}

/**
 * Runs the suite against the door `start()` opens (once, shared by the tests).
 *
 * @param name the door, as the test titles say it
 * @param start opens the door (servers made with `auth: { tokens: TENANT_TOKENS }` for HTTP)
 */
export function doorSuite(name: string, start: () => Promise<Door>): void {
  // Generous: a loaded host makes a stdio door's process start slow.
  describe(`door: ${name}`, { timeout: 180_000 }, () => {
    let door: Door;
    let run = 0;
    const tag = (what: string): string => `${name}:${what}:${++run}:${Math.random()}`;

    before(async () => {
      door = await start();
    });
    after(async () => {
      await door?.close();
    });

    /** A client of `era` as tenant `tenant` (HTTP: its bearer token; stdio: its own process). */
    async function connect(era: Era, tenant: string): Promise<AnyClient> {
      const target = door.target;
      const headers = { authorization: `Bearer ${tenant}` };
      if (era === "2025-11-25") {
        const client = new LegacyClient(
          { name: `door-${name}`, version: "1.0.0" },
          { capabilities: { elicitation: {} } },
        );
        client.setRequestHandler(ElicitRequestSchema, async () => ({
          action: "accept",
          content: { name: NAME },
        }));
        const transport =
          target.kind === "http"
            ? new LegacyHttpTransport(target.url, {
                requestInit: { headers },
                ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
              })
            : new LegacyStdioTransport(stdioParams(target));
        await client.connect(transport);
        return {
          listTools: () => client.listTools(),
          callTool: (params, options) => client.callTool(params, undefined, options),
          close: () => client.close(),
          // 2025-11-25 experimental tasks: `params.task` asks for one.
          startTask: async (params) =>
            (
              await client.request(
                { method: "tools/call", params: { ...params, task: {} } },
                CreateTaskResultSchema,
              )
            ).task.taskId,
          cancelTask: async (taskId) => (await client.experimental.tasks.cancelTask(taskId)).status,
        };
      }
      const client = new ModernClient(
        { name: `door-${name}`, version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: {} } },
      );
      client.setRequestHandler("elicitation/create", async () => ({
        action: "accept",
        content: { name: NAME },
      }));
      const transport =
        target.kind === "http"
          ? new ModernHttpTransport(target.url, {
              requestInit: { headers },
              ...(target.fetch === undefined ? {} : { fetch: target.fetch }),
            })
          : new ModernStdioTransport(stdioParams(target));
      await client.connect(transport);
      assert.equal(client.getProtocolEra(), "modern");
      return {
        listTools: () => client.listTools(),
        callTool: (params, options) => client.callTool(params, options),
        close: () => client.close(),
        // The official 2.x client does not speak the tasks extension: its requests are built
        // by hand here, over HTTP (test/tasks/tasks-2026.test.ts does the same).
        startTask:
          target.kind === "http"
            ? async (params) =>
                (
                  (await modernTaskRequest(target, tenant, "tools/call", params)) as {
                    taskId: string;
                  }
                ).taskId
            : null,
        cancelTask: async (taskId) => {
          assert.ok(target.kind === "http");
          await modernTaskRequest(target, tenant, "tasks/cancel", { taskId });
          return (
            (await modernTaskRequest(target, tenant, "tasks/get", { taskId })) as {
              status: string;
            }
          ).status;
        },
      };
    }

    /** What the server saw of the `wait` tagged `id` (null before it started). */
    async function seen(id: string): Promise<WaitRecord | null> {
      const target = door.target;
      if (target.kind === "http") {
        return target.records === undefined ? (records.get(id) ?? null) : target.records(id);
      }
      const text = await readFile(target.log, "utf8").catch(() => "");
      // Whole lines only: the server process appends to the file while this reads it, so what
      // was read can end inside the line being written.
      const lines = text.slice(0, text.lastIndexOf("\n") + 1).split("\n");
      let last: WaitRecord | null = null;
      for (const line of lines) {
        if (line === "") continue;
        const record = JSON.parse(line) as WaitRecord;
        if (record.tag === id) last = record;
      }
      return last;
    }

    async function until(
      id: string,
      check: (record: WaitRecord) => boolean,
      what: string,
    ): Promise<WaitRecord> {
      // Generous: on a loaded 2-core host a stdio server process can stall for seconds.
      const deadline = performance.now() + 15_000;
      for (;;) {
        const record = await seen(id);
        if (record !== null && check(record)) return record;
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(5);
      }
    }

    /**
     * The server side of a call of `era` cancelled by `source`: aborted with that source (or,
     * for a 2025-era call's disconnect on a host that sees one only when it writes, unanswered).
     */
    async function cancelled(id: string, era: Era, source: string, what: string): Promise<void> {
      const target = door.target;
      if (
        source === "disconnect" &&
        era === "2025-11-25" &&
        target.kind === "http" &&
        target.disconnectSeenOnWrite === true
      ) {
        await sleep(500);
        const record = await seen(id);
        assert.ok(record !== null, `${what}: the call started`);
        assert.equal(record.finished, false, `${what}: no answer went out`);
        return;
      }
      const record = await until(id, (r) => r.abortedAt !== null, what);
      assert.equal(record.source, source);
      assert.equal(record.finished, false);
    }

    for (const era of ["2025-11-25", "2026-07-28"] as const) {
      // SDK 1.x cancels by notification; SDK 2.x by closing the stream. On stdio a 2026-07-28
      // request's notification is carried out as the stream close it stands for.
      const abortSource = era === "2025-11-25" ? "notification" : "disconnect";
      /**
       * Alice and Bob, one client each, made by the first test and kept for the tenant test:
       * the same calls in the same order, so their request ids are equal (stdio spawns a process
       * per client: fewer clients, a shorter suite).
       */
      let tenants: Promise<[AnyClient, AnyClient]> | null = null;
      const pair = (): Promise<[AnyClient, AnyClient]> => {
        tenants ??= Promise.all([connect(era, TENANTS[0]), connect(era, TENANTS[1])]);
        return tenants;
      };
      after(async () => {
        const open = tenants;
        tenants = null;
        if (open !== null) await Promise.all((await open).map((client) => client.close()));
      });

      /** List, call, progress, and a cancelled call, as one client. */
      async function exercise(client: AnyClient): Promise<void> {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((tool) => tool.name).sort(), [
          "ask_name",
          "echo",
          "steps",
          "task_wait",
          "wait",
        ]);
        assert.equal(
          text(await client.callTool({ name: "echo", arguments: { text: "hi" } })),
          "hi",
        );
        const progress: number[] = [];
        const done = await client.callTool(
          { name: "steps", arguments: { to: 3 } },
          { onprogress: ({ progress: step }) => progress.push(step) },
        );
        assert.equal(text(done), "3 steps");
        assert.deepEqual(progress, [1, 2, 3]);

        const id = tag("abort");
        const controller = new AbortController();
        const call = client.callTool(
          { name: "wait", arguments: { ms: 30_000, tag: id } },
          { signal: controller.signal },
        );
        await until(id, () => true, "the call to start");
        controller.abort(new Error("user pressed stop"));
        await assert.rejects(call);
        await cancelled(id, era, abortSource, "the server-side abort");
        // The client still works after a cancel.
        assert.equal(
          text(await client.callTool({ name: "echo", arguments: { text: "again" } })),
          "again",
        );
      }

      test(`${era}: lists, calls, follows progress, cancels an aborted call (${abortSource}); two tenants at once`, async () => {
        await Promise.all((await pair()).map(exercise));
      });

      test(`${era}: a tenant's cancel never reaches another tenant's request with the same id`, async () => {
        const [alice, bob] = await pair();
        const aliceId = tag("tenant-alice");
        const bobId = tag("tenant-bob");
        const controller = new AbortController();
        const aliceCall = alice.callTool(
          { name: "wait", arguments: { ms: 30_000, tag: aliceId } },
          { signal: controller.signal },
        );
        const bobCall = bob.callTool({ name: "wait", arguments: { ms: 400, tag: bobId } });
        const [a, b] = await Promise.all([
          until(aliceId, () => true, "alice's call to start"),
          until(bobId, () => true, "bob's call to start"),
        ]);
        assert.notEqual(a.scope, b.scope, "two tenants, two scopes");
        controller.abort();
        await assert.rejects(aliceCall);
        await cancelled(aliceId, era, abortSource, "alice's abort");
        assert.equal(text(await bobCall), "waited 400 ms");
        const bobRecord = await seen(bobId);
        assert.equal(bobRecord?.abortedAt, null, "bob's request was not touched");
        assert.equal(bobRecord?.finished, true);
      });

      test(`${era}: a client hanging up mid-call cancels it (disconnect)`, async () => {
        const client = await connect(era, TENANTS[0]);
        const id = tag("hangup");
        const call = client
          .callTool({ name: "wait", arguments: { ms: 30_000, tag: id } })
          .catch((error: unknown) => error);
        try {
          await until(id, () => true, "the call to start");
        } finally {
          // Even when the call never started: a stdio client left open keeps its server process
          // (and this test file) alive.
          await client.close();
        }
        await cancelled(id, era, "disconnect", "the server-side abort");
        await call;
      });

      test(`${era}: an input-required round: the tool asks the client, whose answer completes the call`, async (t) => {
        const target = door.target;
        if (era === "2025-11-25" && target.kind === "http" && target.sessions !== true) {
          t.skip(
            "this door's server keeps no 2025-era sessions, so it cannot know that the client declared elicitation",
          );
          return;
        }
        const [alice] = await pair();
        assert.equal(
          text(await alice.callTool({ name: "ask_name", arguments: {} })),
          `Hello, ${NAME}!`,
        );
      });

      test(`${era}: a task is created, then cancelled: its handler's signal aborts`, async (t) => {
        const [alice] = await pair();
        if (alice.startTask === null) {
          t.skip(
            "the official 2.x client does not speak the tasks extension, and over stdio the suite builds no requests by hand",
          );
          return;
        }
        const id = tag("task");
        const taskId = await alice.startTask({
          name: "task_wait",
          arguments: { ms: 30_000, tag: id },
        });
        await until(id, () => true, "the task's run to start");
        assert.equal(await alice.cancelTask(taskId), "cancelled");
        const record = await until(id, (r) => r.abortedAt !== null, "the task's handler to abort");
        assert.equal(record.finished, false);
      });
    }
  });
}

function stdioParams(target: Extract<DoorTarget, { kind: "stdio" }>) {
  return {
    command: target.command,
    args: [...target.args],
    cwd: target.cwd,
    env: { ...(process.env as Record<string, string>), ...target.env },
    stderr: "pipe" as const,
  };
}

/**
 * A 2026-07-28 request with the tasks extension declared
 * (https://modelcontextprotocol.io/extensions/tasks/overview), answering its `result`.
 */
async function modernTaskRequest(
  target: Extract<DoorTarget, { kind: "http" }>,
  tenant: string,
  method: string,
  params: Record<string, unknown>,
): Promise<unknown> {
  const name = params.taskId ?? params.name;
  const response = await (target.fetch ?? fetch)(target.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${tenant}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.result === undefined)
    throw new Error(`${method}: ${body.error?.message ?? response.status}`);
  return body.result;
}
