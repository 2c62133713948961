/**
 * Per-tenant rate limits (`rateLimits`; docs/limits.md, "Rate limits") on one node, over a real
 * listening server: the official clients (`@modelcontextprotocol/sdk` 1.x, 2025-11-25;
 * `@modelcontextprotocol/client` 2.x pinned to 2026-07-28) are refused once their bucket is
 * empty, with 429, `Retry-After` and -32000 carrying the request's id and `data.retryAfterMs`,
 * while another address (127.0.0.2, another IP bucket) is still served; notifications are never
 * limited; a per-tool rule limits that tool only; a bucket refills; option errors are refused at
 * construction; the memory store keeps at most `maxBuckets` buckets.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import {
  createMcpServer,
  defineTool,
  InvalidOptionError,
  type McpServer,
  MemoryRateLimitStore,
} from "../../src/index.js";
import { callBody, cancelBody } from "../server/fixtures.js";
import { modernCall, postFrom } from "./rate-wire.js";

const tools = [
  defineTool({ name: "echo", handler: () => "echo" }),
  defineTool({ name: "expensive", handler: () => "done" }),
];
/** Refills one token every 1 000 s: nothing refills during a test. */
const SLOW = 0.001;

describe("rate limits on one node (memory)", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      tools,
      sessions: true,
      metrics: true,
      rateLimits: {
        // Anonymous callers: 4 requests per IP bucket; `expensive` once.
        perScope: { ip: { capacity: 4, refillPerSecond: SLOW } },
        tools: { expensive: { capacity: 1, refillPerSecond: SLOW } },
      },
    });
    url = (await server.listen({ host: "127.0.0.1", port: 0 })).url;
  });

  after(() => server.close());

  test("2025-11-25 (SDK 1.x): the fifth request of 127.0.0.1 is refused, 127.0.0.2 is served", async () => {
    const client = new LegacyClient({ name: "rate-test", version: "1.0.0" });
    await client.connect(new LegacyTransport(new URL(url))); // initialize: 1 token
    try {
      for (let i = 0; i < 3; i++) await client.callTool({ name: "echo", arguments: {} });
      await assert.rejects(client.callTool({ name: "echo", arguments: {} }), (error: unknown) => {
        // The SDK surfaces the JSON-RPC error of the 429 body.
        assert.match(String(error), /Rate limit exceeded/);
        return true;
      });
    } finally {
      await client.close().catch(() => {});
    }
    // The wire: 429, Retry-After in whole seconds, -32000 with the request's id and the wait.
    const refused = await postFrom(url, callBody(77, "echo", {}));
    assert.equal(refused.status, 429, refused.text);
    const retryAfter = Number(refused.headers["retry-after"]);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${retryAfter}`);
    assert.equal(refused.json.id, 77);
    assert.equal(refused.json.error.code, -32000);
    assert.equal(refused.json.error.message, "Rate limit exceeded");
    assert.ok(refused.json.error.data.retryAfterMs > 0);
    assert.ok(Math.abs(retryAfter * 1000 - refused.json.error.data.retryAfterMs) < 1000);
    // A notification (a cancel) still gets through.
    const cancel = await postFrom(url, cancelBody(77));
    assert.equal(cancel.status, 202);
    // Another tenant (another IP bucket) is served.
    const other = await postFrom(url, callBody(1, "echo", {}), { localAddress: "127.0.0.2" });
    assert.equal(other.status, 200, other.text);
    assert.equal(other.json.result.content[0].text, "echo");
  });

  test("2026-07-28 (client 2.x): a tool rule limits that tool only, per bucket", async () => {
    // 127.0.0.3: a fresh bucket of 4.
    const first = modernCall(1, "expensive");
    const ok = await postFrom(url, first.body, {
      localAddress: "127.0.0.3",
      headers: first.headers,
    });
    assert.equal(ok.status, 200, ok.text);
    const again = modernCall(2, "expensive");
    const refused = await postFrom(url, again.body, {
      localAddress: "127.0.0.3",
      headers: again.headers,
    });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.id, 2);
    const echo = modernCall(3, "echo");
    const served = await postFrom(url, echo.body, {
      localAddress: "127.0.0.3",
      headers: echo.headers,
    });
    assert.equal(served.status, 200, "another tool of the same bucket is served");

    // The official 2.x client from 127.0.0.4: `expensive` once, then refused; echo still works.
    const client = new ModernClient(
      { name: "rate-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernTransport(new URL(url.replace("127.0.0.1", "127.0.0.4")), {
        // The server listens on 127.0.0.1 only: the client's requests go there from 127.0.0.4.
        fetch: (input, init) => fetchFrom("127.0.0.4", input, init),
      }),
    );
    try {
      const done = await client.callTool({ name: "expensive", arguments: {} });
      assert.notEqual(done.isError, true);
      await assert.rejects(client.callTool({ name: "expensive", arguments: {} }), /429|Rate limit/);
      const still = await client.callTool({ name: "echo", arguments: {} });
      assert.notEqual(still.isError, true);
    } finally {
      await client.close().catch(() => {});
    }
  });

  test("metrics count rate-limit refusals by scope kind", async () => {
    const text = await (await fetch(new URL("/metrics", url))).text();
    const match = /conduit_mcp_rate_limited_total\{kind="ip"\} (\d+)/.exec(text);
    assert.ok(match !== null && Number(match[1]) >= 3, text);
  });
});

/**
 * The global fetch cannot choose its local address; this one sends through node:http from
 * `localAddress` to 127.0.0.1 (where the server listens), for the official client's `fetch`.
 */
async function fetchFrom(
  localAddress: string,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const { request } = await import("node:http");
  const target = new URL(input instanceof Request ? input.url : String(input));
  target.hostname = "127.0.0.1";
  const headers = new Headers(init?.headers);
  const body = init?.body === undefined || init.body === null ? undefined : String(init.body);
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: init?.method ?? "GET",
        localAddress,
        headers: Object.fromEntries(headers.entries()),
      },
      (res) => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (typeof value === "string") out.set(name, value);
          else if (Array.isArray(value)) for (const v of value) out.append(name, v);
        }
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            res.on("data", (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk)));
            res.on("end", () => controller.close());
            res.on("error", (error) => controller.error(error));
          },
          cancel() {
            res.destroy();
          },
        });
        const status = res.statusCode ?? 500;
        resolve(
          new Response(status === 202 || status === 204 ? null : stream, { status, headers: out }),
        );
      },
    );
    init?.signal?.addEventListener("abort", () => req.destroy(init.signal?.reason as Error));
    req.on("error", reject);
    req.end(body);
  });
}

describe("rate limits: refill, principals, options", () => {
  test("a bucket refills at its rate: refused, then served after Retry-After's wait", async () => {
    const server = createMcpServer({
      tools,
      // One token a second: a loaded host answering the second request within that is enough.
      rateLimits: { perScope: { capacity: 1, refillPerSecond: 1 } },
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      assert.equal((await postFrom(url, callBody(1, "echo", {}))).status, 200);
      const refused = await postFrom(url, callBody(2, "echo", {}));
      assert.equal(refused.status, 429);
      const waitMs = refused.json.error.data.retryAfterMs as number;
      assert.ok(waitMs > 0 && waitMs <= 1_000, `wait ${waitMs} ms at 1 token per second`);
      await delay(waitMs + 20);
      assert.equal((await postFrom(url, callBody(3, "echo", {}))).status, 200);
    } finally {
      await server.close();
    }
  });

  test("a principal's bucket follows the principal, whatever its address; kinds have their own rates", async () => {
    const server = createMcpServer({
      tools,
      auth: { tokens: { "secret-token-alice-0001": "alice", "secret-token-bob-00001": "bob" } },
      rateLimits: {
        perScope: { principal: { capacity: 2, refillPerSecond: SLOW }, ip: false },
      },
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    try {
      const alice = as("secret-token-alice-0001");
      assert.equal((await postFrom(url, callBody(1, "echo", {}), { headers: alice })).status, 200);
      const fromElsewhere = { headers: alice, localAddress: "127.0.0.2" };
      assert.equal((await postFrom(url, callBody(2, "echo", {}), fromElsewhere)).status, 200);
      assert.equal((await postFrom(url, callBody(3, "echo", {}), fromElsewhere)).status, 429);
      const bob = { headers: as("secret-token-bob-00001") };
      assert.equal((await postFrom(url, callBody(4, "echo", {}), bob)).status, 200);
    } finally {
      await server.close();
    }
  });

  test("bad rates and unknown keys are refused at construction", () => {
    const bad: unknown[] = [
      { perScope: { capacity: 0, refillPerSecond: 1 } },
      { perScope: { capacity: 1.5, refillPerSecond: 1 } },
      { perScope: { capacity: 10, refillPerSecond: 0 } },
      { perScope: { capacity: 10 } },
      { perScope: { session: { capacity: 1, refillPerSecond: 1 } } },
      { methods: { "": { capacity: 1, refillPerSecond: 1 } } },
      { perSession: { capacity: 1, refillPerSecond: 1 } },
      { perScope: { capacity: 1, refillPerSecond: 1 }, store: {}, maxBuckets: 5 },
      "fast",
    ];
    for (const rateLimits of bad) {
      assert.throws(
        () => createMcpServer({ rateLimits: rateLimits as never }),
        InvalidOptionError,
        JSON.stringify(rateLimits),
      );
    }
  });

  test("the memory store keeps at most maxBuckets buckets, least recently used forgotten", () => {
    let now = 0;
    const store = new MemoryRateLimitStore({ maxBuckets: 3, clock: () => now });
    const rate = [{ key: "*", capacity: 1, refillPerSecond: SLOW }];
    for (const bucket of ["ip:a", "ip:b", "ip:c"]) assert.equal(store.take(bucket, rate), 0);
    assert.ok(store.take("ip:a", rate) > 0, "a is empty");
    now += 1;
    assert.equal(store.take("ip:d", rate), 0);
    assert.equal(store.size, 3);
    // b was the least recently used: forgotten, so it starts full again; a is still empty.
    assert.equal(store.take("ip:b", rate), 0);
    assert.ok(store.take("ip:a", rate) > 0);
    // Buckets idle long enough to be full again are dropped as new ones arrive.
    now += 10_000_000;
    store.take("ip:e", rate);
    assert.ok(store.size < 3, `size ${store.size}`);
  });
});
