/**
 * What a held call keeps of conduit-mcp's own, per object: calls held open on a real server
 * (`listen()` on 127.0.0.1: the node:http door, the connection bounds, the silent-connection
 * check), in both eras, and a V8 heap snapshot of this process taken while they wait. Every
 * object a running call holds stays within the size its fields make now (docs/profile.md, "Held
 * calls at 10 000", where each cut is measured against bare node:http), a 2026-07-28 call that
 * never asks holds no round and no binding, and no socket's `close` listeners outgrow node's own
 * (a third grows V8's listener array from 2 slots to 19).
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { writeHeapSnapshot } from "node:v8";

import { z } from "zod";

import { summarise } from "../../bench/lib/heap-snapshot-diff.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

/** Calls held per era (all from one address: within its default bounds, 64 requests and 32 streams). */
const HELD = 20;

/** Largest shallow size per object a held call keeps, in bytes (Node 20 on x64: 8 B a field). */
const BUDGET: Readonly<Record<string, number>> = {
  HandlerCall: 200,
  HttpExchange: 136,
  LocalRequestHandle: 88,
  NodeRequest: 64,
  NodeResponse: 48,
  ToolInvocation: 48,
  FirstRound: 56,
};

let release: () => void = () => {};
const released = new Promise<void>((resolve) => {
  release = resolve;
});
let running = 0;

const hold = defineTool({
  name: "hold",
  description: "Sends one progress notification, then waits until the test lets it go",
  input: z.object({}),
  handler: async (_args, ctx) => {
    running += 1;
    await ctx.progress(1, 2);
    await released;
    return "released";
  },
});

/**
 * A `tools/call hold` on a connection of its own, left waiting for its answer. Written on a raw
 * socket: an HTTP client's own sockets (in this process too) would carry close listeners of
 * theirs into the snapshot.
 */
function holdCall(port: number, era: "2025-11-25" | "2026-07-28", id: number): Socket {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params:
      era === "2025-11-25"
        ? { name: "hold", arguments: {}, _meta: { progressToken: id } }
        : {
            name: "hold",
            arguments: {},
            _meta: {
              "io.modelcontextprotocol/protocolVersion": era,
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
  });
  const modern = era === "2026-07-28" ? "mcp-method: tools/call\r\nmcp-name: hold\r\n" : "";
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  socket.on("data", () => {});
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\nmcp-protocol-version: ${era}\r\n${modern}` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

describe("a held call's own objects", () => {
  let server: McpServer;
  let file = "";
  const clients: Socket[] = [];
  before(async () => {
    server = createMcpServer({ tools: [hold], closeGraceMs: 100 });
    const { port } = await server.listen({ host: "127.0.0.1", port: 0 });
    for (let i = 0; i < HELD; i++) clients.push(holdCall(port, "2025-11-25", i + 1));
    for (let i = 0; i < HELD; i++) clients.push(holdCall(port, "2026-07-28", HELD + i + 1));
    await until(() => running === 2 * HELD, 10_000, "every call held");
    file = writeHeapSnapshot(join(tmpdir(), `held-call-${process.pid}.heapsnapshot`));
  });
  after(async () => {
    release();
    for (const client of clients) client.destroy();
    rmSync(file, { force: true });
    await server.close();
  });

  test("every object a running call holds is within its size", () => {
    const kinds = summarise(file);
    for (const [name, budget] of Object.entries(BUDGET)) {
      const kind = kinds.get(`object:${name}`);
      // Each held call has its own (FirstRound: the 2026-07-28 ones), so none can go unseen.
      const expected = name === "FirstRound" ? HELD : 2 * HELD;
      assert.ok((kind?.count ?? 0) >= expected, `${name}: ${kind?.count ?? 0} of ${expected}`);
      const each = (kind?.bytes ?? 0) / (kind?.count ?? 1);
      assert.ok(each <= budget, `${name}: ${each} B each, budget ${budget} B`);
    }
  });

  test("a 2026-07-28 call that never asks holds no round and no binding", () => {
    const kinds = summarise(file);
    assert.equal(kinds.get("object:InputRound")?.count ?? 0, 0);
    assert.equal(kinds.get("object:CallBinding")?.count ?? 0, 0);
  });

  test("no socket's close listeners outgrow node's own two", () => {
    // With a response attached, node:http has two `close` listeners on the socket (its
    // connection's and the response's): an array literal of two slots (16 B + 8 B a slot). A
    // third listener pushed onto it makes V8 grow it to 19 slots.
    const kind = summarise(file, { holders: true }).get(
      "array ← Array.elements ← Object.close ← Socket._events",
    );
    assert.ok((kind?.count ?? 0) >= 2 * HELD, `${kind?.count ?? 0} sockets' listener arrays`);
    const each = (kind?.bytes ?? 0) / (kind?.count ?? 1);
    assert.ok(each <= 32, `${each} B each: more than node's two slots`);
  });
});
