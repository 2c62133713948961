/**
 * Connections and requests are bounded per client bucket first; the global bounds never lock a
 * client under its own bounds out. Reproduces the attack on scaled-down bounds: a few addresses
 * each holding their per-scope maximum of `sleep` calls fill `maxConnections` and
 * `maxConcurrentRequests`; another address's first request is still answered, and a 2025-era
 * client (the official SDK 1.x) at its own bound still cancels one of its held calls.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Agent, fetch as undiciFetch } from "undici";

import { ConnectionBounds } from "../../src/http/doors/connection-bounds.js";
import { createMcpServer, type McpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, probes, testTools, until } from "../server/fixtures.js";

interface Held {
  settled: boolean;
  /** The HTTP status, or the socket error's code (the connection was closed under it). */
  outcome: number | string | null;
  text: string;
}

/** One POST from a chosen loopback address on a connection of its own, watched as it settles. */
function holdFrom(url: string, localAddress: string, body: unknown): Held {
  const held: Held = { settled: false, outcome: null, text: "" };
  const req = request(url, {
    method: "POST",
    localAddress,
    agent: false,
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  });
  req.on("response", (res) => {
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      held.text += chunk;
    });
    res.on("end", () => {
      held.outcome = res.statusCode ?? 0;
      held.settled = true;
    });
    res.on("error", () => {
      held.outcome = "aborted";
      held.settled = true;
    });
  });
  req.on("error", (error: NodeJS.ErrnoException) => {
    held.outcome = error.code ?? "error";
    held.settled = true;
  });
  req.end(JSON.stringify(body));
  return held;
}

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string, server: McpServer) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), closeGraceMs: 100, ...options });
  const { url } = await server.listen();
  try {
    await run(url, server);
  } finally {
    await server.close();
  }
}

/** An SDK 1.x client whose connections all come from `localAddress`. */
async function sdkClientFrom(url: string, localAddress: string): Promise<Client> {
  const dispatcher = new Agent({ connect: { localAddress } });
  const client = new Client({ name: "bounded", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
  });
  await client.connect(transport);
  return client;
}

describe("connections and requests: per bucket first, the global bounds never lock anyone out", () => {
  test("addresses at their per-scope maximum fill both global bounds; a new address and a 2025 cancel still get through", async () => {
    // 3 addresses x 4 held calls = 12 = maxConnections = maxConcurrentRequests.
    await withServer(
      {
        maxConnections: 12,
        maxConcurrentRequests: 12,
        maxConcurrentRequestsPerScope: 4,
        maxConnectionsPerBucket: 8,
      },
      async (url, server) => {
        // The client that will cancel: the official SDK 1.x, on 127.0.0.2, holding 4 calls.
        const client = await sdkClientFrom(url, "127.0.0.2");
        const controllers = [1, 2, 3, 4].map(() => new AbortController());
        const calls = controllers.map((controller, n) =>
          client
            .callTool({ name: "sleep", arguments: { ms: 30_000, tag: `cb-sdk-${n}` } }, undefined, {
              signal: controller.signal,
              timeout: 60_000,
            })
            .then(
              () => "answered",
              (error: Error) => error.message,
            ),
        );
        await until(() => server.concurrency().requests === 4, 5_000, "the SDK client's 4 calls");
        const held: Held[] = [];
        for (const address of ["127.0.0.3", "127.0.0.4"]) {
          for (let n = 0; n < 4; n++) {
            held.push(
              holdFrom(
                url,
                address,
                callBody(n, "sleep", { ms: 30_000, tag: `cb-${address}-${n}` }),
              ),
            );
          }
        }
        await until(() => server.concurrency().requests === 12, 5_000, "12 calls held");
        assert.ok(server.concurrency().connections >= 12, "both global bounds are full");

        // A new address: its first request is answered.
        const fresh = holdFrom(url, "127.0.0.9", callBody(1, "echo", { text: "room for me" }));
        await until(() => fresh.settled, 5_000, "the new address's answer");
        assert.equal(fresh.outcome, 200, `new address answered (${fresh.outcome} ${fresh.text})`);
        assert.match(fresh.text, /room for me/);

        // The SDK client at its own bound cancels a held call that is still running: the
        // notifications/cancelled needs a connection and a notice unit, and gets both.
        const running = [0, 1, 2, 3].filter((n) => probes.get(`cb-sdk-${n}`)?.abortedAt == null);
        const victim = running.at(-1);
        assert.ok(victim !== undefined, "one of the SDK client's calls is still running");
        controllers[victim]?.abort("enough");
        await until(
          () => probes.get(`cb-sdk-${victim}`)?.abortedAt != null,
          5_000,
          "the cancel reached the held call",
        );
        // Cancelled by the client's notifications/cancelled (not by a closed connection).
        assert.match(probes.get(`cb-sdk-${victim}`)?.reason?.message ?? "", /notification/);

        // Room was made from the largest buckets only: a call or two of the three holders was
        // closed; nothing of the new address was.
        const closed = held.filter((h) => h.settled).length;
        assert.ok(closed <= 2, `at most two held calls closed to make room (${closed})`);
        for (const c of controllers) c.abort("done");
        await Promise.all(calls);
        await client.close();
        for (const h of held) assert.ok(h.settled || h.outcome === null);
      },
    );
  });

  test("maxConcurrentRequests alone: a new scope is served, the oldest call of the largest scope is closed", async () => {
    await withServer(
      { maxConcurrentRequests: 6, maxConcurrentRequestsPerScope: 4 },
      async (url, server) => {
        const big = [0, 1, 2, 3].map((n) =>
          holdFrom(url, "127.0.0.2", callBody(n, "sleep", { ms: 30_000, tag: `rq-big-${n}` })),
        );
        await until(() => server.concurrency().requests === 4, 5_000, "the big scope's 4");
        const small = [0, 1].map((n) =>
          holdFrom(url, "127.0.0.3", callBody(n, "sleep", { ms: 30_000, tag: `rq-small-${n}` })),
        );
        await until(() => server.concurrency().requests === 6, 5_000, "the global bound full");

        const fresh = holdFrom(url, "127.0.0.4", callBody(1, "echo", { text: "served" }));
        await until(() => fresh.settled, 5_000, "the new scope's answer");
        assert.equal(fresh.outcome, 200, `served, not refused (${fresh.outcome} ${fresh.text})`);
        // The room came from the largest scope (127.0.0.2, 4 units), its oldest call first.
        await until(
          () => big[0]?.settled === true,
          5_000,
          "the largest scope's oldest call closed",
        );
        await until(() => probes.get("rq-big-0")?.abortedAt != null, 5_000, "and cancelled");
        assert.ok(
          small.every((h) => !h.settled),
          "the smaller scope lost nothing",
        );
        assert.ok(
          big.slice(1).every((h) => !h.settled),
          "only one call was taken back",
        );
        assert.ok(server.concurrency().requests <= 6, "the global bound still holds");
      },
    );
  });

  test("past maxConnectionsPerBucket a connection is closed at once; other buckets still connect", async () => {
    await withServer(
      { maxConnectionsPerBucket: 3, headersTimeoutMs: 10_000 },
      async (url, server) => {
        const port = Number(new URL(url).port);
        const open = (localAddress: string): { socket: Socket; closed: boolean } => {
          const socket = connect({ port, host: "127.0.0.1", localAddress });
          const watched = { socket, closed: false };
          socket.on("error", () => {});
          socket.on("close", () => {
            watched.closed = true;
          });
          return watched;
        };
        const first = [0, 1, 2].map(() => open("127.0.0.5"));
        await until(() => server.concurrency().connections === 3, 2_000, "three admitted");
        const extra = open("127.0.0.5");
        await until(() => extra.closed, 2_000, "the fourth closed at once");
        const other = open("127.0.0.6");
        await until(() => server.concurrency().connections === 4, 2_000, "another bucket admitted");
        assert.ok(
          first.every((w) => !w.closed),
          "the first three stay open",
        );
        assert.equal(other.closed, false);
        for (const w of [...first, other]) w.socket.destroy();
      },
    );
  });
});

describe("the connection bounds keep nothing per connection for its close", () => {
  test("a tracked socket has node's own count of close listeners, with a response attached too, and node's still run", async () => {
    // node:http adds close listeners of its own, one more while a response is attached: the
    // bounds (and their silent-connection check) take node's off and call them from their one
    // listener, so a tracked socket has as many as an untracked one (docs/profile.md, "Held
    // calls at 10 000": a third grows V8's listener array from 2 slots to 19).
    const held: Array<{ res: ServerResponse; aborted: Promise<string> }> = [];
    const holding = (req: IncomingMessage, res: ServerResponse): void => {
      const aborted = new Promise<string>((resolve) => {
        // node's own socket `close` listener destroys a request still in flight with "aborted".
        req.on("error", (error) => resolve(error.message));
      });
      held.push({ res, aborted });
    };
    const plain = createServer(holding);
    const tracked = createServer(holding);
    const bounds = new ConnectionBounds({
      maxConnections: 10,
      maxConnectionsPerBucket: 10,
      trustProxy: { kind: "none" },
    });
    bounds.attach(tracked, { closeSilentAfterMs: 60_000 });
    const plainSockets: Socket[] = [];
    const trackedSockets: Socket[] = [];
    plain.on("connection", (socket: Socket) => plainSockets.push(socket));
    tracked.on("connection", (socket: Socket) => trackedSockets.push(socket));
    const portOf = async (server: typeof plain): Promise<number> => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as AddressInfo).port;
    };
    const plainPort = await portOf(plain);
    const trackedPort = await portOf(tracked);
    const clients = [
      connect(plainPort, "127.0.0.1"),
      connect(trackedPort, "127.0.0.1"),
      connect(trackedPort, "127.0.0.1"),
    ];
    for (const client of clients) client.on("error", () => {});
    const count = (socket: Socket | undefined) => socket?.listenerCount("close");
    try {
      await until(
        () => plainSockets.length === 1 && bounds.counts().open === 2,
        2_000,
        "connections accepted",
      );
      const idle = count(plainSockets[0]);
      assert.equal(count(trackedSockets[0]), idle, "idle: node's own count");
      assert.equal(count(trackedSockets[1]), idle);
      for (const client of clients) {
        client.write("POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n");
      }
      await until(() => held.length === 3, 2_000, "three requests held");
      const busy = count(plainSockets[0]);
      assert.ok((busy ?? 0) > (idle ?? 0), "node adds one while a response is attached");
      assert.equal(count(trackedSockets[0]), busy, "busy: node's own count");
      assert.equal(count(trackedSockets[1]), busy);
      for (const client of clients) client.destroy();
      const reasons = await Promise.all(held.map((h) => h.aborted));
      assert.deepEqual(reasons, ["aborted", "aborted", "aborted"], "node's listeners ran");
      await until(() => bounds.counts().open === 0, 2_000, "both forgotten once closed");
      assert.equal(bounds.held("127.0.0.1"), 0);
    } finally {
      for (const client of clients) client.destroy();
      await new Promise((resolve) => plain.close(resolve));
      await new Promise((resolve) => tracked.close(resolve));
    }
  });
});

describe("a socket admitted twice", () => {
  test("is counted once, and forgotten once it closes", async () => {
    const server = createServer((_req, res) => res.end());
    const bounds = new ConnectionBounds({
      maxConnections: 10,
      maxConnectionsPerBucket: 10,
      trustProxy: { kind: "none" },
    });
    // Attached twice by mistake: two `connection` listeners admit each socket.
    bounds.attach(server);
    bounds.attach(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
    client.on("error", () => {});
    try {
      await until(() => bounds.counts().open === 1, 2_000, "admitted");
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(bounds.counts().open, 1, "counted once");
      client.destroy();
      await until(() => bounds.counts().open === 0, 2_000, "forgotten once closed");
    } finally {
      client.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
