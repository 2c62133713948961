/**
 * Where the Redis store keeps what. Every key starts with one hash-tagged base, `{<prefix>}`, so
 * all keys of one store hash to a single Redis Cluster slot and one Lua script may touch any of
 * them (issue 5: "every key under a configurable prefix with one hash tag").
 *
 * | key | type | holds |
 * | --- | --- | --- |
 * | `{p}:scopes` | ZSET | scope → its row count (eviction walks it largest first) |
 * | `{p}:s:<scope>` | ZSET | request id → cancelledAt (equal scores order by id, bytewise) |
 * | `{p}:r:<scope>` | HASH | request id → reason (`n` = null, `s<text>`) |
 * | `{p}:last` | STRING | the latest stamp (stamps never decrease, as in the memory store) |
 * | `{p}:time` | ZSET | `<len(scope)>:<scope><id>` → cancelledAt (TTL cleanup, total size) |
 * | `{p}:f:<len(scope)>:<scope><id>` | HASH | handle id → node id (in-flight entries of one key) |
 * | `{p}:nf:<node>` | HASH | handle id → pair member (one node's entries, for the lease sweep) |
 * | `{p}:nodes` | SET | nodes that may hold entries |
 * | `{p}:lease:<node>` | STRING | present while the node is alive (PX lease) |
 * | `{p}:cancelled` | channel | cross-node cancellation events |
 *
 * @example
 * ```ts
 * const keys = new KeyLayout("conduit-mcp", "");
 * keys.scopeRows("principal:alice"); // "{conduit-mcp}:s:principal:alice"
 * ```
 */
export class KeyLayout {
  /** `{prefix}`: the hash tag every key starts with (as passed to ioredis, before its keyPrefix). */
  readonly tag: string;
  /** The base as Redis sees it (the client's `keyPrefix` + tag), for keys built inside Lua. */
  readonly luaBase: string;
  /** The pub/sub channel (channels are not key-prefixed by ioredis, so it carries both parts). */
  readonly channel: string;
  readonly scopes: string;
  readonly time: string;
  readonly nodes: string;

  constructor(prefix: string, clientKeyPrefix: string) {
    this.tag = `{${prefix}}`;
    this.luaBase = `${clientKeyPrefix}${this.tag}`;
    this.channel = `${this.luaBase}:cancelled`;
    this.scopes = `${this.tag}:scopes`;
    this.time = `${this.tag}:time`;
    this.nodes = `${this.tag}:nodes`;
  }

  /** The ZSET of one scope's rows. */
  scopeRows(scope: string): string {
    return `${this.tag}:s:${scope}`;
  }

  /** The HASH of one scope's reasons. */
  scopeReasons(scope: string): string {
    return `${this.tag}:r:${scope}`;
  }

  /** The HASH of one key's in-flight entries. */
  inFlight(scope: string, requestId: string): string {
    return `${this.tag}:f:${pairMember(scope, requestId)}`;
  }

  /** The HASH of one node's in-flight entries. */
  nodeEntries(node: string): string {
    return `${this.tag}:nf:${node}`;
  }

  /** The lease key of one node. */
  lease(node: string): string {
    return `${this.tag}:lease:${node}`;
  }
}

/**
 * Encodes a `(scope, id)` pair as one string, unambiguously: the scope's UTF-8 byte length, a
 * colon, the scope, the id (the Lua side splits it the same way, by bytes).
 *
 * @example
 * ```ts
 * pairMember("s", "1"); // "1:s1"
 * ```
 */
export function pairMember(scope: string, requestId: string): string {
  return `${Buffer.byteLength(scope, "utf8")}:${scope}${requestId}`;
}
