/**
 * What the two node stores (cancellation and tasks) set up alike from their options: the key
 * prefix, this node's id and lease, the command timeout, the test clock, the logger, the outage
 * monitor, the connection and the number of key-space shards. Each store reads its own options
 * (quotas, caps) before calling {@link openNodeStore}, so an invalid one throws before a connection
 * is made.
 */
import { Cluster } from "ioredis";

import { integerBetween, MAX_TIMER_MS, OPTION, readOption } from "../../option-schema.js";
import { readPrefix } from "../key-layout.js";
import { RedisConnection } from "./connection.js";
import { readNodeId } from "./node-id.js";
import { OutageMonitor, type OutagePart } from "./outage-monitor.js";

/** The options both node stores take, documented on each store's options type. */
export interface NodeStoreOptions {
  readonly redis: unknown;
  readonly prefix?: string;
  readonly shards?: number;
  readonly clock?: () => number;
  readonly leaseMs?: number;
  readonly nodeId?: string;
  readonly commandTimeoutMs?: number;
  readonly logger?: (message: string) => void;
}

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
 * const setup = openNodeStore(options, "tasks");
 * const keys = new KeyLayout(setup.prefix, setup.connection.keyPrefix, setup.shards);
 * ```
 */
export function openNodeStore(options: NodeStoreOptions, part: OutagePart): NodeStoreSetup {
  const prefix = readPrefix(options.prefix);
  const leaseMs = readOption(integerBetween(3, MAX_TIMER_MS), "leaseMs", options.leaseMs, 15_000);
  const timeoutMs = readOption(OPTION.timerMs, "commandTimeoutMs", options.commandTimeoutMs, 1_000);
  const clock = readOption(OPTION.clock, "clock", options.clock, null);
  readOption(OPTION.logger, "logger", options.logger, undefined);
  const nodeId = readNodeId(options.nodeId);
  const logger = options.logger ?? ((message: string) => console.warn(message));
  const monitor = new OutageMonitor(logger, part);
  const connection = new RedisConnection({ redis: options.redis, timeoutMs, monitor });
  const shards = readOption(
    integerBetween(1, 1_024),
    "shards",
    options.shards,
    connection.client instanceof Cluster ? 16 : 1,
  );
  return { prefix, nodeId, leaseMs, timeoutMs, clock, logger, monitor, connection, shards };
}
