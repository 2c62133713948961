/**
 * The request core reads a copy of the headers whose hidden class does not depend on the order
 * the client sent them in (src/http/core/context/steady-headers.ts, `RequestContext.headers`;
 * https://v8.dev/docs/hidden-classes): the same class for the same headers in any order, every
 * value as sent, and a known header the request lacks reading undefined. Checked on the copy
 * itself and on the contexts of requests a real node:http server on 127.0.0.1 received through
 * the node door, written on raw sockets so the order on the wire is known. The hidden class is compared with V8's own `%HaveSameMap`
 * (`--allow-natives-syntax`, set for this process before the checking function is compiled).
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";

import type { CoreState } from "../../src/http/core/context/core-state.js";
import { RequestContext } from "../../src/http/core/context/request-context.js";
import { steadyHeaders } from "../../src/http/core/context/steady-headers.js";
import { createNodeListener } from "../../src/http/doors/node-door.js";
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

test("the core's context of a node:http request: one hidden class whatever the client's header order", async () => {
  const seen: RequestHeaders[] = [];
  const nodeOwn: RequestHeaders[] = [];
  // The context reads only `recorder` of the core's state when it is made.
  const state = { recorder: null } as unknown as CoreState;
  const core: RequestCore = {
    handle(input, target) {
      nodeOwn.push(input.headers);
      seen.push(new RequestContext(state, input, target).headers);
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
  // What node itself built for the two requests: two classes (the door hands them on as they are).
  assert.equal(sameHiddenClass(nodeOwn[0] as object, nodeOwn[1] as object), false);
});
