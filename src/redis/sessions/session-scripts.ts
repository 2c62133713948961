/**
 * The Lua scripts of `RedisSessionStore` (key layout: redis-session-store.ts) and the commands
 * ioredis defines for them. Each script runs atomically on one Cluster slot (every key under the
 * store's one hash tag), so a creator's quota and the eviction of the largest creator cannot
 * interleave with another node's writes. Times come from Redis's own `TIME` (one clock for every
 * node) unless a test clock is passed.
 */
import type { RedisClient } from "../connection/connection.js";

/** Redis's now in ms, unless the test clock was passed (`''` = TIME); and the shared helpers. */
const COMMON = `
local function nowMs(given)
  if given ~= '' then return given end
  local t = redis.call('TIME')
  return tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end

-- A creator's entry in the creators ZSET: its session count, then the order in which it reached
-- that count (a per-store sequence), so ZREVRANGE 0 0 is the largest creator, among equals the
-- one that reached the count last.
local function setCount(base, creator)
  local n = redis.call('ZCARD', base .. ':sc:' .. creator)
  if n == 0 then
    redis.call('ZREM', base .. ':creators', creator)
  else
    local seq = redis.call('INCR', base .. ':cseq') % 4294967296
    redis.call('ZADD', base .. ':creators', n * 4294967296 + seq, creator)
  end
end

-- Every node hears that the session ended (its GET stream and subscriptions end with it). A
-- channel is not a key, so publishing from a script stays within one Cluster slot.
local function removeSession(base, id)
  local key = base .. ':sess:' .. id
  local creator = redis.call('HGET', key, 'creatorScope')
  local bytes = tonumber(redis.call('HGET', key, 'bytes') or '0') or 0
  redis.call('DEL', key)
  redis.call('ZREM', base .. ':sessions', id)
  if creator then
    redis.call('ZREM', base .. ':sc:' .. creator, id)
    setCount(base, creator)
    if bytes > 0 then
      local left = tonumber(redis.call('ZINCRBY', base .. ':cbytes', -bytes, creator))
      if left <= 0 or redis.call('ZCARD', base .. ':sc:' .. creator) == 0 then
        redis.call('ZREM', base .. ':cbytes', creator)
      end
    end
  end
  if bytes > 0 then redis.call('DECRBY', base .. ':sbytes', bytes) end
  redis.call('PUBLISH', base .. ':ended', id)
end
`;
/**
 * KEYS 1 sessions, 2 sess:<id>, 3 sc:<creator>. ARGV 1 id, 2 max (-1 off), 3 principal,
 * 4 version, 5 createdAt, 6 now, 7 level, 8 restore (1 = only if absent), 9 maxPerScope (-1 off),
 * 10 creator, 11 base, 12 the client's askable capabilities (`n` unknown, `s<flag list>`),
 * 13 the record's bytes, 14 maxBytesPerScope (-1 off), 15 maxBytes (-1 off).
 * Returns 1 created, 0 full (a bound of 0), 3 scope-full, 2 already there (restore only).
 * The per-creator quotas (count, bytes) are the only refusal; at a global bound the least
 * recently used sessions of the largest creator (by count, then by bytes) are evicted.
 */
const CREATE = `${COMMON}
local base = ARGV[11]
if redis.call('EXISTS', KEYS[2]) == 1 then
  if ARGV[8] == '1' then return 2 end
  removeSession(base, ARGV[1])
end
local max, maxPer = tonumber(ARGV[2]), tonumber(ARGV[9])
local bytes, maxBytesPer, maxBytes = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
if max == 0 or maxBytes == 0 then return 0 end
if maxPer >= 0 and redis.call('ZCARD', KEYS[3]) >= maxPer then return 3 end
local held = tonumber(redis.call('ZSCORE', base .. ':cbytes', ARGV[10]) or '0') or 0
if maxBytesPer >= 0 and held + bytes > maxBytesPer then return 3 end
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
  local top = redis.call('ZREVRANGE', base .. ':creators', 0, 0)
  if #top == 1 then
    local victim = redis.call('ZRANGE', base .. ':sc:' .. top[1], 0, 0)
    if #victim == 1 then removeSession(base, victim[1]) end
  end
end
if maxBytes > 0 then
  -- Bounded: each pass removes one session (or one stale creator entry).
  for _ = 1, 256 do
    if (tonumber(redis.call('GET', base .. ':sbytes') or '0') or 0) + bytes <= maxBytes then break end
    local top = redis.call('ZREVRANGE', base .. ':cbytes', 0, 0)
    if #top == 0 then break end
    local victim = redis.call('ZRANGE', base .. ':sc:' .. top[1], 0, 0)
    if #victim == 1 then removeSession(base, victim[1])
    else redis.call('ZREM', base .. ':cbytes', top[1]) end
  end
end
local now = nowMs(ARGV[6])
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'principalId', ARGV[3], 'protocolVersion', ARGV[4],
  'createdAt', ARGV[5], 'lastSeenAt', now, 'logLevel', ARGV[7], 'creatorScope', ARGV[10],
  'caps', ARGV[12], 'bytes', ARGV[13])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
setCount(base, ARGV[10])
redis.call('ZINCRBY', base .. ':cbytes', bytes, ARGV[10])
redis.call('INCRBY', base .. ':sbytes', bytes)
return 1
`;
/**
 * A session's refresh (the store reads it with a plain `HGETALL` and calls this only once the
 * window of its last refresh has passed, or looks as if it had). KEYS 1 sessions, 2 sess:<id>.
 * ARGV 1 id, 2 now, 3 base, 4 refresh window ms (0: refreshed by every get). Writes `lastSeenAt`
 * = now and `until` = now + window, and scores the session at `until` in the sessions ZSET (the
 * idle sweep and the global bound) and its creator's ZSET (least recently used first): every get
 * before `until` is a use at or before that score, so the sweep, counting idle time from the
 * score, never removes a session sooner than the TTL after its last use (at most a window later).
 * Returns now (Redis's time, the store's estimate of it learns from it), or nil when the session
 * is gone (ended since it was read: nothing is written).
 */
const REFRESH = `${COMMON}
local creator = redis.call('HGET', KEYS[2], 'creatorScope')
if not creator and redis.call('EXISTS', KEYS[2]) == 0 then return false end
local now = nowMs(ARGV[2])
local score = tostring(tonumber(now) + tonumber(ARGV[4]))
redis.call('HSET', KEYS[2], 'lastSeenAt', now, 'until', score)
redis.call('ZADD', KEYS[1], score, ARGV[1])
if creator then redis.call('ZADD', ARGV[3] .. ':sc:' .. creator, 'XX', score, ARGV[1]) end
return now
`;
const SET_LEVEL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'logLevel', ARGV[1])
return 1
`;
/** KEYS 1 sess:<id>. ARGV 1 id, 2 base. Returns 1 when the session existed. */
const DELETE = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
removeSession(ARGV[2], ARGV[1])
return 1
`;
/** KEYS 1 sessions. ARGV 1 base, 2 ttl ms, 3 limit, 4 now. Removes strictly idle-longer sessions. */
const EXPIRE = `${COMMON}
local cutoff = '(' .. tostring(tonumber(nowMs(ARGV[4])) - tonumber(ARGV[2]))
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do removeSession(ARGV[1], id) end
return #ids
`;

/**
 * KEYS 1 epoch. ARGV 1 a fresh token. Sets the token unless one is there; returns the one there.
 * Redis restarted without persistence (or flushed) has none: the first node back sets a new one,
 * and every node that remembered the old one sees it changed.
 */
const EPOCH = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
`;

/** The commands {@link defineSessionScripts} adds to the client. */
export interface SessionScripts {
  conduitMcpSessionCreateV5(...args: string[]): Promise<number>;
  conduitMcpSessionRefreshV1(...args: string[]): Promise<string | null>;
  conduitMcpSessionSetLevelV1(...args: string[]): Promise<number>;
  conduitMcpSessionDeleteV4(...args: string[]): Promise<number>;
  conduitMcpSessionExpireV5(...args: string[]): Promise<number>;
  conduitMcpSessionEpochV1(...args: string[]): Promise<string | null>;
}

/** Defines the session scripts on the store's command connection. */
export function defineSessionScripts(client: RedisClient): void {
  client.defineCommand("conduitMcpSessionCreateV5", { lua: CREATE, numberOfKeys: 3 });
  client.defineCommand("conduitMcpSessionRefreshV1", { lua: REFRESH, numberOfKeys: 2 });
  client.defineCommand("conduitMcpSessionSetLevelV1", { lua: SET_LEVEL, numberOfKeys: 1 });
  client.defineCommand("conduitMcpSessionDeleteV4", { lua: DELETE, numberOfKeys: 1 });
  client.defineCommand("conduitMcpSessionExpireV5", { lua: EXPIRE, numberOfKeys: 1 });
  client.defineCommand("conduitMcpSessionEpochV1", { lua: EPOCH, numberOfKeys: 1 });
}
