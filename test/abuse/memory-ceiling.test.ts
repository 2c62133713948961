/**
 * The memory ceiling of docs/tenancy.md, measured: a real node (a child process running
 * createMcpServer with every default bound) is pushed by one address, then by 25 (127.0.0.x),
 * until every table that keeps bytes for a client holds its bound — sessions (64 per address),
 * resource subscriptions (1 MiB of 8 000-byte URIs), finished task results (8 MiB of 1 MB
 * results), questions waiting for the client (1 MiB of 60 KB questions, held open) and
 * `subscriptions/listen` filters (256 KiB) — and the per-address bounds are seen refusing. The
 * node's peak RSS stays under the documented ceiling, and a fresh address's `tools/call` is still
 * answered. Linux only (it reads /proc/<pid>/status).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Agent, type ClientRequest, request } from "node:http";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

/** The ceiling docs/tenancy.md states for one node with the default bounds. */
const CEILING_MIB = 768;
const V2025 = "2025-11-25";
const V2026 = "2026-07-28";
const linux = process.platform === "linux";
if (!linux) console.log("# skipping the memory ceiling test: it reads /proc/<pid>/status (Linux)");

interface Answer {
  status: number;
  text: string;
  headers: Record<string, unknown>;
}

function post(
  url: string,
  agent: Agent,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * A request held open until `ready` matches what arrived (or the response ended): resolves
 * whether it is still open, and the request (to hang up later).
 */
function hold(
  url: string,
  options: { from: string; body: unknown; headers: Record<string, string>; ready: RegExp },
): Promise<{ open: boolean; text: string; req: ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent: false,
      localAddress: options.from,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...options.headers,
      },
    });
    let text = "";
    let done = false;
    req.on("response", (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        if (!done && options.ready.test(text)) {
          done = true;
          resolve({ open: true, text, req });
        }
      });
      res.on("end", () => {
        if (!done) {
          done = true;
          resolve({ open: false, text, req });
        }
      });
      res.on("error", () => {});
    });
    req.on("error", (error) => {
      if (!done) reject(error);
    });
    req.end(JSON.stringify(options.body));
  });
}

function rpc(id: number, method: string, params: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, params };
}

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}

/** Everything one address does to fill its share of every table; returns what it saw refused. */
async function fill(url: string, from: string, held: ClientRequest[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: 8, localAddress: from });
  const refused = { sessions: 0, subscriptions: 0, tasks: 0, asks: 0, listeners: 0 };
  try {
    // Sessions: 64 per address, then 429.
    const sessions: string[] = [];
    for (let i = 0; i < 66; i++) {
      const answer = await post(
        url,
        agent,
        rpc(0, "initialize", {
          protocolVersion: V2025,
          capabilities: { elicitation: {} },
          clientInfo: { name: "ceiling", version: "1" },
        }),
      );
      const id = answer.headers["mcp-session-id"];
      if (typeof id === "string") sessions.push(id);
      else refused.sessions++;
    }
    assert.equal(sessions.length, 64, `${from}: sessions`);
    const inSession = (session: string) => ({
      "mcp-session-id": session,
      "mcp-protocol-version": V2025,
    });
    // Subscriptions: 8 000-byte URIs until the bucket's 1 MiB is spent (≈ 131), across sessions.
    const subscribes = [];
    for (let i = 0; i < 140; i++) {
      const session = sessions[Math.floor(i / 60)] as string;
      const uri = `test://${from}/${i}/${"s".repeat(7_970)}`;
      subscribes.push(post(url, agent, rpc(i, "resources/subscribe", { uri }), inSession(session)));
    }
    for (const answer of await Promise.all(subscribes)) {
      if (/"error"/.test(answer.text)) refused.subscriptions++;
    }
    // Task results: 10 results of 1 MB; the bucket's 8 MiB keeps the newest.
    const tasks = [];
    for (let i = 0; i < 10; i++) {
      tasks.push(
        post(
          url,
          agent,
          rpc(i, "tools/call", { name: "big", arguments: { bytes: 1_000_000 }, task: {} }),
          inSession(sessions[10 + i] as string),
        ),
      );
    }
    for (const answer of await Promise.all(tasks)) {
      assert.match(answer.text, /"taskId"/, `${from}: task creation`);
    }
    // Questions: 60 KB each, held open over two sessions, until the bucket's 1 MiB is spent.
    const asks = [];
    for (let i = 0; i < 20; i++) {
      asks.push(
        hold(url, {
          from,
          body: rpc(i, "tools/call", { name: "ask", arguments: { bytes: 60_000 } }),
          headers: inSession(sessions[20 + (i % 2)] as string),
          ready: /elicitation\/create/,
        }),
      );
    }
    for (const asked of await Promise.all(asks)) {
      if (asked.open) held.push(asked.req);
      else refused.asks++;
    }
    // Listen filters: 64 URIs of 500 bytes each (≈ 33 KB a listener) until 256 KiB is spent.
    for (let i = 0; i < 9; i++) {
      const uris = Array.from(
        { length: 64 },
        (_, n) => `test://${from}/l${i}/${n}/${"l".repeat(470)}`,
      );
      const listen = await hold(url, {
        from,
        body: rpc(i, "subscriptions/listen", {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientInfo": { name: "ceiling", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
          },
          notifications: { resourceSubscriptions: uris },
        }),
        headers: { "mcp-protocol-version": V2026, "mcp-method": "subscriptions/listen" },
        ready: /notifications\/subscriptions\/acknowledged/,
      });
      if (listen.open) held.push(listen.req);
      else refused.listeners++;
    }
  } finally {
    agent.destroy();
  }
  return refused;
}

async function freshCall(url: string, from: string): Promise<Answer> {
  const agent = new Agent({ keepAlive: false, localAddress: from });
  try {
    return await post(
      url,
      agent,
      rpc(1, "tools/call", {
        name: "echo",
        arguments: { text: "still served" },
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V2026,
          "io.modelcontextprotocol/clientInfo": { name: "fresh", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      }),
      { "mcp-protocol-version": V2026, "mcp-method": "tools/call", "mcp-name": "echo" },
    );
  } finally {
    agent.destroy();
  }
}

describe("memory ceiling", { skip: linux ? false : "Linux only", timeout: 420_000 }, () => {
  let child: ChildProcess;
  let url: string;
  const held: ClientRequest[] = [];

  before(async () => {
    const fixture = fileURLToPath(new URL("./fixtures/ceiling-server.ts", import.meta.url));
    child = spawn(process.execPath, ["--import", "tsx", fixture], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout?.setEncoding("utf8");
      child.stdout?.on("data", (chunk: string) => {
        out += chunk;
        const line = out.split("\n")[0] as string;
        if (out.includes("\n")) resolve((JSON.parse(line) as { url: string }).url);
      });
      child.on("exit", (code) => reject(new Error(`ceiling server exited ${code}`)));
    });
  });
  after(() => {
    for (const req of held) req.destroy();
    child?.kill("SIGKILL");
  });

  test("one address at every bound: refused at its own bounds, RSS under the ceiling", async () => {
    const started = Date.now();
    const refused = await fill(url, "127.0.0.2", held);
    const memory = memoryOf(child.pid as number);
    console.log(
      `one address: ${((Date.now() - started) / 1000).toFixed(1)} s, RSS ${memory.rss.toFixed(0)} MiB, peak ${memory.peak.toFixed(0)} MiB, refused ${JSON.stringify(refused)}`,
    );
    assert.equal(refused.sessions, 2);
    assert.ok(refused.subscriptions >= 5, `subscriptions refused: ${refused.subscriptions}`);
    assert.ok(refused.asks >= 2, `asks refused: ${refused.asks}`);
    assert.ok(refused.listeners >= 1, `listeners refused: ${refused.listeners}`);
    assert.ok(memory.peak < CEILING_MIB, `peak RSS ${memory.peak} MiB`);
    const fresh = await freshCall(url, "127.0.0.250");
    assert.match(fresh.text, /still served/);
  });

  test("25 addresses at every bound: the global bounds evict, RSS under the ceiling, others served", async () => {
    const started = Date.now();
    const froms = Array.from({ length: 25 }, (_, i) => `127.0.0.${10 + i}`);
    // Five at a time: a loaded 2-core machine, bounded time.
    for (let at = 0; at < froms.length; at += 5) {
      await Promise.all(froms.slice(at, at + 5).map((from) => fill(url, from, held)));
    }
    const memory = memoryOf(child.pid as number);
    console.log(
      `25 addresses: ${((Date.now() - started) / 1000).toFixed(1)} s, RSS ${memory.rss.toFixed(0)} MiB, peak ${memory.peak.toFixed(0)} MiB, ${held.length} asks and listeners held open`,
    );
    assert.ok(memory.peak < CEILING_MIB, `peak RSS ${memory.peak} MiB`);
    for (const from of ["127.0.0.251", "127.0.0.2", "127.0.0.12"]) {
      const fresh = await freshCall(url, from);
      assert.match(fresh.text, /still served/, `${from}: ${fresh.status} ${fresh.text}`);
    }
  });
});
