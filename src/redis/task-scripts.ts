/**
 * The Lua scripts of the Redis task store. Each runs atomically inside Redis, so the task rules of
 * the `TaskStore` contract hold however many nodes share the store: the scope's quota before the
 * global cap, a terminal status that never changes again (check-and-set), and a task whose node's
 * lease is gone turning `failed` exactly once, whichever node notices first.
 *
 * Keys of one shard (`{t}` its hash tag, as in key-layout.ts; a scope lives in one shard, so a
 * script touches keys of one Redis Cluster slot only):
 *
 * | key | type | holds |
 * | --- | --- | --- |
 * | `{t}:tk:<len(scope)>:<scope><taskId>` | HASH | one task (fields below) |
 * | `{t}:ts:<scope>` | ZSET | task id → creation sequence (the scope's tasks in creation order) |
 * | `{t}:tsd:<scope>` | ZSET | task id → finish sequence (the scope's finished tasks, oldest first) |
 * | `{t}:tscopes` | ZSET | scope → its task count (the cap's largest scope) |
 * | `{t}:tfscopes` | ZSET | scope → its task count, for scopes holding a finished task |
 * | `{t}:tall` | SET | pair member of every task (size, the cap) |
 * | `{t}:texp` | ZSET | pair member → expiresAt, finished tasks only (the sweep) |
 * | `{t}:trun:<node>` | SET | pair members of the running tasks a node owns |
 * | `{t}:tnodes` | SET | nodes that may own running tasks in this shard |
 * | `{t}:tlease:<node>` | STRING | present while the node is alive (PX lease) |
 * | `{t}:tseq` | STRING | the shard's sequence (creation and finish order) |
 * | `{t}:tlast`, `{t}:tgrace` | STRING | when a script last ran; until when leases are not judged |
 *
 * Task HASH fields: `s` status, `m` status message as JSON text (absent = null), `c` createdAt, `u`
 * lastUpdatedAt, `l` ttlMs, `p` pollIntervalMs, `o` owner (absent once terminal), `e` expiresAt
 * (absent while running), `r` result, `er` error, `ir` input requests (each absent = null), `sc` the
 * scope as stored, `j` the scope as JSON text, `id` the task id.
 *
 * Results, errors and input requests are opaque JSON text that the scripts never decode (Redis's
 * cjson turns `[]` into `{}` and rounds numbers), so a result comes back exactly as it went in.
 * The scope goes both as bytes (for keys) and as JSON text (for messages and replies), because a
 * scope with a lone surrogate is stored as WTF-8 bytes (key-layout.ts `wire`) that a reply decoded
 * as UTF-8 would turn into U+FFFD.
 *
 * Every terminal transition and every running task dropped at the cap is published on the store's
 * channel as `<status> <node> <taskId> <scope JSON>` (status `evicted` for a drop; node = the
 * writer, so it can ignore its own), inside the same script as the write.
 *
 * Time: stamps come from Redis's own `TIME` (one clock for every node) unless the store was given a
 * test clock; an ARGV "now" of `''` means `TIME`.
 */

/** Helpers shared by the task scripts (prepended to each). */
const COMMON = `
local TERMINAL = { completed = true, failed = true, cancelled = true }

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

local function syncScope(base, scope)
  local count = redis.call('ZCARD', base .. ':ts:' .. scope)
  local done = redis.call('ZCARD', base .. ':tsd:' .. scope)
  if count == 0 then
    redis.call('ZREM', base .. ':tscopes', scope)
  else
    redis.call('ZADD', base .. ':tscopes', count, scope)
  end
  if done == 0 then
    redis.call('ZREM', base .. ':tfscopes', scope)
  else
    redis.call('ZADD', base .. ':tfscopes', count, scope)
  end
end

-- The largest scope of a count ZSET; among equals the smallest name (equal scores sort bytewise,
-- which is code point order for UTF-8 and for the WTF-8 of key-layout.ts).
local function largest(zkey)
  local top = redis.call('ZREVRANGEBYSCORE', zkey, '+inf', '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #top == 0 then return false end
  return redis.call('ZRANGEBYSCORE', zkey, top[2], top[2], 'LIMIT', 0, 1)[1]
end

local function removeTask(base, member)
  local key = base .. ':tk:' .. member
  local f = redis.call('HMGET', key, 'sc', 'id', 'o')
  redis.call('DEL', key)
  redis.call('SREM', base .. ':tall', member)
  redis.call('ZREM', base .. ':texp', member)
  if f[3] then redis.call('SREM', base .. ':trun:' .. f[3], member) end
  if f[1] then
    redis.call('ZREM', base .. ':ts:' .. f[1], f[2])
    redis.call('ZREM', base .. ':tsd:' .. f[1], f[2])
    syncScope(base, f[1])
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
  local last = tonumber(redis.call('HGET', key, 'u') or 0)
  if last > now then return last end
  return now
end

-- Makes a live task terminal: it leaves its owner's running set, gets its expiry, joins the
-- finished indexes, and the change is announced.
local function terminate(base, key, member, status, ctx)
  local f = redis.call('HMGET', key, 'o', 'sc', 'id', 'j', 'l')
  local now = stamp(key, ctx.now)
  if f[1] then redis.call('SREM', base .. ':trun:' .. f[1], member) end
  local expires = now + tonumber(f[5])
  redis.call('HSET', key, 's', status, 'u', int(now), 'e', int(expires))
  redis.call('HDEL', key, 'o', 'ir')
  redis.call('ZADD', base .. ':texp', int(expires), member)
  redis.call('ZADD', base .. ':tsd:' .. f[2], redis.call('INCR', base .. ':tseq'), f[3])
  syncScope(base, f[2])
  announce(ctx.channel, status, ctx.node, f[3], f[4])
end

-- Whether Redis has been serving long enough to judge leases. Every live node renews its lease
-- every third of it, so in a working deployment some script runs at least that often; a gap of
-- two thirds of a lease (the longest a renewed lease survives without the next renewal) means
-- Redis itself was away (stalled, failing over, restarted) and no node could renew.
-- Leases that lapsed then say nothing about the nodes, so for one lease after such a gap no task is
-- failed for its owner's lease: the live nodes renew in the meantime, the dead ones do not.
local function judging(base, now, leaseMs)
  local last = tonumber(redis.call('GET', base .. ':tlast') or 0)
  local grace = tonumber(redis.call('GET', base .. ':tgrace') or 0)
  if now - last > leaseMs * 2 / 3 then
    grace = now + leaseMs
    redis.call('SET', base .. ':tgrace', int(grace))
  end
  if now > last then redis.call('SET', base .. ':tlast', int(now)) end
  return now >= grace
end

-- The context every script that reads a task takes from ARGV 1..7: base, now, channel, this node,
-- the status message and error of a task whose node died, and this node's lease.
local function context(argv)
  local now = nowMs(argv[2])
  return { now = now, channel = argv[3], node = argv[4], orphanMessage = argv[5],
    orphanError = argv[6], judging = judging(argv[1], now, tonumber(argv[7])) }
end

-- Whether the task exists and has not expired (an expired task is gone for every read at once;
-- the sweep removes it). A running task whose owner's lease is gone is failed first: no reader
-- ever sees a dead node's task as still working, whether or not a sweep ran.
local function live(base, key, member, ctx)
  local f = redis.call('HMGET', key, 's', 'e', 'o')
  if f[1] == false then return false end
  if f[2] and ctx.now >= tonumber(f[2]) then return false end
  if f[3] and ctx.judging and not TERMINAL[f[1]]
    and redis.call('EXISTS', base .. ':tlease:' .. f[3]) == 0 then
    redis.call('HSET', key, 'm', ctx.orphanMessage, 'er', ctx.orphanError)
    terminate(base, key, member, 'failed', ctx)
  end
  return true
end
`;

/**
 * create(task): the scope's quota first (its own oldest finished task, an expired one before any
 * other, makes room; a scope whose tasks all run is refused), then at the shard's cap one task is
 * dropped (the oldest finished task of the largest scope holding one, else the oldest running task
 * of the largest scope, returned and announced as `evicted`), then the write. The owner's lease is
 * set in the same script, so a task is never written under a lease that does not exist.
 *
 * KEYS: 1 tk:<pair>, 2 ts:<scope>, 3 tsd:<scope>, 4 tall, 5 trun:<node>, 6 tnodes, 7 tlease:<node>.
 * ARGV: 1..7 context, 8 scope, 9 id, 10 scope JSON, 11 ttlMs, 12 pollIntervalMs,
 * 13 message mode ('s' or 'c'), 14 message, 15 maxPerScope (-1 = off), 16 max (-1 = off).
 * Returns `{ code, createdAt, evicted scope JSON, evicted id }`: code 1 created, 0 the scope is at
 * its quota with every task running, 3 the id exists already.
 */
export const TASK_CREATE_SCRIPT = `${COMMON}
local base = ARGV[1]
local ctx = context(ARGV)
local scope, id = ARGV[8], ARGV[9]
local maxPer, max = tonumber(ARGV[15]), tonumber(ARGV[16])
if redis.call('EXISTS', KEYS[1]) == 1 then return { 3, 0, '', '' } end
if maxPer >= 0 and redis.call('ZCARD', KEYS[2]) >= maxPer then
  -- The scope's finished tasks in the order they finished (at most its quota): the first expired
  -- one, else the first one.
  local finished = redis.call('ZRANGE', KEYS[3], 0, -1)
  if #finished == 0 then return { 0, 0, '', '' } end
  local victim = pairMember(scope, finished[1])
  for _, fid in ipairs(finished) do
    local e = redis.call('HGET', base .. ':tk:' .. pairMember(scope, fid), 'e')
    if e and ctx.now >= tonumber(e) then
      victim = pairMember(scope, fid)
      break
    end
  end
  removeTask(base, victim)
end
local evictedScope, evictedId = '', ''
if max >= 0 and redis.call('SCARD', KEYS[4]) >= max then
  local sc = largest(base .. ':tfscopes')
  if sc then
    removeTask(base, pairMember(sc, redis.call('ZRANGE', base .. ':tsd:' .. sc, 0, 0)[1]))
  else
    sc = largest(base .. ':tscopes')
    if sc then
      local victim = redis.call('ZRANGE', base .. ':ts:' .. sc, 0, 0)[1]
      local member = pairMember(sc, victim)
      evictedScope = redis.call('HGET', base .. ':tk:' .. member, 'j')
      evictedId = victim
      removeTask(base, member)
    end
  end
end
local now = ctx.now
redis.call('HSET', KEYS[1], 's', 'working', 'c', int(now), 'u', int(now), 'l', ARGV[11], 'p', ARGV[12],
  'o', ctx.node, 'sc', scope, 'j', ARGV[10], 'id', id)
setOptional(KEYS[1], 'm', ARGV[13], ARGV[14])
redis.call('ZADD', KEYS[2], redis.call('INCR', base .. ':tseq'), id)
local member = pairMember(scope, id)
redis.call('SADD', KEYS[4], member)
redis.call('SADD', KEYS[5], member)
redis.call('SADD', KEYS[6], ctx.node)
redis.call('SET', KEYS[7], ctx.node, 'PX', ARGV[7])
syncScope(base, scope)
if evictedId ~= '' then announce(ctx.channel, 'evicted', ctx.node, evictedId, evictedScope) end
return { 1, int(now), evictedScope, evictedId }
`;

/**
 * get(scope, id): the task's fields, or false when it does not exist in this scope or expired.
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member.
 */
export const TASK_GET_SCRIPT = `${COMMON}
local ctx = context(ARGV)
if not live(ARGV[1], KEYS[1], ARGV[8], ctx) then return false end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * update(scope, id, change): a check-and-set on a live, non-terminal task.
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 status ('' keeps it),
 * 10 message mode (k/c/s), 11 message, 12 input requests mode (k/c/s), 13 input requests.
 * Returns 1 when written, 0 when the task is unknown, expired or terminal.
 */
export const TASK_UPDATE_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local key = KEYS[1]
if not live(ARGV[1], key, ARGV[8], ctx) then return 0 end
if TERMINAL[redis.call('HGET', key, 's')] then return 0 end
if ARGV[9] ~= '' then redis.call('HSET', key, 's', ARGV[9]) end
setOptional(key, 'm', ARGV[10], ARGV[11])
setOptional(key, 'ir', ARGV[12], ARGV[13])
redis.call('HSET', key, 'u', int(stamp(key, ctx.now)))
return 1
`;

/**
 * finish(scope, id, outcome): makes a live, running task terminal with its result or error.
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 status, 10 'r' (result) or 'er'
 * (error), 11 the JSON text, 12 message mode (k/c/s), 13 message.
 * Returns 1 when finished, 0 when the task is unknown, expired or terminal already.
 */
export const TASK_FINISH_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local key = KEYS[1]
if not live(ARGV[1], key, ARGV[8], ctx) then return 0 end
if TERMINAL[redis.call('HGET', key, 's')] then return 0 end
redis.call('HSET', key, ARGV[10], ARGV[11])
setOptional(key, 'm', ARGV[12], ARGV[13])
terminate(ARGV[1], key, ARGV[8], ARGV[9], ctx)
return 1
`;

/**
 * cancel(scope, id, message): makes a live, running task `cancelled` (before the caller answers).
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 message mode (c/s), 10 message.
 * Returns `{ code, fields… }`: 1 cancelled now, 0 terminal already (fields as they are), -1 unknown.
 */
export const TASK_CANCEL_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local key = KEYS[1]
if not live(ARGV[1], key, ARGV[8], ctx) then return { -1 } end
local code = 0
if not TERMINAL[redis.call('HGET', key, 's')] then
  setOptional(key, 'm', ARGV[9], ARGV[10])
  terminate(ARGV[1], key, ARGV[8], 'cancelled', ctx)
  code = 1
end
local out = { code }
for _, v in ipairs(redis.call('HGETALL', key)) do out[#out + 1] = v end
return out
`;

/**
 * cancelScope(scope, message): cancels every live running task of the scope (at most its quota).
 * KEYS: 1 ts:<scope>. ARGV: 1..7 context, 8 scope, 9 message mode (c/s), 10 message.
 * Returns the ids cancelled, in creation order.
 */
export const TASK_CANCEL_SCOPE_SCRIPT = `${COMMON}
local base, ctx, scope = ARGV[1], context(ARGV), ARGV[8]
local done = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local member = pairMember(scope, id)
  local key = base .. ':tk:' .. member
  if live(base, key, member, ctx) and not TERMINAL[redis.call('HGET', key, 's')] then
    setOptional(key, 'm', ARGV[9], ARGV[10])
    terminate(base, key, member, 'cancelled', ctx)
    done[#done + 1] = id
  end
end
return done
`;

/**
 * list(scope, after, limit): one page of the scope's live tasks in creation order.
 * KEYS: 1 ts:<scope>. ARGV: 1..7 context, 8 scope, 9 after (a sequence, '' = from the start),
 * 10 limit.
 * Returns false when `after` is past the shard's sequence (never handed out); else a flat list:
 * the next position ('' on the last page), then for each task its field count and fields.
 */
export const TASK_LIST_SCRIPT = `${COMMON}
local base, ctx, scope = ARGV[1], context(ARGV), ARGV[8]
local limit = tonumber(ARGV[10])
local from = '-inf'
if ARGV[9] ~= '' then
  if tonumber(ARGV[9]) > tonumber(redis.call('GET', base .. ':tseq') or 0) then return false end
  from = '(' .. ARGV[9]
end
local page, next, last = {}, '', ARGV[9]
local taken = 0
-- Chunks of limit + 1: expired tasks met on the way are skipped, and the scope holds at most its
-- quota, so the walk is bounded.
while next == '' do
  local rows = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
  if #rows == 0 then break end
  for i = 1, #rows, 2 do
    local id, seq = rows[i], rows[i + 1]
    from = '(' .. seq
    local member = pairMember(scope, id)
    local key = base .. ':tk:' .. member
    if live(base, key, member, ctx) then
      if taken == limit then
        next = last
        break
      end
      local all = redis.call('HGETALL', key)
      page[#page + 1] = #all
      for _, v in ipairs(all) do page[#page + 1] = v end
      taken = taken + 1
      last = seq
    end
  end
  if #rows < (limit + 1) * 2 then break end
end
local out = { next }
for _, v in ipairs(page) do out[#out + 1] = v end
return out
`;

/**
 * The sweep of one shard: removes up to `limit` finished tasks past `expiresAt`, then fails the
 * running tasks of every node whose lease is gone (its running set and membership go).
 * KEYS: 1 texp, 2 tnodes. ARGV: 1..7 context, 8 limit.
 * Returns `{ expired, orphaned }`.
 */
export const TASK_SWEEP_SCRIPT = `${COMMON}
local base, ctx = ARGV[1], context(ARGV)
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', int(ctx.now), 'LIMIT', 0, tonumber(ARGV[8]))
for _, m in ipairs(gone) do removeTask(base, m) end
local orphaned = 0
for _, node in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if ctx.judging and redis.call('EXISTS', base .. ':tlease:' .. node) == 0 then
    for _, m in ipairs(redis.call('SMEMBERS', base .. ':trun:' .. node)) do
      local key = base .. ':tk:' .. m
      local before = redis.call('HGET', key, 's')
      if before and not TERMINAL[before] and live(base, key, m, ctx) then
        orphaned = orphaned + 1
      end
    end
    redis.call('DEL', base .. ':trun:' .. node)
    redis.call('SREM', KEYS[2], node)
  end
end
return { #gone, orphaned }
`;

/**
 * Renews this node's task lease (and is the heartbeat that tells Redis it is being served, see
 * `judging`). KEYS: 1 tlease:<node>, 2 tnodes. ARGV: 1 node, 2 lease ms, 3 base, 4 now.
 * Returns 1 when the lease still existed, 0 when it had lapsed (another node may have failed this
 * node's running tasks meanwhile; nothing undoes that: a terminal status is final).
 */
export const TASK_RENEW_LEASE_SCRIPT = `${COMMON}
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
judging(ARGV[3], nowMs(ARGV[4]), tonumber(ARGV[2]))
return had
`;

/**
 * A graceful close: the lease goes at once, so the running tasks this node still owns are failed
 * now (a node that stops cannot finish them) rather than one lease later.
 * KEYS: 1 tnodes, 2 tlease:<node>, 3 trun:<node>. ARGV: 1..7 context.
 * Returns the number of tasks failed.
 */
export const TASK_RETIRE_SCRIPT = `${COMMON}
local base, ctx = ARGV[1], context(ARGV)
redis.call('DEL', KEYS[2])
local failed = 0
for _, m in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  local key = base .. ':tk:' .. m
  local before = redis.call('HGET', key, 's')
  if before and not TERMINAL[before] and live(base, key, m, ctx) then failed = failed + 1 end
end
redis.call('DEL', KEYS[3])
redis.call('SREM', KEYS[1], ctx.node)
return failed
`;
