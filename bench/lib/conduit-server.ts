/**
 * Benchmark target: conduit-mcp's server with the benchmark definitions (bench/lib/
 * conduit-definitions.ts: the CLI's zod-validated `echo` tool and `review` prompt, one Markdown
 * resource), all options at their documented defaults: stateless, cancellation registry on the
 * memory store, no metrics.
 * Run as a child process by bench/lib/http-bench.ts: `node --import tsx bench/lib/conduit-server.ts`.
 */
import { createMcpServer } from "../../src/server/index.js";
import { BENCH_DEFINITIONS } from "./conduit-definitions.js";
import { announce } from "./listening.js";

const server = createMcpServer({ ...BENCH_DEFINITIONS });
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
