/**
 * The Lua script of `RedisRateLimitStore` (key layout: redis-rate-limit-store.ts) and the command
 * ioredis defines for it. The script checks and takes every rate of a request at once, with
 * Redis's own clock (`TIME`), so nodes whose clocks disagree still share one budget.
 */
import type { RedisClient } from "../connection/connection.js";

/**
 * KEYS: one hash per rate. ARGV: per rate, capacity, refill per second and TTL (ms). Answers 0
 * after taking one token from every rate, else the ms until each rate that refused holds one
 * again (taking nothing). The same steps as src/rate-limits/token-bucket.ts.
 */
const TAKE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local tokens = {}
local wait = 0
for i = 1, #KEYS do
  local capacity = tonumber(ARGV[i * 3 - 2])
  local refill = tonumber(ARGV[i * 3 - 1])
  local state = redis.call('HMGET', KEYS[i], 't', 'a')
  local held = capacity
  if state[1] and state[2] then
    local elapsed = now - tonumber(state[2])
    if elapsed < 0 then elapsed = 0 end
    held = math.min(capacity, tonumber(state[1]) + elapsed * refill / 1000)
  end
  tokens[i] = held
  if held < 1 then
    local ms = math.ceil((1 - held) * 1000 / refill)
    if ms < 1 then ms = 1 end
    if ms > wait then wait = ms end
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  redis.call('HSET', KEYS[i], 't', tostring(tokens[i] - 1), 'a', tostring(now))
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[i * 3]))
end
return 0
`;

/** The command {@link defineRateLimitScript} adds to the client. */
export interface RateLimitScript {
  conduitMcpRateTakeV1(...args: (string | number)[]): Promise<number>;
}

/** Defines the rate-limit script on the store's command connection. */
export function defineRateLimitScript(client: RedisClient): void {
  client.defineCommand("conduitMcpRateTakeV1", { lua: TAKE });
}
