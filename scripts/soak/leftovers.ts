/**
 * What the chaos left in Redis: the soak's own private Redis is scanned (SCAN, never KEYS) and
 * every key of the cancellation and session stores is sorted by what it holds (key layout:
 * src/redis/key-layout.ts and src/redis/sessions/redis-session-store.ts). Rows and in-flight entries must
 * be gone once the load has ended and two leases plus the row TTL have passed; node records must
 * name live processes only.
 */
import { Redis } from "ioredis";

/** The CLI's key tag (the stores' default prefix; the CLI has no prefix flag). */
const TAG = "{conduit-mcp}:";

export interface Leftovers {
  /** Cancellation rows: `scopes`, `time`, `s:<scope>`, `r:<scope>` keys, and the rows in `time`. */
  readonly rowKeys: number;
  readonly rows: number;
  /** In-flight entries: `f:<pair>` hashes (each holds ≥ 1 entry) and `nf:<node>` hashes. */
  readonly inFlightKeys: number;
  readonly inFlightEntries: number;
  /** In-flight entries by the pid of the node holding them. */
  readonly entriesByPid: ReadonlyMap<number, number>;
  /** Node ids in `nodes`, and node ids holding a lease. */
  readonly nodes: readonly string[];
  readonly leases: readonly string[];
  readonly sessions: number;
  /** The ids of those sessions (the first 1 000). */
  readonly sessionIds: readonly string[];
  /** Keys of any other kind, by kind (`last`, `cx`, session bookkeeping…). */
  readonly other: Readonly<Record<string, number>>;
}

export async function scanLeftovers(url: string): Promise<Leftovers> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on("error", () => {});
  await redis.connect();
  try {
    const keys: string[] = [];
    let cursor = "0";
    for (let page = 0; page < 100_000; page++) {
      const [next, batch] = await redis.scan(cursor, "MATCH", `${TAG}*`, "COUNT", 1_000);
      keys.push(...batch);
      cursor = next;
      if (cursor === "0") break;
    }
    let rowKeys = 0;
    let rows = 0;
    let inFlightKeys = 0;
    let inFlightEntries = 0;
    const entriesByPid = new Map<number, number>();
    let sessions = 0;
    const sessionIds: string[] = [];
    const leases: string[] = [];
    let nodes: string[] = [];
    const other: Record<string, number> = {};
    for (const key of keys) {
      const rest = key.slice(TAG.length);
      const colon = rest.indexOf(":");
      const kind = colon === -1 ? rest : rest.slice(0, colon);
      const name = colon === -1 ? "" : rest.slice(colon + 1);
      switch (kind) {
        case "scopes":
        case "s":
        case "r":
          rowKeys++;
          break;
        case "time":
          rowKeys++;
          rows += await redis.zcard(key);
          break;
        case "f":
          inFlightKeys++;
          for (const node of await redis.hvals(key)) {
            inFlightEntries++;
            const pid = pidOfNodeId(node);
            entriesByPid.set(pid, (entriesByPid.get(pid) ?? 0) + 1);
          }
          break;
        case "nf":
          inFlightKeys++;
          break;
        case "nodes":
          nodes = await redis.smembers(key);
          break;
        case "lease":
          leases.push(name);
          break;
        case "sess":
          sessions++;
          if (sessionIds.length < 1_000) sessionIds.push(name);
          break;
        default:
          other[kind] = (other[kind] ?? 0) + 1;
      }
    }
    return {
      rowKeys,
      rows,
      inFlightKeys,
      inFlightEntries,
      entriesByPid,
      nodes,
      leases,
      sessions,
      sessionIds,
      other,
    };
  } finally {
    redis.disconnect();
  }
}

/** The pid inside a default node id (`<host>-<pid>-<random>`), or NaN. */
export function pidOfNodeId(nodeId: string): number {
  const match = /-(\d+)-[0-9a-f]{8}$/.exec(nodeId);
  return match === null ? Number.NaN : Number(match[1]);
}
