/**
 * The Lua scripts of the Redis cancellation store. Each one runs atomically inside Redis, so the
 * row rules (quota first, then cap eviction, then write; clear reads before it writes) hold
 * however many processes and nodes share the store.
 *
 * Key layout (see {@link "../key-layout.js"}): every key of one shard starts with that shard's
 * hash-tagged base such as `{conduit-mcp}`, so a script may touch keys it computes itself
 * (per-scope keys found during eviction) without a Redis Cluster cross-slot error. A script only
 * ever touches one shard.
 *
 * Scripts take the base in ARGV[1] and build the dynamic keys from it; the keys known before the
 * call are also passed in KEYS so Redis Cluster clients route the call to the right node.
 *
 * Time: every stamp and cutoff comes from Redis's own `TIME` (one clock for all nodes: a node
 * whose clock is wrong can neither wipe others' rows nor stamp rows that never expire). A script
 * takes an explicit "now" only when the store was given a `clock` for tests; `''` means `TIME`.
 *
 * Why no Lua `<` on strings: Redis calls `setlocale(LC_COLLATE, "")`, and Lua compares strings with
 * `strcoll`, so the order would depend on the server's locale. Scope and id ties are ordered
 * bytewise, so the scripts compare bytes themselves.
 */

import type { RedisClient } from "../connection/connection.js";
import type { Wire } from "../key-layout.js";

/** Helpers shared by the scripts (prepended to each). */
const COMMON = `
local function nowMs(given)
  if given ~= '' then return given end
  local t = redis.call('TIME')
  return tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end

local function announce(stream, cap, channel, shard, payload)
  local sid = redis.call('XADD', stream, 'MAXLEN', '~', cap, '*', 'm', payload)
  redis.call('PUBLISH', channel, shard .. ' ' .. sid .. ' ' .. payload)
end

local function pairMember(scope, id)
  return string.len(scope) .. ':' .. scope .. id
end

local function splitMember(m)
  local colon = string.find(m, ':', 1, true)
  local n = tonumber(string.sub(m, 1, colon - 1))
  return string.sub(m, colon + 1, colon + n), string.sub(m, colon + n + 1)
end

local function syncCount(base, scope)
  local c = redis.call('ZCARD', base .. ':s:' .. scope)
  if c == 0 then
    redis.call('ZREM', base .. ':scopes', scope)
  else
    redis.call('ZADD', base .. ':scopes', c, scope)
  end
end

local function removeRow(base, scope, id)
  redis.call('ZREM', base .. ':s:' .. scope, id)
  redis.call('HDEL', base .. ':r:' .. scope, id)
  redis.call('ZREM', base .. ':time', pairMember(scope, id))
end

local function bytesLess(a, b)
  if a == b then return false end
  local la, lb = string.len(a), string.len(b)
  local n = la
  if lb < n then n = lb end
  local i = 1
  while i <= n do
    local j = i + 31
    if j > n then j = n end
    local sa, sb = string.sub(a, i, j), string.sub(b, i, j)
    if sa ~= sb then
      for k = 1, j - i + 1 do
        local x, y = string.byte(sa, k), string.byte(sb, k)
        if x ~= y then return x < y end
      end
    end
    i = j + 1
  end
  return la < lb
end
`;

/**
 * record(row): quota check (the only rejection), then at the shard's cap evict one batch, then
 * insert or refresh, then (when there is a payload) append the event to the shard's catch-up
 * stream and PUBLISH it for other nodes — all in one script.
 *
 * KEYS: 1 scopes, 2 s:<scope>, 3 r:<scope>, 4 time, 5 cx.
 * ARGV: 1 base, 2 scope, 3 id, 4 now ('' = TIME), 5 encoded reason, 6 maxRows (-1 = off),
 * 7 maxRowsPerScope (-1 = off), 8 batch, 9 channel, 10 payload ('' = announce nothing),
 * 11 stream length, 12 shard index.
 * Returns `{ recorded (0|1), evicted }`.
 *
 * Eviction order: rows sorted by `(-count(scope), cancelledAt, scope, id)`
 * with counts as they were before the batch. Scopes are taken in groups of equal count, largest
 * first, from the `scopes` ZSET. A group that fits in what is left of the batch goes whole (order
 * inside it is irrelevant); the first group that does not fit contributes its oldest rows across
 * its scopes, merged by `(cancelledAt, scope, id)`. Cost per batch: O(rows read · log), at most
 * the table once per `maxRows / 20` inserts — no full scan or sort per insert.
 */
export const RECORD_SCRIPT = `${COMMON}
local function candidateLess(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  if a[2] ~= b[2] then return bytesLess(a[2], b[2]) end
  return bytesLess(a[3], b[3])
end

local function evict(base, need)
  local scopesKey = base .. ':scopes'
  local victims = {}
  local upper = '+inf'
  while need > 0 do
    local top = redis.call('ZREVRANGEBYSCORE', scopesKey, upper, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
    if #top == 0 then break end
    local c = tonumber(top[2])
    local group = redis.call('ZRANGEBYSCORE', scopesKey, top[2], top[2])
    if #group * c <= need then
      for _, sc in ipairs(group) do
        local ids = redis.call('ZRANGE', base .. ':s:' .. sc, 0, -1)
        for _, id in ipairs(ids) do victims[#victims + 1] = { sc, id } end
      end
      need = need - #group * c
    else
      local per = c
      if need < per then per = need end
      local cands = {}
      for _, sc in ipairs(group) do
        local ids = redis.call('ZRANGE', base .. ':s:' .. sc, 0, per - 1, 'WITHSCORES')
        for i = 1, #ids, 2 do cands[#cands + 1] = { tonumber(ids[i + 1]), sc, ids[i] } end
      end
      table.sort(cands, candidateLess)
      for i = 1, need do victims[#victims + 1] = { cands[i][2], cands[i][3] } end
      need = 0
    end
    upper = '(' .. top[2]
  end
  local touched = {}
  for _, v in ipairs(victims) do
    removeRow(base, v[1], v[2])
    touched[v[1]] = true
  end
  for sc in pairs(touched) do syncCount(base, sc) end
  return #victims
end

local base, scope, id = ARGV[1], ARGV[2], ARGV[3]
local maxRows, maxPer, batch = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
if maxPer >= 0 and redis.call('ZCARD', KEYS[2]) >= maxPer then return { 0, 0 } end
local evicted = 0
if maxRows >= 0 and redis.call('ZCARD', KEYS[4]) >= maxRows then
  evicted = evict(base, batch)
end
-- Stamps never decrease across every node sharing the store: max(clock, last stamp), as the
-- memory store does, so a clock stepping back (or a node whose clock lags) cannot reorder rows.
local stamp = nowMs(ARGV[4])
local last = redis.call('GET', base .. ':last')
if last and tonumber(last) > tonumber(stamp) then stamp = last end
redis.call('SET', base .. ':last', stamp)
redis.call('ZADD', KEYS[2], stamp, id)
redis.call('HSET', KEYS[3], id, ARGV[5])
redis.call('ZADD', KEYS[4], stamp, pairMember(scope, id))
syncCount(base, scope)
if ARGV[10] ~= '' then announce(KEYS[5], ARGV[11], ARGV[9], ARGV[12], ARGV[10]) end
return { 1, evicted }
`;

/**
 * Announces a cancel without a row (every handle of a scope): catch-up stream, then PUBLISH.
 * KEYS: 1 cx. ARGV: 1 channel, 2 payload, 3 stream length, 4 shard index.
 */
export const ANNOUNCE_SCRIPT = `${COMMON}
announce(KEYS[1], ARGV[3], ARGV[1], ARGV[4], ARGV[2])
return 1
`;

/**
 * clear(scope, id): reads first, writes only when the row exists.
 * KEYS: 1 scopes, 2 s:<scope>. ARGV: 1 base, 2 scope, 3 id. Returns 1 when a row was removed.
 */
export const CLEAR_SCRIPT = `${COMMON}
if redis.call('ZSCORE', KEYS[2], ARGV[3]) == false then return 0 end
removeRow(ARGV[1], ARGV[2], ARGV[3])
syncCount(ARGV[1], ARGV[2])
return 1
`;

/**
 * Removes up to `limit` rows strictly older than the TTL at Redis's now.
 * KEYS: 1 scopes, 2 time. ARGV: 1 base, 2 ttl ms, 3 limit, 4 now ('' = TIME).
 * Returns the number removed; the caller loops while a full page came back, so one call never
 * blocks Redis for long.
 */
export const EXPIRE_SCRIPT = `${COMMON}
local base = ARGV[1]
local cutoff = '(' .. tostring(tonumber(nowMs(ARGV[4])) - tonumber(ARGV[2]))
local ms = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', cutoff, 'LIMIT', 0, tonumber(ARGV[3]))
local touched = {}
for _, m in ipairs(ms) do
  local scope, id = splitMember(m)
  removeRow(base, scope, id)
  touched[scope] = true
end
for sc in pairs(touched) do syncCount(base, sc) end
return #ms
`;

/**
 * Renews this node's lease. KEYS: 1 lease:<node>, 2 nodes. ARGV: 1 node, 2 lease ms.
 * Returns 1 when the lease still existed, 0 when it had lapsed (another node's cleanup may then
 * have removed this node's entries, so the caller re-asserts them).
 */
export const RENEW_LEASE_SCRIPT = `
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return had
`;

/**
 * Replaces this node's in-flight entries with the given list and renews its lease: run after an
 * outage or a lapsed lease, when Redis may hold stale entries or lack live ones.
 * KEYS: 1 nf:<node>, 2 nodes, 3 lease:<node>. ARGV: 1 base, 2 node, 3 lease ms, then pairs of
 * (handle id, pair member).
 */
export const RESYNC_SCRIPT = `
local base, node = ARGV[1], ARGV[2]
local old = redis.call('HGETALL', KEYS[1])
for i = 1, #old, 2 do redis.call('HDEL', base .. ':f:' .. old[i + 1], old[i]) end
redis.call('DEL', KEYS[1])
for i = 4, #ARGV, 2 do
  redis.call('HSET', base .. ':f:' .. ARGV[i + 1], ARGV[i], node)
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('SET', KEYS[3], node, 'PX', ARGV[3])
redis.call('SADD', KEYS[2], node)
return 1
`;

/**
 * The cross-node dead-process sweep: every node in `nodes` whose lease key is gone loses all of
 * its in-flight entries. KEYS: 1 nodes. ARGV: 1 base. Returns the number of entries removed.
 */
export const REAP_NODES_SCRIPT = `
local base = ARGV[1]
local removed = 0
for _, node in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', base .. ':lease:' .. node) == 0 then
    local entries = redis.call('HGETALL', base .. ':nf:' .. node)
    for i = 1, #entries, 2 do
      removed = removed + redis.call('HDEL', base .. ':f:' .. entries[i + 1], entries[i])
    end
    redis.call('DEL', base .. ':nf:' .. node)
    redis.call('SREM', KEYS[1], node)
  end
end
return removed
`;

/**
 * A graceful close: drop this node's entries, lease and membership.
 * KEYS: 1 nf:<node>, 2 nodes, 3 lease:<node>. ARGV: 1 base, 2 node.
 */
export const RETIRE_NODE_SCRIPT = `
local base = ARGV[1]
local old = redis.call('HGETALL', KEYS[1])
for i = 1, #old, 2 do redis.call('HDEL', base .. ':f:' .. old[i + 1], old[i]) end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('SREM', KEYS[2], ARGV[2])
return 1
`;

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, falling back to EVAL on NOSCRIPT). */
export interface CancellationScripts {
  conduitMcpRecordV2(...args: Wire[]): Promise<[number, number]>;
  conduitMcpAnnounceV1(...args: Wire[]): Promise<number>;
  conduitMcpClearV1(...args: Wire[]): Promise<number>;
  conduitMcpExpireV2(...args: Wire[]): Promise<number>;
  conduitMcpRenewLeaseV1(...args: Wire[]): Promise<number>;
  conduitMcpResyncV1(...args: Wire[]): Promise<number>;
  conduitMcpReapNodesV1(...args: Wire[]): Promise<number>;
  conduitMcpRetireNodeV1(...args: Wire[]): Promise<number>;
}

const SCRIPTS: ReadonlyArray<readonly [keyof CancellationScripts, string, number]> = [
  ["conduitMcpRecordV2", RECORD_SCRIPT, 5],
  ["conduitMcpAnnounceV1", ANNOUNCE_SCRIPT, 1],
  ["conduitMcpClearV1", CLEAR_SCRIPT, 2],
  ["conduitMcpExpireV2", EXPIRE_SCRIPT, 2],
  ["conduitMcpRenewLeaseV1", RENEW_LEASE_SCRIPT, 2],
  ["conduitMcpResyncV1", RESYNC_SCRIPT, 3],
  ["conduitMcpReapNodesV1", REAP_NODES_SCRIPT, 1],
  ["conduitMcpRetireNodeV1", RETIRE_NODE_SCRIPT, 3],
];

/**
 * Defines every script of the cancellation store on `client` (the store's command connection).
 *
 * @example
 * ```ts
 * defineCancellationScripts(connection.client);
 * ```
 */
export function defineCancellationScripts(client: RedisClient): void {
  for (const [name, lua, numberOfKeys] of SCRIPTS)
    client.defineCommand(name, { lua, numberOfKeys });
}
