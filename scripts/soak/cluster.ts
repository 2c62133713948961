/**
 * The chaos soak's cluster: one private `redis-server` and N `conduit-mcp serve --redis` nodes,
 * each a real child process running the CLI (so SIGKILL is a real, unannounced death), serving
 * chaos-tools.ts. A killed node is restarted on the same port, as a process manager would, so a
 * client that keeps using its address sees refused connections until it listens again.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { type RedisServer, startRedisServer } from "../../test/helpers/redis-server.js";
import { stablePort } from "./ports.js";
import type { Timeline } from "./timeline.js";

const CLI = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const TOOLS = fileURLToPath(new URL("./chaos-tools.ts", import.meta.url));
/** A node that has not printed its listening line by then failed to start. */
const START_TIMEOUT_MS = 30_000;
/** Stderr lines kept per node (for the summary). */
const MAX_STDERR_LINES = 200;

/** Settings of the nodes. */
export interface ClusterOptions {
  readonly nodes: number;
  readonly leaseMs: number;
  readonly rowTtlMs: number;
  /** Secret → principal id, passed as `--token ID=SECRET`. */
  readonly tokens: Readonly<Record<string, string>>;
}

/** One node slot: the process currently in it (if any) and its history. */
export interface NodeSlot {
  readonly index: number;
  port: number;
  url: string;
  child: ChildProcess | null;
  /** Listening and not being killed: the driver routes calls to it. */
  alive: boolean;
  /** Processes started in this slot so far. */
  generation: number;
  /** pid of every process that ran in this slot (the Redis node ids carry it). */
  readonly pids: number[];
  /** Stderr lines of every generation (bounded). */
  readonly stderr: string[];
  /** Exits nobody asked for (a crash, or a non-zero graceful exit). */
  readonly unexpectedExits: string[];
}

export class ChaosCluster {
  readonly slots: NodeSlot[] = [];
  redis!: RedisServer;
  private readonly options: ClusterOptions;
  readonly timeline: Timeline;
  /** Processes this cluster killed or stopped on purpose. */
  private readonly intended = new Set<ChildProcess>();
  /**
   * The `--secret-file` every node shares (docs/asking-the-client.md: several nodes need the same
   * keys), so a 2026-07-28 retry may carry its requestState to any node.
   */
  private readonly secretDir = mkdtempSync(join(tmpdir(), "conduit-chaos-"));
  private readonly secretFile = join(this.secretDir, "secrets");

  constructor(options: ClusterOptions, timeline: Timeline) {
    this.options = options;
    this.timeline = timeline;
  }

  async start(): Promise<void> {
    writeFileSync(this.secretFile, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    this.redis = await startRedisServer({ port: await stablePort() });
    for (let i = 0; i < this.options.nodes; i++) {
      this.slots.push({
        index: i,
        port: await stablePort(),
        url: "",
        child: null,
        alive: false,
        generation: 0,
        pids: [],
        stderr: [],
        unexpectedExits: [],
      });
    }
    await Promise.all(this.slots.map((slot) => this.launch(slot)));
  }

  /** The nodes currently listening. */
  aliveIndexes(): number[] {
    return this.slots.filter((s) => s.alive).map((s) => s.index);
  }

  /** SIGKILL: no close, no lease retirement, sockets reset by the kernel. Resolves on exit. */
  async kill(index: number): Promise<void> {
    const slot = this.slots[index] as NodeSlot;
    const child = slot.child;
    if (child === null || !slot.alive) return;
    slot.alive = false;
    this.intended.add(child);
    const exited = exitOf(child);
    child.kill("SIGKILL");
    await exited;
    slot.child = null;
  }

  /** Starts a new process in a slot (same port after the first start). */
  async restart(index: number): Promise<void> {
    await this.launch(this.slots[index] as NodeSlot);
  }

  /** Kills a node, waits `downMs`, restarts it; the whole window is a disturbance. */
  async killAndRestart(index: number, downMs: number): Promise<void> {
    const event = this.timeline.open("node-kill", index);
    try {
      await this.kill(index);
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await this.restart(index);
    } finally {
      this.timeline.close(event);
    }
  }

  /** Stops Redis (SIGTERM; persistence is off, so it comes back empty), waits, starts it again. */
  async restartRedis(downMs: number): Promise<void> {
    const event = this.timeline.open("redis-restart");
    try {
      await this.redis.pause();
      event.down = performance.now();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      for (let attempt = 1; ; attempt++) {
        try {
          await this.redis.start();
          break;
        } catch (error) {
          if (attempt >= 3) throw error;
        }
      }
    } finally {
      this.timeline.close(event);
    }
  }

  /** SIGSTOP for `ms`: Redis keeps its sockets but answers nothing (a hung Redis). */
  async freezeRedis(ms: number): Promise<void> {
    const event = this.timeline.open("redis-freeze");
    this.redis.freeze();
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.redis.thaw();
    this.timeline.close(event);
  }

  /**
   * SIGTERM every node (graceful close: in-flight calls end, the lease and entries are retired)
   * and waits; resolves the exits that were not a clean 0.
   */
  async stopNodes(timeoutMs: number): Promise<string[]> {
    const problems: string[] = [];
    await Promise.all(
      this.slots.map(async (slot) => {
        const child = slot.child;
        if (child === null) return;
        slot.alive = false;
        this.intended.add(child);
        const exited = exitOf(child);
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        const exit = await exited;
        clearTimeout(timer);
        slot.child = null;
        if (exit.code !== 0) {
          problems.push(
            `node ${slot.index} (pid ${child.pid}) SIGTERM exit ${JSON.stringify(exit)}`,
          );
        }
      }),
    );
    return problems;
  }

  /** Kills whatever is left (nodes and Redis). Idempotent; for `finally`. */
  async destroy(): Promise<void> {
    for (const slot of this.slots) {
      if (slot.child !== null) {
        this.intended.add(slot.child);
        const exited = exitOf(slot.child);
        slot.child.kill("SIGKILL");
        await exited;
        slot.child = null;
      }
      slot.alive = false;
    }
    await this.redis?.stop();
    rmSync(this.secretDir, { recursive: true, force: true });
  }

  private async launch(slot: NodeSlot): Promise<void> {
    const tokens = Object.entries(this.options.tokens).flatMap(([secret, id]) => [
      "--token",
      `${id}=${secret}`,
    ]);
    const args = [
      "--expose-gc",
      "--import",
      "tsx",
      CLI,
      "serve",
      TOOLS,
      "--port",
      String(slot.port),
      "--redis",
      this.redis.url,
      "--redis-lease-ms",
      String(this.options.leaseMs),
      "--row-ttl-ms",
      String(this.options.rowTtlMs),
      "--sessions",
      "--secret-file",
      this.secretFile,
      // The soak's tenants are well-behaved: the per-scope bounds (another test's subject) are
      // lifted so a refusal never hides a lost outcome.
      "--max-rows",
      "infinity",
      "--max-rows-per-scope",
      "infinity",
      "--max-requests-per-scope",
      "100000",
      "--max-requests",
      "100000",
      "--max-sessions-per-scope",
      "100000",
      "--stream-cancel-timeout",
      "1000",
      "--close-grace",
      "500",
      ...tokens,
    ];
    const failures: string[] = [];
    for (let tries = 1; ; tries++) {
      const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
      const reap = (): void => {
        child.kill("SIGKILL");
      };
      process.once("exit", reap);
      child.once("exit", (code, signal) => {
        process.off("exit", reap);
        if (!this.intended.has(child)) {
          slot.unexpectedExits.push(`pid ${child.pid} exited (code ${code}, signal ${signal})`);
          slot.alive = false;
        }
        this.intended.delete(child);
      });
      /** This attempt's own output, for the report when it fails to start. */
      const attempt: string[] = [];
      createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
        if (attempt.length < 20) attempt.push(line);
        if (slot.stderr.length < MAX_STDERR_LINES) slot.stderr.push(`[${child.pid}] ${line}`);
      });
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
      const url = await new Promise<string | null>((resolve) => {
        const timer = setTimeout(() => {
          attempt.push(`no listening line within ${START_TIMEOUT_MS} ms`);
          resolve(null);
        }, START_TIMEOUT_MS);
        lines.once("line", (line) => {
          clearTimeout(timer);
          const found = /^conduit-mcp listening on (\S+)$/.exec(line)?.[1] ?? null;
          if (found === null) attempt.push(`first stdout line: ${line}`);
          resolve(found);
        });
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          attempt.push(`exited (code ${code}, signal ${signal})`);
          resolve(null);
        });
      });
      if (url !== null) {
        slot.child = child;
        slot.url = url;
        slot.port = Number(new URL(url).port);
        slot.pids.push(child.pid as number);
        slot.generation++;
        slot.alive = true;
        return;
      }
      this.intended.add(child);
      child.kill("SIGKILL");
      await exitOf(child);
      // The old process's port may linger for a moment after a SIGKILL: retry a few times.
      failures.push(`attempt ${tries} (pid ${child.pid}): ${attempt.slice(-4).join(" | ")}`);
      if (tries >= 5) {
        throw new Error(
          `node ${slot.index} did not start on port ${slot.port}: ${failures.join("; ")}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200 * tries));
    }
  }
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}
