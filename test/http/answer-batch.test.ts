/**
 * Whole answers leave together at the end of the event loop's I/O phase
 * (src/http/doors/answer-batch.ts; docs/profile.md "Thirteenth round"): the batch itself (order,
 * bounds, answers dropped), the node:http door on a real socket (requests that one poll found ready
 * all run before any of their answers is written; an answer waiting counts as ended; one destroyed
 * while it waits is never written), and answers still correct through it.
 */
import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import {
  dropHeld,
  type HeldAnswer,
  heldAnswerCount,
  holdAnswer,
  isHeld,
  MAX_HELD_ANSWERS,
  MAX_HELD_CHARS,
} from "../../src/http/doors/answer-batch.js";
import { createNodeListener, type RequestCore } from "../../src/http/index.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";

const turnEnd = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A held answer that records what it was released with. */
function recorder(log: string[], name: string): HeldAnswer {
  return { release: (chunk) => log.push(`${name}:${chunk}`) };
}

describe("the answer batch", () => {
  test("holds answers until the turn's I/O phase is over, then writes them in order", async () => {
    const log: string[] = [];
    const a = recorder(log, "a");
    const b = recorder(log, "b");
    assert.equal(holdAnswer(a, "1"), true);
    assert.equal(holdAnswer(b, "2"), true);
    assert.deepEqual(log, [], "nothing is written while the turn runs");
    assert.equal(isHeld(a), true);
    assert.equal(heldAnswerCount(), 2);
    await turnEnd();
    assert.deepEqual(log, ["a:1", "b:2"]);
    assert.equal(isHeld(a), false);
    assert.equal(heldAnswerCount(), 0);
  });

  test("an answer dropped while it waits is never written", async () => {
    const log: string[] = [];
    const a = recorder(log, "a");
    const b = recorder(log, "b");
    holdAnswer(a, "1");
    holdAnswer(b, "2");
    dropHeld(a);
    assert.equal(isHeld(a), false);
    await turnEnd();
    assert.deepEqual(log, ["b:2"]);
  });

  test(`the ${MAX_HELD_ANSWERS}th answer releases the whole batch at once`, async () => {
    const log: string[] = [];
    for (let i = 1; i < MAX_HELD_ANSWERS; i++) holdAnswer(recorder(log, `n${i}`), "x");
    assert.equal(log.length, 0);
    holdAnswer(recorder(log, "last"), "x");
    assert.equal(log.length, MAX_HELD_ANSWERS, "released without waiting for the turn's end");
    assert.equal(log.at(-1), "last:x");
    assert.equal(heldAnswerCount(), 0);
    await turnEnd();
    assert.equal(log.length, MAX_HELD_ANSWERS, "and nothing twice");
  });

  test("a batch that reaches the character bound is released at once; a longer answer is not held", async () => {
    const log: string[] = [];
    const half = "y".repeat(MAX_HELD_CHARS / 2);
    holdAnswer(recorder(log, "a"), half);
    assert.equal(log.length, 0);
    holdAnswer(recorder(log, "b"), half);
    assert.equal(log.length, 2, "the characters held reached the bound");
    const tooLong = "z".repeat(MAX_HELD_CHARS + 1);
    const big = recorder(log, "big");
    assert.equal(holdAnswer(big, tooLong), false);
    assert.equal(isHeld(big), false);
    await turnEnd();
    assert.equal(log.length, 2, "the caller writes an answer that was not held");
  });
});

/** One keep-alive HTTP/1.1 connection that reads Content-Length answers, one at a time. */
class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiting: ((answer: { status: number; body: string } | null) => void) | null = null;
  private closed = false;

  private constructor(readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.deliver();
    });
    socket.on("close", () => {
      this.closed = true;
      this.waiting?.(null);
      this.waiting = null;
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port }, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  send(path: string, body: string): void {
    this.socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }

  /** The next answer, or null when the connection closed first. */
  answer(): Promise<{ status: number; body: string } | null> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.deliver();
    });
  }

  private deliver(): void {
    if (this.waiting === null) return;
    if (this.closed) {
      this.waiting(null);
      this.waiting = null;
      return;
    }
    const headEnd = this.buffer.indexOf("\r\n\r\n");
    if (headEnd === -1) return;
    const head = this.buffer.subarray(0, headEnd).toString("latin1");
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
    assert.ok(Number.isInteger(length), `an answer with a Content-Length: ${head}`);
    if (this.buffer.length < headEnd + 4 + length) return;
    const body = this.buffer.subarray(headEnd + 4, headEnd + 4 + length).toString("utf8");
    this.buffer = this.buffer.subarray(headEnd + 4 + length);
    const status = Number(head.slice(9, 12));
    const resolve = this.waiting;
    this.waiting = null;
    resolve({ status, body });
  }
}

const callBody = (id: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "mark", arguments: { n: id } },
  });

describe("the node:http door batches the answers of one poll", () => {
  const log: string[] = [];
  let mcp: McpServer;
  let http: Server;
  let port = 0;

  before(async () => {
    mcp = createMcpServer({
      tools: [
        defineTool({
          name: "mark",
          description: "Records that it ran",
          input: z.object({ n: z.number().int() }),
          handler: ({ n }) => {
            log.push(`run ${n}`);
            return `ran ${n}`;
          },
        }),
      ],
    });
    // node's own server over the door, with each answer's last write recorded.
    http = createServer((req, res: ServerResponse) => {
      const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
      res.end = ((chunk?: unknown) => {
        log.push("written");
        return end(chunk);
      }) as ServerResponse["end"];
      mcp.handler(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    port = (http.address() as AddressInfo).port;
  });

  after(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await mcp.close();
  });

  test("every request ready at once runs before any of their answers is written, and each gets its own", async () => {
    const connections = await Promise.all([1, 2, 3].map(() => RawConnection.open(port)));
    // One call on each first: the server has accepted every connection and reads from it.
    for (const [i, connection] of connections.entries()) {
      connection.send("/mcp", callBody(100 + i));
      assert.equal((await connection.answer())?.status, 200);
    }
    log.length = 0;
    // All three in one synchronous block: on loopback each is in the server's socket buffer
    // when the write returns, so the server's next poll finds the three ready together.
    for (const [i, connection] of connections.entries()) connection.send("/mcp", callBody(i + 1));
    const answers = await Promise.all(connections.map((connection) => connection.answer()));
    assert.deepEqual(log, ["run 1", "run 2", "run 3", "written", "written", "written"]);
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer?.status, 200);
      const message = JSON.parse(answer?.body ?? "") as {
        id: number;
        result: { content: Array<{ text: string }> };
      };
      assert.equal(message.id, i + 1);
      assert.equal(message.result.content[0]?.text, `ran ${i + 1}`);
    }
    for (const connection of connections) connection.socket.destroy();
  });
});

describe("an answer while it waits in the batch", () => {
  const endedAfterEnd: boolean[] = [];
  let http: Server;
  let port = 0;

  before(async () => {
    // A core that answers every request at once, and destroys the answer of /drop right after.
    const core: RequestCore = {
      serves: () => true,
      handle(input, target) {
        target.writeJsonHead?.(200, 2);
        target.end("{}");
        endedAfterEnd.push(target.ended);
        if (input.path === "/drop") target.destroy();
        return Promise.resolve();
      },
    };
    http = createServer(createNodeListener(core));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    port = (http.address() as AddressInfo).port;
  });

  after(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  test("counts as ended, so nothing answers it twice, and is written once the turn ends", async () => {
    const connection = await RawConnection.open(port);
    connection.send("/keep", "{}");
    assert.deepEqual(await connection.answer(), { status: 200, body: "{}" });
    assert.deepEqual(endedAfterEnd, [true]);
    connection.socket.destroy();
  });

  test("is never written once its response was destroyed: the client sees the connection close", async () => {
    const connection = await RawConnection.open(port);
    connection.send("/drop", "{}");
    assert.equal(await connection.answer(), null);
  });
});
