/**
 * What the two node stores (cancellation and tasks) set up alike from their options, read from
 * their declared schemas (redis-option-declarations.ts): the outage monitor, the connection and
 * the number of key-space shards. Each store reads every option before calling
 * {@link openNodeStore}, so an invalid one throws before a connection is made.
 */
import { Cluster } from "ioredis";

import type { NodeStoreSettings } from "../redis-option-declarations.js";
import { RedisConnection } from "./connection.js";
import { OutageMonitor, type OutagePart } from "./outage-monitor.js";

/** The settings and connection of a node store, its options read and checked. */
export interface NodeStoreSetup {
  readonly prefix: string;
  readonly nodeId: string;
  /** This node's lease (ms), renewed every third of it. */
  readonly leaseMs: number;
  /** Upper bound on one Redis call (ms). */
  readonly timeoutMs: number;
  /** A test time source replacing Redis's `TIME`, or null (Redis's clock). */
  readonly clock: (() => number) | null;
  readonly logger: (message: string) => void;
  readonly monitor: OutageMonitor;
  /** Not yet connected: the store calls `connection.connect()` once it listens. */
  readonly connection: RedisConnection;
  /** Key-space shards: the option, else 16 on a `Cluster`, 1 on a single Redis. */
  readonly shards: number;
}

/**
 * Reads the common options of a node store and opens its connection.
 *
 * @example
 * ```ts
 * const setup = openNodeStore(readTaskStoreOptions(options), "tasks");
 * const keys = new KeyLayout(setup.prefix, setup.connection.keyPrefix, setup.shards);
 * ```
 */
export function openNodeStore(options: NodeStoreSettings, part: OutagePart): NodeStoreSetup {
  const { prefix, nodeId, leaseMs, logger } = options;
  const timeoutMs = options.commandTimeoutMs;
  const clock = options.clock ?? null;
  const monitor = new OutageMonitor(logger, part);
  const connection = new RedisConnection({ redis: options.redis, timeoutMs, monitor });
  const shards = options.shards ?? (connection.client instanceof Cluster ? 16 : 1);
  return { prefix, nodeId, leaseMs, timeoutMs, clock, logger, monitor, connection, shards };
}
