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
 * | `{t}:tb:<bucket>` | ZSET | pair member → creation sequence (the tasks a bucket pays for) |
 * | `{t}:tbd:<bucket>` | ZSET | pair member → finish sequence (its finished tasks, oldest first) |
 * | `{t}:tbuckets` | ZSET | bucket → its task count (the cap's largest bucket) |
 * | `{t}:tbbytes` | ZSET | bucket → its tasks' bytes (the byte budget's largest bucket) |
 * | `{t}:tbytes` | STRING | the bytes of every task of the shard |
 * | `{t}:tall` | SET | pair member of every task (size, the cap) |
 * | `{t}:texp` | ZSET | pair member → expiresAt, finished tasks only (the sweep) |
 * | `{t}:trun:<node>` | SET | pair members of the running tasks a node owns |
 * | `{t}:tnodes` | SET | nodes that may own running tasks in this shard |
 * | `{t}:tlease:<node>` | STRING | present while the node is alive (PX lease) |
 * | `{t}:tseq` | STRING | the shard's sequence (creation and finish order) |
 * | `{t}:tlast`, `{t}:tgrace` | STRING | when a script last ran; until when leases are not judged |
 * | `{t}:tepoch` | STRING | set by the first script on an empty shard (see `epochOf`) |
 *
 * Task HASH fields: `s` status, `m` status message as JSON text (absent = null), `c` createdAt, `u`
 * lastUpdatedAt, `l` ttlMs, `p` pollIntervalMs, `o` owner (absent once terminal), `e` expiresAt
 * (absent while running), `r` result, `er` error, `ir` input requests (each absent = null), `sc` the
 * scope as stored, `j` the scope as JSON text, `id` the task id, `b` the bucket that pays for it
 * (quota and bytes; it lives in the scope's shard), `n` its bytes (`r`, `er`, `ir` and `m`).
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

import { COMMON, CREATE_PRELUDE, GET_PRELUDE } from "./task-lua-helpers.js";

/**
 * create(task): the bucket's quota first (its own oldest finished task, an expired one before any
 * other, makes room; a bucket whose tasks all run is refused), then at the shard's cap one task of
 * the largest bucket is dropped (its oldest finished task, else its oldest running task, returned
 * and announced as `evicted`), then the write. The owner's lease is set in the same script, so a
 * task is never written under a lease that does not exist.
 *
 * KEYS: 1 tk:<pair>, 2 ts:<scope>, 3 tb:<bucket>, 4 tall, 5 trun:<node>, 6 tnodes, 7 tlease:<node>.
 * ARGV: 1..7 context, 8 scope, 9 id, 10 scope JSON, 11 ttlMs, 12 pollIntervalMs,
 * 13 message mode ('s' or 'c'), 14 message, 15 maxPerScope (-1 = off), 16 max (-1 = off),
 * 17 bucket, 18 createdAt ('' = now; a task written again after Redis lost it keeps its own).
 * Returns `{ code, createdAt, evicted scope JSON, evicted id, epoch }`: code 1 created, 0 the
 * bucket is at its quota with every task running, 3 the id exists already.
 */
export const TASK_CREATE_SCRIPT = `${CREATE_PRELUDE}
local base = ARGV[1]
local ctx = context(ARGV)
local scope, id, bucket = ARGV[8], ARGV[9], ARGV[17]
local maxPer, max = tonumber(ARGV[15]), tonumber(ARGV[16])
if redis.call('EXISTS', KEYS[1]) == 1 then return { 3, 0, '', '' } end
if maxPer >= 0 and redis.call('ZCARD', KEYS[3]) >= maxPer then
  -- The bucket's finished tasks in the order they finished (at most its quota): the first expired
  -- one, else the first one.
  local finished = redis.call('ZRANGE', base .. ':tbd:' .. bucket, 0, -1)
  if #finished == 0 then return { 0, 0, '', '' } end
  local victim = finished[1]
  for _, m in ipairs(finished) do
    local e = redis.call('HGET', base .. ':tk:' .. m, 'e')
    if e and ctx.now >= num(e) then
      victim = m
      break
    end
  end
  removeTask(base, victim)
end
local evictedScope, evictedId = '', ''
if max >= 0 and redis.call('SCARD', KEYS[4]) >= max then
  local gone = evictLargest(base, base .. ':tbuckets', '')
  if gone and gone ~= true then evictedScope, evictedId = gone[1], gone[2] end
end
local now = ctx.now
if ARGV[18] ~= '' then now = tonumber(ARGV[18]) end
local member = pairMember(scope, id)
-- The hash is new: its bytes are its status message's, if it has one.
local bytes = 0
if ARGV[13] == 's' then bytes = string.len(ARGV[14]) end
redis.call('HSET', KEYS[1], 's', 'working', 'c', int(now), 'u', int(now), 'l', ARGV[11], 'p', ARGV[12],
  'o', ctx.node, 'sc', scope, 'j', ARGV[10], 'id', id, 'b', bucket, 'n', bytes)
if ARGV[13] == 's' then redis.call('HSET', KEYS[1], 'm', ARGV[14]) end
local seq = redis.call('INCR', base .. ':tseq')
redis.call('ZADD', KEYS[2], seq, id)
redis.call('ZADD', KEYS[3], seq, member)
redis.call('SADD', KEYS[4], member)
redis.call('SADD', KEYS[5], member)
redis.call('SADD', KEYS[6], ctx.node)
redis.call('SET', KEYS[7], ctx.node, 'PX', ARGV[7])
syncBucket(base, bucket)
if bytes > 0 then
  redis.call('ZINCRBY', base .. ':tbbytes', bytes, bucket)
  redis.call('INCRBY', base .. ':tbytes', bytes)
end
if evictedId ~= '' then announce(ctx.channel, 'evicted', ctx.node, evictedId, evictedScope) end
return { 1, int(now), evictedScope, evictedId, epochOf(base) }
`;

/**
 * get(scope, id), the check half: whether the task exists in this scope and has not expired,
 * failing it first when its owner's lease is gone (settle). The store sends it with a plain
 * \`HGETALL\` of the task in one pipeline (task-commands.ts \`get\`): a task's fields come back as
 * Redis encodes them, not converted into a Lua table and back, which costs Redis several times
 * what the check does. KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member.
 * Returns false when there is no such live task, 1 when it is live and the check changed nothing
 * (the pipeline's \`HGETALL\` is its answer), or its fields when the check failed it.
 */
export const TASK_GET_SCRIPT = `${GET_PRELUDE}
local ctx = context(ARGV)
local f = redis.call('HMGET', KEYS[1], 's', 'e', 'o')
local status, failed = settle(ARGV[1], KEYS[1], ARGV[8], ctx, f[1], f[2], f[3])
if not status then return false end
if failed then return redis.call('HGETALL', KEYS[1]) end
return 1
`;

/**
 * update(scope, id, change): a check-and-set on a live, non-terminal task, then the byte budgets
 * (fitBytes: the bucket's own finished tasks, then the largest buckets'; never this task).
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 status ('' keeps it),
 * 10 message mode (k/c/s), 11 message, 12 input requests mode (k/c/s), 13 input requests,
 * 14 bytes per bucket (-1 = off), 15 bytes in all (-1 = off), 16 the epoch the writer created the
 * task in ('' = unknown).
 * Returns `{ code, evicted scope JSON, evicted id, … }`: code 1 when written, 0 when the task is
 * unknown, expired or terminal, -2 when it is gone and the shard's epoch is not the writer's
 * (Redis lost it); then the running tasks dropped for the byte budget (announced).
 */
export const TASK_UPDATE_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local key = KEYS[1]
local status = live(ARGV[1], key, ARGV[8], ctx)
if not status then
  if redis.call('EXISTS', key) == 0 and epochOf(ARGV[1]) ~= ARGV[16] then return { -2 } end
  return { 0 }
end
if TERMINAL[status] then return { 0 } end
if ARGV[9] ~= '' then redis.call('HSET', key, 's', ARGV[9]) end
setOptional(key, 'm', ARGV[10], ARGV[11])
setOptional(key, 'ir', ARGV[12], ARGV[13])
redis.call('HSET', key, 'u', int(stamp(key, ctx.now)))
recount(ARGV[1], key)
local out = { 1 }
local bucket = redis.call('HGET', key, 'b')
if bucket then
  local gone = {}
  fitBytes(ARGV[1], bucket, ARGV[8], tonumber(ARGV[14]), tonumber(ARGV[15]), gone)
  for i = 1, #gone, 2 do
    announce(ctx.channel, 'evicted', ctx.node, gone[i + 1], gone[i])
    out[#out + 1] = gone[i]
    out[#out + 1] = gone[i + 1]
  end
end
return out
`;

/**
 * finish(scope, id, outcome): makes a live, running task terminal with its result or error. The
 * bucket's byte budget first: its own oldest finished tasks make room; a result that does not fit
 * beside what the bucket still runs is refused. Then the shard's budget, largest buckets first.
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 status, 10 'r' (result) or 'er'
 * (error), 11 the JSON text, 12 message mode (k/c/s), 13 message, 14 bytes per bucket (-1 = off),
 * 15 bytes in all (-1 = off), 16 the epoch the writer created the task in ('' = unknown).
 * Returns `{ code, evicted scope JSON, evicted id, … }`: code 1 when finished, 0 when the task is
 * unknown, expired or terminal already, 2 when it does not fit the bucket's budget (nothing
 * written), -2 when it is gone and the shard's epoch is not the writer's (Redis lost it).
 */
export const TASK_FINISH_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local base, key, member = ARGV[1], KEYS[1], ARGV[8]
-- Every field the finish reads, in one call: status, expiry, owner (live), bucket, bytes, message,
-- and the result and error fields (a running task has neither; counted if one is there).
local f = redis.call('HMGET', key, 's', 'e', 'o', 'b', 'n', 'm', 'r', 'er')
local status = settle(base, key, member, ctx, f[1], f[2], f[3])
if not status then
  if redis.call('EXISTS', key) == 0 and epochOf(base) ~= ARGV[16] then return { -2 } end
  return { 0 }
end
if TERMINAL[status] then return { 0 } end
local maxBucket, maxAll = tonumber(ARGV[14]), tonumber(ARGV[15])
local bucket, before = f[4], num(f[5])
local message = f[6]
if ARGV[12] == 's' then message = ARGV[13] elseif ARGV[12] == 'c' then message = false end
local after = string.len(ARGV[11])
if message then after = after + string.len(message) end
if bucket and maxBucket >= 0 then
  while tonumber(redis.call('ZSCORE', base .. ':tbbytes', bucket) or 0) - before + after > maxBucket do
    local oldest = firstOther(base .. ':tbd:' .. bucket, member)
    if not oldest then return { 2 } end
    removeTask(base, oldest)
  end
end
-- Its bytes once finished: the outcome, the message, the other of result and error if one is
-- there; its input requests go (terminate removes them).
local other = f[8]
if ARGV[10] == 'er' then other = f[7] end
local n = after
if other then n = n + string.len(other) end
if ARGV[12] == 's' then
  redis.call('HSET', key, ARGV[10], ARGV[11], 'm', ARGV[13], 'n', n)
else
  redis.call('HSET', key, ARGV[10], ARGV[11], 'n', n)
  if ARGV[12] == 'c' then redis.call('HDEL', key, 'm') end
end
local out = { 1 }
if bucket then
  if n ~= before then
    redis.call('ZINCRBY', base .. ':tbbytes', n - before, bucket)
    redis.call('INCRBY', base .. ':tbytes', n - before)
  end
  local gone = {}
  -- The bucket's own budget was made room for above (for all but a result or error that was
  -- there already): only the shard's is left to keep.
  local bucketBound = -1
  if other then bucketBound = maxBucket end
  fitBytes(base, bucket, member, bucketBound, maxAll, gone)
  for i = 1, #gone, 2 do
    announce(ctx.channel, 'evicted', ctx.node, gone[i + 1], gone[i])
    out[#out + 1] = gone[i]
    out[#out + 1] = gone[i + 1]
  end
end
terminate(base, key, member, ARGV[9], ctx, true)
return out
`;

/**
 * cancel(scope, id, message): makes a live, running task `cancelled` (before the caller answers).
 * KEYS: 1 tk:<pair>. ARGV: 1..7 context, 8 pair member, 9 message mode (c/s), 10 message.
 * Returns `{ code, fields… }`: 1 cancelled now, 0 terminal already (fields as they are), -1 unknown.
 */
export const TASK_CANCEL_SCRIPT = `${COMMON}
local ctx = context(ARGV)
local key = KEYS[1]
local status = live(ARGV[1], key, ARGV[8], ctx)
if not status then return { -1 } end
local code = 0
if not TERMINAL[status] then
  setOptional(key, 'm', ARGV[9], ARGV[10])
  terminate(ARGV[1], key, ARGV[8], 'cancelled', ctx, false)
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
  local status = live(base, key, member, ctx)
  if status and not TERMINAL[status] then
    setOptional(key, 'm', ARGV[9], ARGV[10])
    terminate(base, key, member, 'cancelled', ctx, false)
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
judging(ARGV[3], nowMs(ARGV[4]), tonumber(ARGV[2]), true)
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

/**
 * Counts a shard's tasks by status, for the `conduit_mcp_tasks_by_status` gauge. Read-only.
 * KEYS: 1 tall. ARGV: 1 the shard's base, 2 the most tasks it walks (beyond, false: a gauge must
 * not hold Redis for long). Returns `[status, count, ...]`.
 */
export const TASK_COUNT_BY_STATUS_SCRIPT = `
if redis.call('SCARD', KEYS[1]) > tonumber(ARGV[2]) then return false end
local counts, out = {}, {}
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local s = redis.call('HGET', ARGV[1] .. ':tk:' .. m, 's')
  if s then counts[s] = (counts[s] or 0) + 1 end
end
for s, n in pairs(counts) do
  out[#out + 1] = s
  out[#out + 1] = n
end
return out
`;
