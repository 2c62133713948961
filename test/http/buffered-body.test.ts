/**
 * `bufferedBody` (src/http/read-body.ts): a body that came in the packet of its headers is taken
 * at once, one microtask after the request event, under the same limit as `readBody`; a body
 * still on its way is left to `readBody`. Real node:http servers on 127.0.0.1, requests written
 * on raw sockets so that what arrives together is known.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { test } from "node:test";

import { BODY_TOO_LARGE, bufferedBody, readBody } from "../../src/http/read-body.js";

type Seen = ReturnType<typeof bufferedBody>;

/**
 * A server whose handler looks at the body one microtask after the request event (as the
 * endpoint does), or once the parser is done with the packet (`later`).
 */
async function withServer(
  limit: number,
  run: (port: number, seen: Promise<{ now: Seen; read: unknown }>) => Promise<void>,
  later = false,
): Promise<void> {
  let report: (value: { now: Seen; read: unknown }) => void = () => {};
  const seen = new Promise<{ now: Seen; read: unknown }>((resolve) => {
    report = resolve;
  });
  const server = createServer(async (req: IncomingMessage, res) => {
    if (later) await new Promise((resolve) => setImmediate(resolve));
    else await null; // the endpoint's one microtask before it reads the body
    const now = bufferedBody(req, limit, req.headers["content-length"]);
    const read = now === undefined ? await readBody(req, limit, 2_000) : now;
    report({ now, read });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await run((server.address() as AddressInfo).port, seen);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Writes `parts` on a fresh socket, `gapMs` apart, and returns the first bytes answered. */
function send(port: number, parts: string[], gapMs = 0): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    socket.setEncoding("utf8");
    socket.once("data", (text: string) => {
      socket.destroy();
      resolve(text);
    });
    socket.once("error", reject);
    socket.once("connect", async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(part);
      }
    });
  });
}

const BODY = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const head = (length: number) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

test("a body in the packet of its headers is taken at once, whole", async () => {
  await withServer(1_024, async (port, seen) => {
    const answer = await send(port, [head(BODY.length) + BODY]);
    assert.match(answer, /^HTTP\/1\.1 200/);
    const { now } = await seen;
    assert.ok(Buffer.isBuffer(now), "taken without waiting");
    assert.equal(now.toString("utf8"), BODY);
  });
});

test("a body still on its way is left to readBody, which waits for it", async () => {
  await withServer(1_024, async (port, seen) => {
    const answer = await send(port, [head(BODY.length), BODY], 50);
    assert.match(answer, /^HTTP\/1\.1 200/);
    const { now, read } = await seen;
    assert.equal(now, undefined);
    assert.ok(Buffer.isBuffer(read));
    assert.equal(read.toString("utf8"), BODY);
  });
});

test("half a body is not taken: the declared length decides", async () => {
  await withServer(1_024, async (port, seen) => {
    const half = BODY.slice(0, 10);
    const answer = await send(port, [head(BODY.length) + half, BODY.slice(10)], 50);
    assert.match(answer, /^HTTP\/1\.1 200/);
    const { now, read } = await seen;
    assert.equal(now, undefined);
    assert.equal((read as Buffer).toString("utf8"), BODY);
  });
});

const chunked = (body: string) =>
  `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

test("a chunked body (no declared length) is taken at once only once the message is complete", async () => {
  await withServer(1_024, async (port, seen) => {
    await send(port, [chunked(BODY)]);
    const { now, read } = await seen;
    assert.equal(now, undefined, "one microtask in, its end is not parsed yet");
    assert.equal((read as Buffer).toString("utf8"), BODY);
  });
  await withServer(
    1_024,
    async (port, seen) => {
      await send(port, [chunked(BODY)]);
      const { now } = await seen;
      assert.equal((now as Buffer).toString("utf8"), BODY);
    },
    true,
  );
});

test("a whole body over the limit is refused without being read", async () => {
  await withServer(
    16,
    async (port, seen) => {
      await send(port, [chunked(BODY)]);
      const { now } = await seen;
      assert.equal(now, BODY_TOO_LARGE);
    },
    true,
  );
});
