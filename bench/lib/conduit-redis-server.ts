/**
 * Benchmark target: conduit-mcp as bench/lib/conduit-server.ts (same definitions, defaults
 * otherwise) but with its cancellation registry on the Redis store, pointed at `BENCH_REDIS_URL`
 * (a private redis-server the benchmark starts). Run as a child process: `BENCH_REDIS_URL=redis://…
 * node --import tsx bench/lib/conduit-redis-server.ts`.
 */
import { CancellationRegistry } from "../../src/cancellation/index.js";
import { RedisCancellationStore } from "../../src/redis/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { BENCH_DEFINITIONS } from "./conduit-definitions.js";
import { announce } from "./listening.js";

const redis = process.env.BENCH_REDIS_URL;
if (redis === undefined || redis === "") throw new Error("BENCH_REDIS_URL is not set");
const store = new RedisCancellationStore({ redis });
await store.ready(2_000);
const server = createMcpServer({
  ...BENCH_DEFINITIONS,
  registry: new CancellationRegistry({ store }),
});
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
