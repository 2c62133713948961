/**
 * Test helper: a private Redis Cluster of 3 masters and 3 replicas (`redis-server
 * --cluster-enabled yes` on free ports, joined with `redis-cli --cluster create
 * --cluster-replicas 1`), persistence off, in a temp dir. Never touches 127.0.0.1:6379.
 *
 * @example
 * ```ts
 * const cluster = await startRedisCluster();
 * const client = new Cluster(cluster.nodes.map((port) => ({ host: "127.0.0.1", port })));
 * await cluster.stop();
 * ```
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A running private Redis Cluster. */
export interface RedisClusterHandle {
  /** Every node's port (masters and replicas, in start order). */
  readonly ports: readonly number[];
  /** `CLUSTER NODES` as seen from a node that answers. */
  clusterNodes(): Promise<ClusterNode[]>;
  /** Kills one node's process (SIGKILL). */
  kill(port: number): void;
  /** Runs `redis-cli -p <port> <args…>` and returns its output. */
  cli(port: number, ...args: string[]): string;
  /** Stops every node and removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** One line of `CLUSTER NODES`. */
export interface ClusterNode {
  readonly id: string;
  readonly port: number;
  readonly role: "master" | "replica";
  readonly failed: boolean;
  /** The master's id, for a replica. */
  readonly masterId: string | null;
  /** Slot ranges, for a master. */
  readonly slots: string[];
}

const SERVER = process.env.REDIS_SERVER_BIN ?? "redis-server";
const CLI = process.env.REDIS_CLI_BIN ?? "redis-cli";

/** Why a cluster cannot be started here (no redis-cli), or undefined. */
export function redisClusterSkipReason(): string | undefined {
  const probe = spawnSync(CLI, ["--version"], { encoding: "utf8", timeout: 5_000 });
  if (!probe.error && probe.status === 0) return undefined;
  const reason = `redis-cli not installed (\`${CLI} --version\` failed); install redis-tools or set REDIS_CLI_BIN`;
  if (process.env.CI === "true") throw new Error(`${reason} (CI=true: not skipping)`);
  console.log(`# skipping Redis Cluster tests: ${reason}`);
  return reason;
}

/** Free TCP ports p such that p + 10000 (the cluster bus) is free too. */
async function freeClusterPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freePort();
    if (port + 10_000 < 65_536 && (await isFree(port + 10_000))) return port;
  }
  throw new Error("no free port pair for a cluster node");
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** Starts 6 cluster-enabled servers and joins them (bounded: 30 s until the cluster is ok). */
export async function startRedisCluster(): Promise<RedisClusterHandle> {
  const dir = mkdtempSync(join(tmpdir(), "conduit-cluster-"));
  const ports: number[] = [];
  const children = new Map<number, ChildProcess>();
  const reap = () => {
    for (const child of children.values()) child.kill("SIGKILL");
  };
  process.once("exit", reap);
  const cli = (port: number, ...args: string[]): string => {
    const out = spawnSync(CLI, ["-h", "127.0.0.1", "-p", String(port), ...args], {
      encoding: "utf8",
      timeout: 20_000,
    });
    return `${out.stdout ?? ""}${out.stderr ?? ""}`;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(
      [...children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      ),
    );
    children.clear();
    process.off("exit", reap);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freeClusterPort();
      ports.push(port);
      const child = spawn(
        SERVER,
        [
          "--port",
          String(port),
          "--bind",
          "127.0.0.1",
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          join(dir, `nodes-${port}.conf`),
          "--cluster-node-timeout",
          "1000",
          "--save",
          "",
          "--appendonly",
          "no",
          "--dir",
          dir,
        ],
        { stdio: "ignore" },
      );
      children.set(port, child);
    }
    for (const port of ports) {
      const deadline = Date.now() + 10_000;
      while (!cli(port, "PING").includes("PONG")) {
        if (Date.now() > deadline) throw new Error(`cluster node ${port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const created = spawnSync(
      CLI,
      [
        "--cluster",
        "create",
        ...ports.map((port) => `127.0.0.1:${port}`),
        "--cluster-replicas",
        "1",
        "--cluster-yes",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    if (created.status !== 0) {
      throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = ports.every((port) => cli(port, "CLUSTER", "INFO").includes("cluster_state:ok"));
      if (ok) break;
      if (Date.now() > deadline) throw new Error("cluster did not reach cluster_state:ok in 30 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    ports,
    cli,
    kill(port: number) {
      children.get(port)?.kill("SIGKILL");
      children.delete(port);
    },
    async clusterNodes() {
      for (const port of ports) {
        if (!children.has(port)) continue;
        const text = cli(port, "CLUSTER", "NODES");
        if (!text.includes("myself")) continue;
        return text
          .trim()
          .split("\n")
          .map((line) => {
            const parts = line.split(" ");
            const flags = (parts[2] ?? "").split(",");
            return {
              id: parts[0] ?? "",
              port: Number((parts[1] ?? "").split(":")[1]?.split("@")[0]),
              role: flags.includes("master") ? ("master" as const) : ("replica" as const),
              failed: flags.includes("fail") || flags.includes("fail?"),
              masterId: parts[3] === "-" ? null : (parts[3] ?? null),
              slots: parts.slice(8),
            };
          });
      }
      throw new Error("no cluster node answers");
    },
    stop,
  };
}
