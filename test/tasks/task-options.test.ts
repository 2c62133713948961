/**
 * The `tasks` option of createMcpServer: checked at construction (docs/server-options.md).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { createMcpServer } from "../../src/server/index.js";

describe("tasks option", () => {
  test("bad values are refused at construction, naming the option", () => {
    const bad: unknown[] = [
      { store: {} },
      { store: { create: () => null } },
      { maxTasksPerScope: 0 },
      { maxTasks: -1 },
      { maxResultBytes: 1.5 },
      { defaultTtlMs: 0 },
      { maxTtlMs: Number.NaN },
      { pollIntervalMs: 0 },
      { sweepIntervalMs: 2 ** 31 },
      "yes",
    ];
    for (const tasks of bad) {
      assert.throws(
        () => createMcpServer({ tools: [], tasks: tasks as never }),
        InvalidOptionError,
        JSON.stringify(tasks),
      );
    }
  });

  test("false serves no tasks: no capability, tasks/get unknown", async () => {
    const server = createMcpServer({ tools: [], tasks: false });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const post = (body: unknown) =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify(body),
        }).then(
          (r) =>
            r.json() as Promise<{ result?: { capabilities?: unknown }; error?: { code: number } }>,
        );
      const init = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      });
      const capabilities = init.result?.capabilities as Record<string, unknown> | undefined;
      assert.ok(capabilities !== undefined);
      assert.equal(capabilities.tasks, undefined);
      const get = await post({
        jsonrpc: "2.0",
        id: 2,
        method: "tasks/get",
        params: { taskId: "x" },
      });
      assert.equal(get.error?.code, -32601);
    } finally {
      await server.close();
    }
  });
});
