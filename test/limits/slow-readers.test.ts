/**
 * Clients that stop reading their stream, on a real node on 127.0.0.1: a 2026-07-28
 * `subscriptions/listen` stream
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions) and a
 * 2025-11-25 session's GET stream
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server),
 * each beside a client that reads, every one from its own address (127.0.0.2–5, four tenants).
 * Resource updates are sent until both slow streams are cut:
 *
 * - what the server holds for a slow stream (its response's buffered bytes, read after every
 *   write) never passes `limits.maxStreamBufferBytes` by more than the one message that crossed
 *   it, and the stream is cut (the client, reading again, finds it ended, short of the updates);
 * - the readers of the other tenants receive every update, before and after the cut.
 */
import assert from "node:assert/strict";
import { request as httpRequest, ServerResponse } from "node:http";
import { after, before, describe, test } from "node:test";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { postFrom } from "../abuse/post-from.js";
import { openListen, type RawListen, until } from "../subscriptions/listen-helpers.js";

const LIMIT = 64 * 1_024;
/** A long URI: each update is ~8 KB on the wire, so the socket buffers fill in bounded rounds. */
const URI = `test://slow/${"x".repeat(8_000)}`;
const ROUNDS = 2_000;
/** Updates per round: well under the bound, so a client that reads keeps up. */
const PER_ROUND = 4;

/** The largest buffered byte count seen after a write, per `<client address> <method>`. */
const buffered = new Map<string, number>();
/** The latest response written to, per `<client address> <method>`. */
const responses = new Map<string, ServerResponse>();
const SLOW_LISTEN = "127.0.0.3 POST";
const SLOW_GET = "127.0.0.5 GET";
const originalWrite = ServerResponse.prototype.write;

function watchWrites(): void {
  // biome-ignore lint/suspicious/noExplicitAny: wraps node:http's overloaded write as is.
  ServerResponse.prototype.write = function (this: ServerResponse, ...args: any[]): boolean {
    const ok = (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
    const key = `${this.req.socket.remoteAddress} ${this.req.method}`;
    buffered.set(key, Math.max(buffered.get(key) ?? 0, this.writableLength));
    responses.set(key, this);
    return ok;
  } as typeof ServerResponse.prototype.write;
}

/** A 2025-11-25 session from `from`, subscribed to {@link URI}. */
async function subscribedSession(url: string, from: string): Promise<string> {
  const init = await postFrom(url, from, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "s", version: "1" },
    },
  });
  const session = init.headers["mcp-session-id"] as string;
  assert.equal(typeof session, "string", init.text);
  const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
  await postFrom(url, from, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  const sub = await postFrom(
    url,
    from,
    { jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: URI } },
    headers,
  );
  assert.equal(sub.status, 200, sub.text);
  return session;
}

/** A session's GET stream from `from`: counts the updates it reads. */
interface GetStream {
  updates: number;
  ended: boolean;
  pause(): void;
  resume(): void;
  close(): void;
}

function openGet(url: string, from: string, session: string): Promise<GetStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: "GET",
      localAddress: from,
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      },
    });
    req.on("response", (res) => {
      assert.equal(res.statusCode, 200);
      res.setEncoding("utf8");
      let tail = "";
      const stream: GetStream = {
        updates: 0,
        ended: false,
        pause: () => res.pause(),
        resume: () => res.resume(),
        close: () => req.destroy(),
      };
      res.on("data", (chunk: string) => {
        const text = tail + chunk;
        const parts = text.split("notifications/resources/updated");
        stream.updates += parts.length - 1;
        tail = (parts.at(-1) as string).slice(-40);
      });
      const end = (): void => {
        stream.ended = true;
      };
      res.on("end", end);
      res.on("close", end);
      res.on("error", end);
      resolve(stream);
    });
    req.on("error", reject);
    req.end();
  });
}

function updatesIn(listen: RawListen): number {
  return listen.messages.filter((m) => m.method === "notifications/resources/updated").length;
}

describe("slow readers on listen and GET streams are cut; other tenants keep receiving", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    watchWrites();
    server = createMcpServer({
      sessions: true,
      limits: { maxStreamBufferBytes: LIMIT },
      timeouts: { keepAliveMs: 0 },
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(async () => {
    ServerResponse.prototype.write = originalWrite;
    await server?.close();
  });

  test("a 2026-07-28 listener and a 2025-11-25 GET stream that stop reading", async (t) => {
    const fastListen = await openListen(
      url,
      { resourceSubscriptions: [URI] },
      { localAddress: "127.0.0.2" },
    );
    const slowListen = await openListen(
      url,
      { resourceSubscriptions: [URI] },
      { localAddress: "127.0.0.3" },
    );
    for (const listen of [fastListen, slowListen]) {
      await listen.next((m) => m.method === "notifications/subscriptions/acknowledged");
    }
    const fastGet = await openGet(url, "127.0.0.4", await subscribedSession(url, "127.0.0.4"));
    const slowGet = await openGet(url, "127.0.0.5", await subscribedSession(url, "127.0.0.5"));
    // Both GET streams are open once an update reaches the reading one.
    for (let i = 0; i < 100 && fastGet.updates === 0; i++) {
      server.resources.updated(URI);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(fastGet.updates > 0, "the GET streams did not open");
    const before = { listen: updatesIn(fastListen), get: fastGet.updates };
    slowListen.pause();
    slowGet.pause();

    let sent = 0;
    // The server cuts a stream by destroying its response.
    const cut = (key: string): boolean => responses.get(key)?.destroyed === true;
    for (let round = 0; round < ROUNDS && !(cut(SLOW_LISTEN) && cut(SLOW_GET)); round++) {
      for (let i = 0; i < PER_ROUND; i++) server.resources.updated(URI);
      sent += PER_ROUND;
      // The readers read each round before the next is sent (less than the bound per round):
      // only the clients that stopped reading fall behind.
      const caughtUp = await until(
        () =>
          updatesIn(fastListen) - before.listen === sent && fastGet.updates - before.get === sent,
        5_000,
      );
      assert.ok(caughtUp, `the reading clients fell behind at ${sent} updates`);
    }
    assert.ok(cut(SLOW_LISTEN), `the slow listener was not cut after ${sent} updates`);
    assert.ok(cut(SLOW_GET), `the slow GET stream was not cut after ${sent} updates`);
    assert.equal(server.concurrency().listeners, 1, "the slow listener's entry is freed");

    // The slow clients read again: each finds its stream ended, short of the updates sent.
    slowListen.response.resume();
    slowGet.resume();
    await slowListen.ended;
    assert.ok(await until(() => slowGet.ended, 5_000), "the slow GET stream was not cut");
    assert.ok(
      updatesIn(slowListen) < sent,
      `slow listener read ${updatesIn(slowListen)} of ${sent}`,
    );
    assert.ok(slowGet.updates < sent, `slow GET stream read ${slowGet.updates} of ${sent}`);

    // What the server held for each slow stream stayed within the bound (+ the crossing message).
    const message = URI.length + 400;
    for (const key of [SLOW_LISTEN, SLOW_GET]) {
      const held = buffered.get(key) ?? -1;
      assert.ok(
        held > 0 && held <= LIMIT + message,
        `${key}: ${held} bytes buffered (bound ${LIMIT})`,
      );
    }

    t.diagnostic(
      `cut after ${sent} updates of ~${URI.length} bytes; held at most: listen ${buffered.get(SLOW_LISTEN)}, GET ${buffered.get(SLOW_GET)} bytes (bound ${LIMIT})`,
    );

    // The other tenants received every update, and still do after the cut.
    server.resources.updated(URI);
    sent++;
    assert.ok(
      await until(() => updatesIn(fastListen) - before.listen === sent, 10_000),
      `the reading listener got ${updatesIn(fastListen) - before.listen} of ${sent}`,
    );
    assert.ok(
      await until(() => fastGet.updates - before.get === sent, 10_000),
      `the reading GET stream got ${fastGet.updates - before.get} of ${sent}`,
    );
    fastListen.close();
    fastGet.close();
  });
});
