/**
 * The doors hand the request core a copy of the headers whose hidden class does not depend on the
 * order the client sent them in (src/http/doors/steady-headers.ts; https://v8.dev/docs/hidden-classes):
 * the same class for the same headers in any order, every value as sent, and a known header the
 * request lacks reading undefined. Checked on the copy itself and through the node:http door on
 * a real server on 127.0.0.1, with requests written on raw sockets so the order on the wire is
 * known. The hidden class is compared with V8's own `%HaveSameMap`
 * (`--allow-natives-syntax`, set for this process before the checking function is compiled).
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";

import { createNodeListener } from "../../src/http/doors/node-door.js";
import { steadyHeaders, steadyHeadersOf } from "../../src/http/doors/steady-headers.js";
import type { RequestCore } from "../../src/http/endpoint.js";
import type { RequestHeaders } from "../../src/http/transport.js";

setFlagsFromString("--allow-natives-syntax");
const sameHiddenClass = new Function("a", "b", "return %HaveSameMap(a, b)") as (
  a: object,
  b: object,
) => boolean;

test("steadyHeaders: the same headers in two orders give objects of one hidden class", () => {
  const one = steadyHeaders({ host: "h", accept: "a", "content-type": "c", "mcp-session-id": "s" });
  const two = steadyHeaders({ "mcp-session-id": "s", "content-type": "c", accept: "a", host: "h" });
  // node's own objects for those two orders are of two classes: what the copy is for.
  assert.equal(
    sameHiddenClass(
      { host: "h", accept: "a", "content-type": "c", "mcp-session-id": "s" },
      { "mcp-session-id": "s", "content-type": "c", accept: "a", host: "h" },
    ),
    false,
  );
  assert.equal(sameHiddenClass(one, two), true);
  assert.deepEqual({ ...one }, { ...two });
});

test("steadyHeaders: every value as sent, other headers kept, a missing known one undefined", () => {
  const copy = steadyHeaders({
    host: "127.0.0.1:3000",
    "set-cookie": ["a=1", "b=2"],
    "x-custom": "yes",
    origin: undefined,
  });
  assert.equal(copy.host, "127.0.0.1:3000");
  assert.deepEqual(copy["set-cookie"], ["a=1", "b=2"]);
  assert.equal(copy["x-custom"], "yes");
  assert.equal(copy.origin, undefined);
  assert.equal(copy["mcp-session-id"], undefined);
  assert.equal(copy["x-absent"], undefined);
});

test("steadyHeadersOf: a Headers object's entries, of the same hidden class as node's copy", () => {
  const fromFetch = steadyHeadersOf(new Headers({ Accept: "a", Host: "h" }));
  const fromNode = steadyHeaders({ host: "h", accept: "a" });
  assert.equal(fromFetch.accept, "a");
  assert.equal(fromFetch.host, "h");
  assert.equal(sameHiddenClass(fromFetch, fromNode), true);
});

/** Writes raw `requests` on one keep-alive socket; resolves once `count` answers came back. */
function sendRaw(port: number, requests: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answered = 0;
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      answered += text.split("HTTP/1.1 204").length - 1;
      if (answered >= requests.length) {
        socket.destroy();
        resolve();
      }
    });
    socket.once("error", reject);
    socket.once("connect", () => socket.write(requests.join("")));
  });
}

test("the node:http door hands the core one hidden class whatever the client's header order", async () => {
  const seen: RequestHeaders[] = [];
  const core: RequestCore = {
    handle(input, target) {
      seen.push(input.headers);
      target.writeHead(204, {});
      target.end();
      return Promise.resolve();
    },
    serves: () => true,
  };
  const server = createServer(createNodeListener(core));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    await sendRaw(port, [
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: 2\r\n\r\n{}",
      "POST /mcp HTTP/1.1\r\nContent-Length: 2\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Type: application/json\r\nAccept: application/json\r\nHost: 127.0.0.1\r\n\r\n{}",
    ]);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  assert.equal(seen.length, 2);
  const [first, second] = seen as [RequestHeaders, RequestHeaders];
  assert.equal(first["mcp-protocol-version"], "2025-11-25");
  assert.equal(second["content-length"], "2");
  assert.equal(sameHiddenClass(first, second), true);
});
