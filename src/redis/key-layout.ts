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

  /** The HASH of one node's in-flight entries. */
  nodeEntries(node: string): string {
    return `${this.tag}:nf:${node}`;
  }

  /** The lease key of one node. */
  lease(node: string): string {
    return `${this.tag}:lease:${node}`;
  }
}

/** A scope or id as sent to Redis: the string itself, or its WTF-8 bytes (see {@link wire}). */
export type Wire = string | Buffer;

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A scope or id in the form Redis stores. Well-formed text goes as it is (UTF-8). Text with a
 * lone surrogate would be turned into U+FFFD by UTF-8 encoding, so `"\uD800"` and `"\uFFFD"`
 * would become one key (and, for scopes, one tenant); it goes as WTF-8 bytes instead, which no
 * well-formed string produces and which keep code point order, the order the seed's eviction
 * ties use (conduit-behavior.md §1.5).
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

function cat(head: string, ...parts: Wire[]): Wire {
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
