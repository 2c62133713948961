/** The door suite through the node:http listener (`server.listen()`). */
import { createMcpServer } from "../../src/index.js";
import { doorSuite, TENANT_TOKENS } from "./door-suite.js";
import { doorTools } from "./fixtures/door-tools.js";

doorSuite("node:http listener", async () => {
  const server = createMcpServer({ tools: doorTools, auth: { tokens: TENANT_TOKENS } });
  const { url } = await server.listen();
  return { target: { kind: "http", url: new URL(url) }, close: () => server.close() };
});
