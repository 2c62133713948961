/**
 * Where the Redis cancellation store keeps what. The key space is split into `shards` parts, each
 * under its own hash tag; a scope always lives in one shard (chosen by a hash of the scope), so a
 * Lua script touches keys of one Redis Cluster slot only, and a multi-shard cluster shares the
 * load of many tenants. With one shard (the default on a single Redis) the tag is `{prefix}`;
 * with more, shard `k` is `{prefix/k}`.
 *
 * Keys of one shard (`{t}` its tag):
 *
 * | key | type | holds |
 * | --- | --- | --- |
 * | `{t}:scopes` | ZSET | scope → its row count (eviction walks it largest first) |
 * | `{t}:s:<scope>` | ZSET | request id → cancelledAt (equal scores order by id, bytewise) |
 * | `{t}:r:<scope>` | HASH | request id → reason (`n` = null, `s<text>`) |
 * | `{t}:last` | STRING | the latest stamp (stamps never decrease, as in the memory store) |
 * | `{t}:time` | ZSET | `<len(scope)>:<scope><id>` → cancelledAt (TTL cleanup, total size) |
 * | `{t}:f:<len(scope)>:<scope><id>` | HASH | handle id → node id (in-flight entries of one key) |
 * | `{t}:nf:<node>` | HASH | handle id → pair member (one node's entries, for the lease sweep) |
 * | `{t}:nodes` | SET | nodes that may hold entries in this shard |
 * | `{t}:lease:<node>` | STRING | present while the node is alive (PX lease) |
 * | `{t}:cx` | STREAM | the latest cross-node cancels (bounded), read after a resubscribe |
 *
 * Plus one pub/sub channel for the whole store, `<first tag>:cancelled` (classic pub/sub reaches
 * every node of a Redis Cluster).
 *
 * @example
 * ```ts
 * const keys = new KeyLayout("conduit-mcp", "");
 * keys.scopeRows("principal:alice"); // "{conduit-mcp}:s:principal:alice"
 * ```
 */
import { InvalidOptionError } from "../errors.js";
export class KeyLayout {
  /** Number of shards (1..1024). */
  readonly shards: number;
  /** The pub/sub channel (channels are not key-prefixed by ioredis, so it carries both parts). */
  readonly channel: string;
  /** Every shard, by index. */
  readonly all: readonly ShardKeys[];

  constructor(prefix: string, clientKeyPrefix: string, shards = 1) {
    this.shards = shards;
    const all: ShardKeys[] = [];
    for (let k = 0; k < shards; k++) {
      all.push(
        new ShardKeys(k, shards === 1 ? `{${prefix}}` : `{${prefix}/${k}}`, clientKeyPrefix),
      );
    }
    this.all = all;
    this.channel = `${clientKeyPrefix}{${prefix}}:cancelled`;
  }

  /** The shard a scope lives in: FNV-1a of its stored bytes, modulo the shard count. */
  shardOf(scope: Wire): ShardKeys {
    if (this.shards === 1) return this.all[0] as ShardKeys;
    return this.all[fnv1a(scope) % this.shards] as ShardKeys;
  }

  /** The ZSET of one scope's rows. */
  scopeRows(scope: Wire): Wire {
    return this.shardOf(scope).scopeRows(scope);
  }

  /** The HASH of one key's in-flight entries. */
  inFlight(scope: Wire, requestId: Wire): Wire {
    return this.shardOf(scope).inFlight(scope, requestId);
  }
}

/** The keys of one shard. */
export class ShardKeys {
  /** This shard's index. */
  readonly index: number;
  /** The hash tag every key of the shard starts with (as passed to ioredis, before its keyPrefix). */
  readonly tag: string;
  /** The base as Redis sees it (the client's `keyPrefix` + tag), for keys built inside Lua. */
  readonly luaBase: string;
  readonly scopes: string;
  readonly time: string;
  readonly nodes: string;
  readonly catchUp: string;
  /** The session store's ZSET of session ids (the cancellation store does not use it). */
  readonly sessions: string;

  constructor(index: number, tag: string, clientKeyPrefix: string) {
    this.index = index;
    this.tag = tag;
    this.luaBase = `${clientKeyPrefix}${tag}`;
    this.scopes = `${tag}:scopes`;
    this.time = `${tag}:time`;
    this.nodes = `${tag}:nodes`;
    this.catchUp = `${tag}:cx`;
    this.sessions = `${tag}:sessions`;
  }

  /** The ZSET of one scope's rows. */
  scopeRows(scope: Wire): Wire {
    return cat(`${this.tag}:s:`, scope);
  }

  /** The HASH of one scope's reasons. */
  scopeReasons(scope: Wire): Wire {
    return cat(`${this.tag}:r:`, scope);
  }

  /** The HASH of one key's in-flight entries. */
  inFlight(scope: Wire, requestId: Wire): Wire {
    return cat(`${this.tag}:f:`, pairMember(scope, requestId));
  }

  /** The HASH of one node's in-flight entries in this shard. */
  nodeEntries(node: string): string {
    return `${this.tag}:nf:${node}`;
  }

  /** The lease key of one node in this shard. */
  lease(node: string): string {
    return `${this.tag}:lease:${node}`;
  }
}

/** 32-bit FNV-1a over the UTF-8 (or WTF-8) bytes: cheap, stable across nodes and versions. */
function fnv1a(text: Wire): number {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let hash = 0x811c9dc5;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** A scope or id as sent to Redis: the string itself, or its WTF-8 bytes (see {@link wire}). */
export type Wire = string | Buffer;

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A scope or id in the form Redis stores. Well-formed text goes as it is (UTF-8). Text with a
 * lone surrogate would be turned into U+FFFD by UTF-8 encoding, so `"\uD800"` and `"\uFFFD"`
 * would become one key (and, for scopes, one tenant); it goes as WTF-8 bytes instead, which no
 * well-formed string produces and which keep code point order, the order eviction
 * ties use.
 *
 * @example
 * ```ts
 * wire("abc");    // "abc"
 * wire("\uD800"); // <Buffer ed a0 80>
 * ```
 */
export function wire(text: string): Wire {
  if (!LONE_SURROGATE.test(text)) return text;
  const bytes: number[] = [];
  for (const char of text) {
    const cp = char.codePointAt(0) ?? 0;
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else {
      bytes.push(
        0xf0 | (cp >> 18),
        0x80 | ((cp >> 12) & 63),
        0x80 | ((cp >> 6) & 63),
        0x80 | (cp & 63),
      );
    }
  }
  return Buffer.from(bytes);
}

/**
 * Joins a key head and scope or id parts, keeping bytes when a part is bytes.
 *
 * @example
 * ```ts
 * cat("{t}:ts:", wire("ip:1.2.3.4")); // "{t}:ts:ip:1.2.3.4"
 * ```
 */
export function cat(head: string, ...parts: Wire[]): Wire {
  if (parts.every((part) => typeof part === "string")) return head + parts.join("");
  return Buffer.concat([
    Buffer.from(head),
    ...parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)),
  ]);
}

/**
 * Encodes a `(scope, id)` pair as one string, unambiguously: the scope's byte length, a colon,
 * the scope, the id (the Lua side splits it the same way, by bytes).
 *
 * @example
 * ```ts
 * pairMember("s", "1"); // "1:s1"
 * ```
 */
export function pairMember(scope: Wire, requestId: Wire): Wire {
  const length = typeof scope === "string" ? Buffer.byteLength(scope, "utf8") : scope.length;
  return cat(`${length}:`, scope, requestId);
}

/** Characters a key prefix may not hold: braces would move keys out of their Cluster hash tag. */
const PREFIX = /^[^{}]{1,128}$/;

/**
 * A Redis store's `prefix` option: default `conduit-mcp`, else 1 to 128 characters without `{` or
 * `}` (every store builds its hash tags around it), or {@link InvalidOptionError} naming `name`.
 *
 * @example
 * ```ts
 * readPrefix(undefined); // "conduit-mcp"
 * ```
 */
export function readPrefix(value: unknown, name = "prefix"): string {
  const prefix = value ?? "conduit-mcp";
  if (typeof prefix !== "string" || !PREFIX.test(prefix)) {
    throw new InvalidOptionError(name, "1 to 128 characters without { or }", prefix);
  }
  return prefix;
}
