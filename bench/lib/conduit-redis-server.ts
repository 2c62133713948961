/**
 * Benchmark target: conduit-mcp as bench/lib/conduit-server.ts (same definitions, defaults
 * otherwise, same `BENCH_CONDUIT_BUILD`) but with its cancellation registry on the Redis store,
 * pointed at `BENCH_REDIS_URL` (a private redis-server the benchmark starts). Run as a child
 * process: `BENCH_REDIS_URL=redis://… node --import tsx bench/lib/conduit-redis-server.ts`.
 */
import { conduitTarget } from "./conduit-definitions.js";
import { announce } from "./listening.js";

const url = process.env.BENCH_REDIS_URL;
if (url === undefined || url === "") throw new Error("BENCH_REDIS_URL is not set");
const { lib, redis, definitions } = await conduitTarget();
const { RedisCancellationStore } = await redis();
const store = new RedisCancellationStore({ redis: url });
await store.ready(2_000);
const server = lib.createMcpServer({
  ...definitions,
  registry: new lib.CancellationRegistry({ store }),
});
const listening = await server.listen({ host: "127.0.0.1", port: 0 });
announce(listening.url);
