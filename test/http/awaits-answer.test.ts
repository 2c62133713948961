/**
 * What the request core's promise follows (src/http/transport.ts `ResponseTarget.awaitsAnswer`):
 * on the node:http door, which learns the end of an answer from node's own response, the promise
 * settles once a call runs, so the core keeps no promise, reaction or closure per running call
 * (docs/profile.md, "Held calls at 10 000"); on the fetch door, which closes its `Response`
 * when that promise settles, it settles only once the answer is complete. Both doors over one
 * server's real core; the node door on a real socket.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { createFetchHandler, createNodeListener, type RequestCore } from "../../src/http/index.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";
import { transportCore } from "../../src/server/transport-core.js";

const HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": "2025-11-25",
};

/** Calls of `hold` wait here until the test lets them go. */
let release: () => void = () => {};
let held = new Promise<void>((resolve) => {
  release = resolve;
});
let started = 0;

const holdTool = defineTool({
  name: "hold",
  description: "Waits until the test releases it",
  input: z.object({}),
  handler: async () => {
    started += 1;
    await held;
    return "released";
  },
});

function rearm(): void {
  started = 0;
  held = new Promise<void>((resolve) => {
    release = resolve;
  });
}

const body = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "hold" } });

/** The core, with every promise it hands a door recorded (settled or not). */
function recording(core: RequestCore): { core: RequestCore; settled: () => boolean[] } {
  const states: boolean[] = [];
  return {
    core: {
      serves: (path) => core.serves(path),
      handle(input, target) {
        const promise = core.handle(input, target);
        const at = states.push(false) - 1;
        promise.then(
          () => {
            states[at] = true;
          },
          () => {
            states[at] = true;
          },
        );
        return promise;
      },
    },
    settled: () => [...states],
  };
}

const until = async (what: () => boolean, ms = 5_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

describe("the request core's promise, per door", () => {
  let server: McpServer;
  before(() => {
    server = createMcpServer({ tools: [holdTool] });
  });
  after(async () => {
    release();
    await server.close();
  });

  test("node:http: it settles while the call still runs, and the answer still arrives", async () => {
    rearm();
    const { core, settled } = recording(transportCore(server).request);
    const http: Server = createServer(createNodeListener(core));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = http.address() as AddressInfo;
      const answer = fetch(`http://127.0.0.1:${port}/mcp`, {
        method: "POST",
        headers: HEADERS,
        body: body(1),
      });
      await until(() => started === 1);
      await until(() => settled()[0] === true);
      assert.deepEqual(settled(), [true], "settled before the tool was released");
      release();
      const response = await answer;
      assert.equal(response.status, 200);
      const message = (await response.json()) as { result?: { content?: unknown } };
      assert.deepEqual(message.result?.content, [{ type: "text", text: "released" }]);
    } finally {
      release();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  test("fetch: it settles only once the answer is complete", async () => {
    rearm();
    const { core, settled } = recording(transportCore(server).request);
    const handler = createFetchHandler(core);
    // A JSON answer: its Response is decided only when the call answers.
    const answer = handler(
      new Request("http://127.0.0.1/mcp", { method: "POST", headers: HEADERS, body: body(2) }),
    );
    await until(() => started === 1);
    // Several turns of the event loop with the call held: the promise still waits.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(settled(), [false], "pending while the tool runs");
    release();
    const text = await (await answer).text();
    assert.match(text, /released/);
    await until(() => settled()[0] === true);
  });
});
