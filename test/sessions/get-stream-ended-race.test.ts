/**
 * A standalone GET stream (2025-11-25 basic/transports "Listening for Messages from the Server")
 * whose session ends while the GET is being opened: the store's `onEnded` fires after the
 * endpoint read the session but before the stream was registered, so it finds nothing to close.
 * The endpoint reads the session once more after opening, and ends the stream of a session that
 * is gone, instead of leaving it open until the client hangs up.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, test } from "node:test";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemorySessionStore } from "../../src/sessions/memory-session-store.js";
import type {
  SessionCreateOutcome,
  SessionRecord,
  SessionStore,
} from "../../src/sessions/session-store.js";

/**
 * A memory store whose next `get` of a chosen id answers the record and then deletes the
 * session (telling `onEnded`), as if another node ended it at that moment.
 */
class EndingStore implements SessionStore {
  readonly inner = new MemorySessionStore();
  endOnGet: string | null = null;
  create(record: SessionRecord): Promise<SessionCreateOutcome> {
    return this.inner.create(record);
  }
  async get(id: string): Promise<SessionRecord | undefined> {
    const record = await this.inner.get(id);
    if (record !== undefined && this.endOnGet === id) {
      this.endOnGet = null;
      await this.inner.delete(id);
    }
    return record;
  }
  setLogLevel(id: string, level: string): Promise<boolean> {
    return this.inner.setLogLevel(id, level);
  }
  delete(id: string): Promise<boolean> {
    return this.inner.delete(id);
  }
  cleanup(ttlMs: number, now: number): Promise<number> {
    return this.inner.cleanup(ttlMs, now);
  }
  size(): Promise<number> {
    return this.inner.size();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  onEnded(listener: (id: string) => void): () => void {
    return this.inner.onEnded(listener);
  }
}

const store = new EndingStore();
let server: McpServer;
let url: URL;

before(async () => {
  server = createMcpServer({ sessions: { store }, keepAliveMs: 60_000 });
  url = new URL((await server.listen({ host: "127.0.0.1", port: 0 })).url);
});
after(() => server.close());

async function initialize(): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "race", version: "1" },
      },
    }),
  });
  assert.equal(response.status, 200);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  assert.ok(id !== null);
  return id;
}

/** Opens the GET stream; resolves its status and whether the server ended it within `ms`. */
function openStream(session: string, ms: number): Promise<{ status: number; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "GET",
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      const timer = setTimeout(() => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, ended: false });
      }, ms);
      res.resume();
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, ended: true });
      });
    });
    req.end();
  });
}

test("a GET stream opened as its session ends is ended by the server, not left open", async () => {
  const session = await initialize();
  store.endOnGet = session;
  const { status, ended } = await openStream(session, 3_000);
  assert.equal(status, 200);
  assert.equal(ended, true, "the stream of an ended session stayed open for 3 s");
  assert.equal(await store.inner.size(), 0);
});

test("the GET stream of a live session stays open", async () => {
  const session = await initialize();
  const { status, ended } = await openStream(session, 500);
  assert.equal(status, 200);
  assert.equal(ended, false);
});
