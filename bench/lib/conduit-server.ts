/**
 * Benchmark target: conduit-mcp's server with the benchmark definitions (bench/lib/
 * conduit-definitions.ts: the CLI's zod-validated `echo` tool and `review` prompt, one Markdown
 * resource), all options at their documented defaults: stateless, cancellation registry on the
 * memory store, no metrics. `BENCH_CONDUIT_BUILD=dist` runs the compiled build.
 * Run as a child process by bench/lib/http-bench.ts: `node --import tsx bench/lib/conduit-server.ts`.
 */
import { conduitTarget } from "./conduit-definitions.js";
import { announce } from "./listening.js";

const { lib, definitions } = await conduitTarget();
const server = lib.createMcpServer({ ...definitions });
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
