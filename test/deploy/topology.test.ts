/**
 * The compose topology of deploy/ without Docker: three `conduit-mcp serve --redis` processes on
 * one real redis-server, behind HAProxy running deploy/haproxy/haproxy.cfg with the addresses
 * swapped for local ports (round-robin, health checks on /ready). Through it: a tour by the
 * official 1.x client (2025-11-25, a session in Redis) and 2.x client (2026-07-28), a cursor made
 * on one node paging on another, a node SIGKILLed, and a rolling restart (SIGTERM, drain, start
 * again, one node at a time) while both clients keep calling. docs/deploy.md says which calls
 * must succeed: every call not in flight on a SIGKILLed node. Here that is all of them but the
 * ones the kill cut.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { parseCli } from "../../src/cli/args.js";
import { type CliProcess, startCli } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";

const haproxyMissing = spawnSync("haproxy", ["-v"]).error
  ? "haproxy not installed (Debian package haproxy, .ci/apt.d/haproxy.txt)"
  : undefined;
if (haproxyMissing !== undefined && process.env.CI === "true") {
  throw new Error(`${haproxyMissing} (CI=true: not skipping)`);
}
if (haproxyMissing !== undefined) console.log(`skipping the topology test: ${haproxyMissing}`);
const skip = redisSkipReason() ?? haproxyMissing;

const MODULE = "test/deploy/fixtures/topology-server.ts";
const DRAIN_MS = 3_000;
/** Longer than HAProxy's check interval (1 s) with `fall 1`, as deploy/compose.yaml's 2 s. */
const DRAIN_DELAY_MS = 2_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** deploy/haproxy/haproxy.cfg with the frontend and the three nodes on local ports. */
function localConfig(lbPort: number, nodePorts: readonly number[], socket: string): string {
  const cfg = readFileSync(new URL("../../deploy/haproxy/haproxy.cfg", import.meta.url), "utf8");
  let index = 0;
  const local = cfg
    .replace(/^(\s*)bind :8080$/m, `$1bind 127.0.0.1:${lbPort}`)
    .replace(/^(\s*server node\d) node\d:3000$/gm, (_line, head: string) => {
      const port = nodePorts[index++];
      return `${head} 127.0.0.1:${port}`;
    })
    // No Docker DNS here: the servers are addresses.
    .replace(/ resolvers docker$/m, "")
    .replace(/^global$/m, `global\n  stats socket ${socket} level user`);
  assert.equal(index, 3, "the config names three nodes");
  return local;
}

/** One command on HAProxy's runtime API socket. */
function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = net.connect(socket);
    let out = "";
    client.on("data", (chunk) => {
      out += chunk.toString("utf8");
    });
    client.on("end", () => resolve(out));
    client.on("error", reject);
    client.write(`${command}\n`);
  });
}

/** HAProxy's view of each node: UP, DOWN, ... */
async function serverStates(socket: string): Promise<Record<string, string>> {
  const csv = await haproxyCommand(socket, "show stat");
  const [header, ...rows] = csv.trim().split("\n");
  const columns = (header ?? "").replace(/^# /, "").split(",");
  const name = columns.indexOf("svname");
  const status = columns.indexOf("status");
  const states: Record<string, string> = {};
  for (const row of rows) {
    const cells = row.split(",");
    const server = cells[name] ?? "";
    if (/^node\d$/.test(server)) states[server] = cells[status] ?? "";
  }
  return states;
}

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content;
  return content?.[0]?.text ?? "";
}

describe("the deploy/ topology without Docker", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let haproxy: ChildProcess | undefined;
  let haproxyLog = "";
  let stopping = false;
  const nodes: Array<CliProcess | undefined> = [undefined, undefined, undefined];
  let ports: number[] = [];
  let lbUrl: URL;
  let socket = "";
  let dir = "";
  let keyFile = "";
  /** `--secret-file FILE` when the CLI has it (one list-cursor secret for every node), else none. */
  let sharedSecret: string[] = [];

  const startNode = async (i: number): Promise<CliProcess> => {
    const node = await startCli([
      "serve",
      MODULE,
      "--port",
      String(ports[i]),
      "--sessions",
      "--redis",
      redis.url,
      "--drain-ms",
      String(DRAIN_MS),
      // As deploy/compose.yaml: HAProxy's /ready check takes the node out before it closes.
      "--drain-delay-ms",
      String(DRAIN_DELAY_MS),
      "--state-key-file",
      keyFile,
      ...sharedSecret,
    ]);
    nodes[i] = node;
    return node;
  };
  const allUp = async (): Promise<boolean> => {
    const states = await serverStates(socket);
    return ["node1", "node2", "node3"].every((name) => states[name] === "UP");
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "conduit-topology-"));
    keyFile = join(dir, "state-keys");
    writeFileSync(keyFile, `${randomBytes(48).toString("base64")}\n`);
    if (parseCli(["serve", "--secret-file", keyFile]).ok) sharedSecret = ["--secret-file", keyFile];
    socket = join(dir, "haproxy.sock");
    redis = await startRedisServer();
    ports = [await freePort(), await freePort(), await freePort()];
    const lbPort = await freePort();
    await Promise.all([0, 1, 2].map((i) => startNode(i)));
    const cfgPath = join(dir, "haproxy.cfg");
    writeFileSync(cfgPath, localConfig(lbPort, ports, socket));
    haproxy = spawn("haproxy", ["-db", "-f", cfgPath], { stdio: ["ignore", "pipe", "pipe"] });
    haproxy.stdout?.on("data", (chunk: Buffer) => {
      haproxyLog = (haproxyLog + chunk.toString("utf8")).slice(-20_000);
    });
    haproxy.stderr?.on("data", (chunk: Buffer) => {
      haproxyLog = (haproxyLog + chunk.toString("utf8")).slice(-20_000);
    });
    haproxy.once("exit", (code) => {
      if (!stopping) console.log(`haproxy exited (${code}): ${haproxyLog.slice(-2_000)}`);
    });
    lbUrl = new URL(`http://127.0.0.1:${lbPort}/mcp`);
    await until("HAProxy sees three nodes UP", 30_000, () => allUp().catch(() => false));
  });

  after(async () => {
    stopping = true;
    if (haproxy && haproxy.exitCode === null) {
      const exited = new Promise((resolve) => haproxy?.once("exit", resolve));
      haproxy.kill("SIGKILL");
      await exited;
    }
    await Promise.all(nodes.map((node) => node?.kill()));
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function legacyClient(): Promise<LegacyClient> {
    const client = new LegacyClient({ name: "topology-1x", version: "1.0.0" });
    await client.connect(new LegacyTransport(lbUrl));
    return client;
  }

  async function modernClient(): Promise<ModernClient> {
    const client = new ModernClient(
      { name: "topology-2x", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(lbUrl));
    return client;
  }

  it("tours with the 1.x and 2.x clients through three round-robin nodes", async () => {
    const legacy = await legacyClient();
    const modern = await modernClient();
    try {
      // Each request lands on the next node; the 1.x session lives in Redis.
      for (let i = 0; i < 6; i++) {
        const echoed = await legacy.callTool({ name: "echo", arguments: { text: `hi ${i}` } });
        assert.equal(text(echoed), `hi ${i}`);
        const modernEcho = await modern.callTool({ name: "echo", arguments: { text: `yo ${i}` } });
        assert.equal(text(modernEcho), `yo ${i}`);
      }
      const progress: number[] = [];
      const counted = await legacy.callTool(
        { name: "count", arguments: { to: 3, intervalMs: 20 } },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.equal(text(counted), "counted to 3");
      assert.deepEqual(progress, [1, 2, 3]);
      // A cancel lands on another node than the call it cancels (round-robin) and still stops it.
      const controller = new AbortController();
      const started = performance.now();
      const sleeping = legacy.callTool({ name: "sleep", arguments: { ms: 20_000 } }, undefined, {
        signal: controller.signal,
      });
      await sleep(300);
      controller.abort("tour cancel");
      await assert.rejects(sleeping);
      assert.ok(performance.now() - started < 5_000);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it("pages a list with a cursor made on another node", async (t) => {
    if (sharedSecret.length === 0) {
      const reason = "the CLI has no --secret-file yet: nodes cannot share the list-cursor secret";
      console.log(`skipping the cross-node cursor check: ${reason}`);
      t.skip(reason);
      return;
    }
    const legacy = await legacyClient();
    const modern = await modernClient();
    try {
      // One tool a page, round-robin: each cursor is presented to another node than its maker.
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await legacy.listTools(cursor === undefined ? {} : { cursor });
        names.push(...page.tools.map((tool) => tool.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined && names.length < 100);
      assert.ok(names.length > 3, `${names.length} tools`);
      assert.equal(new Set(names).size, names.length);
      // The 2.x client follows the cursors itself.
      const { tools } = await modern.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), [...names].sort());
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it("a node SIGKILLed and a rolling restart: every call the docs promise succeeds", async () => {
    const legacy = await legacyClient();
    const modern = await modernClient();
    const failures: string[] = [];
    let calls = 0;
    let cutByKill = 0;
    // The SIGKILL's window: from the signal until its in-flight calls have settled.
    let killedAt = Number.POSITIVE_INFINITY;
    let settledAt = Number.POSITIVE_INFINITY;
    let stop = false;
    const loop = async (name: string, once: (i: number) => Promise<void>): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const startedAt = performance.now();
        try {
          await once(i);
          calls++;
        } catch (error) {
          // A call in flight on the node the kill took may fail; none other may.
          // (Judged when it fails: a call sent just before the kill may be on that node.)
          if (startedAt <= settledAt && performance.now() >= killedAt) cutByKill++;
          else failures.push(`${name} #${i}: ${error instanceof Error ? error.message : error}`);
        }
      }
    };
    const loops = [
      loop("1.x echo", async (i) => {
        const result = await legacy.callTool({ name: "echo", arguments: { text: `a${i}` } });
        assert.equal(text(result), `a${i}`);
      }),
      loop("2.x echo", async (i) => {
        const result = await modern.callTool({ name: "echo", arguments: { text: `b${i}` } });
        assert.equal(text(result), `b${i}`);
      }),
      // Calls that are in flight when a node is told to drain: answered within --drain-ms.
      loop("1.x sleep", async () => {
        const result = await legacy.callTool({ name: "sleep", arguments: { ms: 400 } });
        assert.equal(text(result), "slept 400 ms");
      }),
    ];

    // SIGKILL node 2: HAProxy retries refused connections elsewhere and takes it out of rotation.
    killedAt = performance.now();
    await nodes[1]?.kill();
    await until("HAProxy sees node2 DOWN", 10_000, async () => {
      return (await serverStates(socket)).node2 !== "UP";
    });
    await sleep(200); // let the calls that were in flight on it settle as "cut by the kill"
    settledAt = performance.now();
    const afterKill = calls;
    await until("calls keep succeeding on two nodes", 10_000, async () => calls > afterKill + 20);
    await startNode(1);
    await until("HAProxy sees three nodes UP again", 30_000, allUp);

    // Rolling restart: one node at a time, SIGTERM (drain), wait for exit 0, start, wait for UP.
    for (const i of [0, 1, 2]) {
      const node = nodes[i] as CliProcess;
      const before = calls;
      node.child.kill("SIGTERM");
      const exit = await node.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, node.stderr());
      await startNode(i);
      await until(`HAProxy sees node${i + 1} UP`, 30_000, allUp);
      assert.ok(calls > before, "calls went on during the restart");
    }
    stop = true;
    await Promise.all(loops);
    await legacy.close();
    await modern.close();
    console.log(
      `topology: ${calls} calls succeeded, ${cutByKill} cut by the SIGKILL, ${failures.length} failed otherwise`,
    );
    assert.deepEqual(failures, [], haproxyLog.slice(-4_000));
  });
});
