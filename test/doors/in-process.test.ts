/**
 * The door suite through the testing helper: the official clients drive `server.fetch`
 * in-process (`inProcessFetch` as their transport's `fetch`), no socket anywhere.
 */
import { createMcpServer, inProcessFetch } from "../../src/index.js";
import { doorSuite, TENANT_TOKENS } from "./door-suite.js";
import { doorTools } from "./fixtures/door-tools.js";

doorSuite("in-process fetch (testing helper)", async () => {
  const server = createMcpServer({ tools: doorTools, auth: { tokens: TENANT_TOKENS } });
  return {
    target: {
      kind: "http",
      url: new URL("http://in-process.test/mcp"),
      fetch: inProcessFetch(server),
    },
    close: () => server.close(),
  };
});
