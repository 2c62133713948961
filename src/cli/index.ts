/**
 * The CLI area: `conduit-mcp serve` argument parsing, the demo tools and the server wiring
 * (docs/architecture.md, "Layers": `cli/` sits on top and nothing imports it). The executable itself is
 * main.ts, which is not re-exported because importing it would start a server.
 *
 * @example
 * ```ts
 * import { demoTools } from "./cli/index.js";
 * createMcpServer({ tools: demoTools });
 * ```
 */
export {
  type CliCommand,
  type CliParse,
  DEFAULT_HOST,
  DEFAULT_PORT,
  parseCli,
  type ServeCommand,
  USAGE,
} from "./args.js";
export {
  CRUNCH_SLICE_MS,
  countTool,
  crunchTool,
  demoTools,
  echoTool,
  MAX_COUNT_STEPS,
  MAX_DEMO_MS,
  MAX_ECHO_CHARS,
  sleepTool,
  stubbornTool,
} from "./demo-tools.js";
export { endpointUrl, type RunningServe, serveOptions, startServe } from "./serve.js";
