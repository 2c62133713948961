/**
 * The `ip:` scope is cached per connection (address parsing once per keep-alive socket), but never
 * where a trusted proxy's X-Forwarded-For can change it from one request to the next.
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { test } from "node:test";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer } from "../../src/server/index.js";

const whoami = defineTool({
  name: "whoami",
  description: "Returns the caller's scope",
  handler: (_args, ctx) => ctx.scope,
});

/** Calls `whoami` over the one socket of `agent`; resolves the scope and the local port used. */
function scopeOver(agent: Agent, url: string, forwardedFor?: string): Promise<[string, number]> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "whoami", arguments: {} },
  });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
  };
  if (forwardedFor !== undefined) headers["x-forwarded-for"] = forwardedFor;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const answer = JSON.parse(text) as { result: { content: Array<{ text: string }> } };
        resolve([answer.result.content[0]?.text ?? "", req.socket?.localPort ?? -1]);
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("behind a trusted proxy, each request's X-Forwarded-For counts, even on one keep-alive socket", async () => {
  const server = createMcpServer({ tools: [whoami], trustProxy: "loopback" });
  const { url } = await server.listen();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const [first, port] = await scopeOver(agent, url);
    assert.equal(first, "ip:127.0.0.1");
    const [forwarded, samePort] = await scopeOver(agent, url, "203.0.113.9");
    assert.equal(samePort, port, "the same connection was reused");
    assert.equal(forwarded, "ip:203.0.113.9");
    assert.equal((await scopeOver(agent, url, "2001:db8:1:2::7"))[0], "ip:2001:db8:1:2::/64");
    assert.equal((await scopeOver(agent, url))[0], "ip:127.0.0.1");
  } finally {
    agent.destroy();
    await server.close();
  }
});

test("without trustProxy, a forged X-Forwarded-For never changes the connection's scope", async () => {
  const server = createMcpServer({ tools: [whoami] });
  const { url } = await server.listen();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    assert.equal((await scopeOver(agent, url, "203.0.113.9"))[0], "ip:127.0.0.1");
    assert.equal((await scopeOver(agent, url))[0], "ip:127.0.0.1");
    assert.equal((await scopeOver(agent, url, "198.51.100.1"))[0], "ip:127.0.0.1");
  } finally {
    agent.destroy();
    await server.close();
  }
});

test("the last peer address's scope is remembered, never handed to another address", async () => {
  // One socket per local address (127.0.0.2, 127.0.0.3 on Linux's loopback /8), alternating:
  // each request's scope is its own peer's, whichever address asked just before.
  const server = createMcpServer({ tools: [whoami], trustProxy: "loopback" });
  const { url } = await server.listen();
  const agents = ["127.0.0.2", "127.0.0.3"].map(
    (localAddress) => new Agent({ keepAlive: true, maxSockets: 1, localAddress }),
  );
  const [two, three] = agents as [Agent, Agent];
  try {
    for (let i = 0; i < 3; i++) {
      assert.equal((await scopeOver(two, url))[0], "ip:127.0.0.2");
      assert.equal((await scopeOver(three, url))[0], "ip:127.0.0.3");
      // A trusted proxy's header is still read after a remembered address.
      assert.equal((await scopeOver(three, url, "203.0.113.9"))[0], "ip:203.0.113.9");
      assert.equal((await scopeOver(three, url))[0], "ip:127.0.0.3");
    }
  } finally {
    for (const agent of agents) agent.destroy();
    await server.close();
  }
});
