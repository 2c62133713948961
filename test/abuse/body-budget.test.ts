/**
 * Request bodies being read are budgeted per tenant, then in all (docs/tenancy.md): each body is
 * at most `limits.maxBodyBytes`, but without a budget one address could have the server reading
 * `maxConcurrentRequestsPerScope` of them at once. Raw sockets from 127.0.0.2–7 (each its own IP
 * bucket) send a request head declaring a 64 KiB body and hold the body back, against a real node
 * on 127.0.0.1 (per bucket 4 bodies' worth, in all 8):
 *
 * - the bucket's budget is checked first: a fifth held body from one address is refused before a
 *   byte of it is read (429, `Retry-After: 1`, JSON-RPC -32000), while another address is served;
 *   a body finished frees its share;
 * - the global budget refuses nobody under its own budget: reaching it closes the connection of
 *   the oldest body of the address holding the most, and the newcomer is read and answered.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";

import { echoTool } from "../../src/cli/demo-tools.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";

const BODY = 64 * 1_024;
const PER_BUCKET = 4 * BODY;
const TOTAL = 8 * BODY;

/** A tools/list request padded to exactly `BODY` bytes. */
function paddedBody(): string {
  const head = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"';
  const tail = '"}}}';
  return head + "x".repeat(BODY - head.length - tail.length) + tail;
}

/** One request whose body is held back after its first bytes. */
interface HeldBody {
  /** Everything the server sent so far. */
  received: string;
  /** Whether the connection ended (closed by the server, or reset). */
  closed: boolean;
  /** Sends the rest of the body. */
  finish(): void;
  destroy(): void;
}

function holdBody(port: number, from: string): Promise<HeldBody> {
  const body = paddedBody();
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ port, host: "127.0.0.1", localAddress: from });
    const held: HeldBody = {
      received: "",
      closed: false,
      finish: () => socket.write(body.slice(100)),
      destroy: () => socket.destroy(),
    };
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      held.received += chunk;
    });
    socket.on("close", () => {
      held.closed = true;
    });
    socket.on("error", () => {});
    socket.once("connect", () => {
      socket.write(
        [
          "POST /mcp HTTP/1.1",
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          "Accept: application/json, text/event-stream",
          "MCP-Protocol-Version: 2025-11-25",
          `Content-Length: ${BODY}`,
          "",
          "",
        ].join("\r\n"),
      );
      // The first bytes in a packet of their own: the body is not whole when the head is read.
      setTimeout(() => {
        socket.write(body.slice(0, 100));
        resolve(held);
      }, 20);
    });
    socket.once("error", reject);
  });
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until the server answered `held`; resolves its status line and body. */
async function answerOf(held: HeldBody): Promise<{ status: number; text: string }> {
  await until(() => /\r\n\r\n[\s\S]*\}\s*$/.test(held.received) || held.closed, 5_000, "an answer");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(held.received)?.[1] ?? 0);
  return { status, text: held.received };
}

describe("request bodies in flight: a budget per bucket, then in all", () => {
  let server: McpServer;
  let port: number;
  const open: HeldBody[] = [];

  before(async () => {
    server = createMcpServer({
      tools: [echoTool],
      limits: {
        maxBodyBytes: BODY,
        maxBodyBytesInFlightPerScope: PER_BUCKET,
        maxBodyBytesInFlight: TOTAL,
      },
    });
    ({ port } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(async () => {
    for (const held of open) held.destroy();
    await server?.close();
  });

  const hold = async (from: string): Promise<HeldBody> => {
    const held = await holdBody(port, from);
    open.push(held);
    return held;
  };

  test("a budget below one body is refused at construction, naming the option", () => {
    for (const option of ["maxBodyBytesInFlightPerScope", "maxBodyBytesInFlight"]) {
      assert.throws(
        () => createMcpServer({ limits: { maxBodyBytes: BODY, [option]: BODY - 1 } }),
        (error: Error) =>
          error.message.includes(`limits.${option}`) && /at least maxBodyBytes/.test(error.message),
      );
    }
  });

  test("one address's bodies are bounded by its own budget; another address is served", async () => {
    const mine: HeldBody[] = [];
    for (let i = 0; i < 4; i++) mine.push(await hold("127.0.0.2"));
    const fifth = await hold("127.0.0.2");
    const refused = await answerOf(fifth);
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.text, /retry-after: 1/i);
    assert.match(refused.text, /"code":-32000/);
    assert.match(refused.text, /Too many request bytes in flight/);
    await until(() => fifth.closed, 5_000, "the refused connection to close");
    for (const held of mine) assert.equal(held.received, "", "the four held bodies wait");

    // Another address is read and answered meanwhile.
    const other = await hold("127.0.0.3");
    other.finish();
    assert.equal((await answerOf(other)).status, 200);

    // A finished body frees its share: the address may send another.
    mine[0]?.finish();
    assert.equal((await answerOf(mine[0] as HeldBody)).status, 200);
    const again = await hold("127.0.0.2");
    again.finish();
    assert.equal((await answerOf(again)).status, 200);
    for (const held of [...mine.slice(1)]) {
      held.finish();
      assert.equal((await answerOf(held)).status, 200);
    }
  });

  test("at the global budget the largest holder's oldest body makes room; the newcomer is served", async () => {
    const largest: HeldBody[] = [];
    for (let i = 0; i < 4; i++) largest.push(await hold("127.0.0.4"));
    const middle: HeldBody[] = [];
    for (let i = 0; i < 3; i++) middle.push(await hold("127.0.0.5"));
    const small = await hold("127.0.0.6"); // 8 bodies: the global budget is full
    const newcomer = await hold("127.0.0.7");
    await until(() => largest[0]?.closed === true, 5_000, "the largest holder's oldest body cut");
    assert.equal(largest[0]?.received, "", "cut without an answer, as the request bound does");
    for (const held of [...largest.slice(1), ...middle, small]) assert.equal(held.closed, false);
    newcomer.finish();
    assert.equal((await answerOf(newcomer)).status, 200);
    for (const held of [...largest.slice(1), ...middle, small]) {
      held.finish();
      assert.equal((await answerOf(held)).status, 200);
    }
  });
});
