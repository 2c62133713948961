/**
 * The Lua helpers the task scripts (task-scripts.ts) are built from, and the preludes of the
 * scripts run most often. COMMON is a list of blocks a blank line apart, each defining one name;
 * a script's run defines each helper of its prelude anew (a closure each, costing Redis about as
 * much as a plain command), so `get` and `create` take only the helpers they call.
 */

/** Helpers shared by the task scripts (prepended to each). */
export const COMMON = `
local TERMINAL = { completed = true, failed = true, cancelled = true }

-- A number stored in a task's fields: anyone who can write to Redis can put text there, and a
-- script comparing it would fail (the task's every read answered 503). Garbage counts as 0 (an
-- expiry of 0 is past: a forged record reads as gone).
local function num(v)
  return tonumber(v) or 0
end

local function nowMs(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Integral ms as decimal text (never an exponent, whatever the size).
local function int(x)
  return string.format('%.0f', x)
end

local function pairMember(scope, id)
  return string.len(scope) .. ':' .. scope .. id
end

-- The shard's epoch: set by the first script that runs on an empty shard. A node remembers the
-- epoch its tasks were created in; a task of its own that is gone from a shard whose epoch changed
-- was lost by Redis (restarted without persistence), not ended by anyone, so the node writes it
-- again.
local function epochOf(base)
  local e = redis.call('GET', base .. ':tepoch')
  if e then return e end
  local t = redis.call('TIME')
  e = t[1] .. '.' .. t[2]
  redis.call('SET', base .. ':tepoch', e)
  return e
end

-- Keeps a bucket's place in the largest-first indexes in step with its task ZSET.
local function syncBucket(base, bucket)
  local count = redis.call('ZCARD', base .. ':tb:' .. bucket)
  if count == 0 then
    redis.call('ZREM', base .. ':tbuckets', bucket)
    redis.call('ZREM', base .. ':tbbytes', bucket)
  else
    redis.call('ZADD', base .. ':tbuckets', count, bucket)
  end
end

-- The largest bucket of a ZSET of sizes; among equals the smallest name (equal scores sort
-- bytewise, which is code point order for UTF-8 and for the WTF-8 of key-layout.ts).
local function largest(zkey)
  local top = redis.call('ZREVRANGEBYSCORE', zkey, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #top == 0 then return false end
  return redis.call('ZRANGEBYSCORE', zkey, top[2], top[2], 'LIMIT', 0, 1)[1]
end

-- Sets the task's byte count from its fields, and its bucket's and the shard's with it.
local function recount(base, key)
  local f = redis.call('HMGET', key, 'r', 'er', 'ir', 'm', 'n', 'b')
  if not f[6] then return end
  local n = 0
  for i = 1, 4 do
    if f[i] then n = n + string.len(f[i]) end
  end
  local delta = n - num(f[5])
  if delta == 0 then return end
  redis.call('HSET', key, 'n', n)
  redis.call('ZINCRBY', base .. ':tbbytes', delta, f[6])
  redis.call('INCRBY', base .. ':tbytes', delta)
end

local function removeTask(base, member)
  local key = base .. ':tk:' .. member
  local f = redis.call('HMGET', key, 'sc', 'id', 'o', 'b', 'n')
  redis.call('DEL', key)
  redis.call('SREM', base .. ':tall', member)
  redis.call('ZREM', base .. ':texp', member)
  if f[3] then redis.call('SREM', base .. ':trun:' .. f[3], member) end
  if f[1] then redis.call('ZREM', base .. ':ts:' .. f[1], f[2]) end
  if f[4] then
    redis.call('ZREM', base .. ':tb:' .. f[4], member)
    redis.call('ZREM', base .. ':tbd:' .. f[4], member)
    local n = num(f[5])
    if n ~= 0 then
      redis.call('ZINCRBY', base .. ':tbbytes', -n, f[4])
      redis.call('INCRBY', base .. ':tbytes', -n)
    end
    syncBucket(base, f[4])
  end
end

-- The first member of a ZSET's first two that is not spare (false when none).
local function firstOther(zkey, spare)
  for _, m in ipairs(redis.call('ZRANGE', zkey, 0, 1)) do
    if m ~= spare then return m end
  end
  return false
end

-- Drops one task of the largest bucket of zkey (by count or by bytes), never spare: its oldest
-- finished task, else its oldest running one, whose scope JSON and id are returned (its handler
-- must be aborted; the caller announces it). Returns false when nothing can be dropped, true when
-- a finished task went.
local function evictLargest(base, zkey, spare)
  local bucket = largest(zkey)
  if not bucket then return false end
  local victim = firstOther(base .. ':tbd:' .. bucket, spare)
  if victim then
    removeTask(base, victim)
    return true
  end
  victim = firstOther(base .. ':tb:' .. bucket, spare)
  if not victim then return false end
  local f = redis.call('HMGET', base .. ':tk:' .. victim, 'j', 'id')
  removeTask(base, victim)
  return { f[1] or '', f[2] or '' }
end

-- Keeps the byte budgets after the task at member grew: its bucket's own oldest finished tasks go
-- while the bucket is over maxBucket, then tasks of the bucket holding the most bytes while the
-- shard is over maxAll (-1 = off). Appends the running tasks dropped to out (scope JSON, id).
local function fitBytes(base, bucket, member, maxBucket, maxAll, out)
  if maxBucket >= 0 then
    while tonumber(redis.call('ZSCORE', base .. ':tbbytes', bucket) or 0) > maxBucket do
      local oldest = firstOther(base .. ':tbd:' .. bucket, member)
      if not oldest then break end
      removeTask(base, oldest)
    end
  end
  if maxAll >= 0 then
    while tonumber(redis.call('GET', base .. ':tbytes') or 0) > maxAll do
      local gone = evictLargest(base, base .. ':tbbytes', member)
      if not gone then break end
      if gone ~= true then
        out[#out + 1] = gone[1]
        out[#out + 1] = gone[2]
      end
    end
  end
end

local function announce(channel, status, node, id, scopeJson)
  redis.call('PUBLISH', channel, status .. ' ' .. node .. ' ' .. id .. ' ' .. scopeJson)
end

-- Sets or clears an optional field: mode 'k' keeps it, 'c' clears it, 's' sets it to value.
local function setOptional(key, field, mode, value)
  if mode == 's' then
    redis.call('HSET', key, field, value)
  elseif mode == 'c' then
    redis.call('HDEL', key, field)
  end
end

-- The task's new lastUpdatedAt: never before the previous one (a clock stepping back).
local function stamp(key, now)
  local last = num(redis.call('HGET', key, 'u'))
  if last > now then return last end
  return now
end

-- Makes a live task terminal: it leaves its owner's running set, gets its expiry, joins the
-- finished indexes, and the change is announced. \`counted\`: the caller removed its input
-- requests and recounted its bytes already (finish), so they are not counted again.
local function terminate(base, key, member, status, ctx, counted)
  local f = redis.call('HMGET', key, 'o', 'sc', 'id', 'j', 'l', 'u', 'b')
  -- lastUpdatedAt never goes back (a clock stepping back).
  local now = ctx.now
  if num(f[6]) > now then now = num(f[6]) end
  if f[1] then redis.call('SREM', base .. ':trun:' .. f[1], member) end
  local expires = now + num(f[5])
  redis.call('HSET', key, 's', status, 'u', int(now), 'e', int(expires))
  redis.call('HDEL', key, 'o', 'ir')
  redis.call('ZADD', base .. ':texp', int(expires), member)
  if f[7] then
    redis.call('ZADD', base .. ':tbd:' .. f[7], redis.call('INCR', base .. ':tseq'), member)
  end
  if not counted then recount(base, key) end
  announce(ctx.channel, status, ctx.node, f[3], f[4])
end

-- Whether Redis has been serving long enough to judge leases. Every live node renews its lease
-- every third of it, so in a working deployment some script runs at least that often; a gap of
-- two thirds of a lease (the longest a renewed lease survives without the next renewal) means
-- Redis itself was away (stalled, failing over, restarted) and no node could renew.
-- Leases that lapsed then say nothing about the nodes, so for one lease after such a gap no task is
-- failed for its owner's lease: the live nodes renew in the meantime, the dead ones do not.
-- \`tlast\` is written by every lease renewal (\`beat\`), and by any other script only once it is a
-- sixth of a lease old: reads and writes of tasks do not each write it, and a gap it shows is at
-- most a sixth of a lease longer than the true one (renewals, every third of a lease, keep it
-- well under two thirds).
local function judging(base, now, leaseMs, beat)
  local at = redis.call('MGET', base .. ':tlast', base .. ':tgrace')
  local last, grace = tonumber(at[1]) or 0, tonumber(at[2]) or 0
  local gap = now - last > leaseMs * 2 / 3
  if gap then
    grace = now + leaseMs
    redis.call('SET', base .. ':tgrace', int(grace))
  end
  if now > last and (beat or gap or now - last >= leaseMs / 6) then
    redis.call('SET', base .. ':tlast', int(now))
  end
  return now >= grace
end

-- The context every script that reads a task takes from ARGV 1..7: base, now, channel, this node,
-- the status message and error of a task whose node died, and this node's lease.
local function context(argv)
  local now = nowMs(argv[2])
  return { now = now, channel = argv[3], node = argv[4], orphanMessage = argv[5],
    orphanError = argv[6], judging = judging(argv[1], now, tonumber(argv[7]), false) }
end

-- The status of a task from its fields s (status), e (expiresAt) and o (owner), false when it
-- does not exist or has expired (an expired task is gone for every read at once; the sweep removes
-- it). A running task whose owner's lease is gone is failed first (then its status is 'failed'
-- and the second value true): no reader ever sees a dead node's task as still working, whether
-- or not a sweep ran.
local function settle(base, key, member, ctx, s, e, o)
  if not s then return false, false end
  if e and ctx.now >= num(e) then return false, false end
  if o and ctx.judging and not TERMINAL[s]
    and redis.call('EXISTS', base .. ':tlease:' .. o) == 0 then
    redis.call('HSET', key, 'm', ctx.orphanMessage, 'er', ctx.orphanError)
    terminate(base, key, member, 'failed', ctx, false)
    return 'failed', true
  end
  return s, false
end

-- The task's status when it exists and has not expired, else false (see settle).
local function live(base, key, member, ctx)
  local f = redis.call('HMGET', key, 's', 'e', 'o')
  return (settle(base, key, member, ctx, f[1], f[2], f[3]))
end
`;

/** COMMON's blocks (a blank line apart, each defining one name), by the name each defines. */
const BLOCKS = new Map(
  COMMON.split("\n\n").map((block) => {
    const name = /^local (?:function )?(\w+)/m.exec(block)?.[1];
    if (name === undefined)
      throw new Error(`task-scripts: a COMMON block defines nothing: ${block}`);
    return [name, block] as const;
  }),
);

/**
 * The part of COMMON a script uses, in COMMON's order: a script's run defines each helper of its
 * prelude anew (a closure each), which costs Redis about as much as a plain command, so the
 * scripts run most often (get, create) take only the helpers they call.
 */
function prelude(names: readonly string[]): string {
  const wanted = new Set(names);
  const parts = [...BLOCKS].filter(([name]) => wanted.has(name)).map(([, block]) => block);
  if (parts.length !== wanted.size) throw new Error(`task-scripts: unknown helper in ${names}`);
  return `${parts.join("\n\n")}\n`;
}

/** The helpers of a get: its check and the failing of a dead owner's task. */
export const GET_PRELUDE = prelude([
  "TERMINAL",
  "num",
  "nowMs",
  "int",
  "recount",
  "announce",
  "terminate",
  "judging",
  "context",
  "settle",
]);

/** The helpers of a create: the quota, the cap's eviction, the epoch. */
export const CREATE_PRELUDE = prelude([
  "TERMINAL",
  "num",
  "nowMs",
  "int",
  "pairMember",
  "epochOf",
  "syncBucket",
  "largest",
  "removeTask",
  "firstOther",
  "evictLargest",
  "announce",
  "judging",
  "context",
]);
