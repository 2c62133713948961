/**
 * The door suite through stdio: each official client's `StdioClientTransport` spawns
 * `conduit-mcp serve MODULE --stdio` (from source, through tsx), one process per client, so a
 * tenant is a process. The server process logs what its `wait` calls saw to a file the suite
 * reads (`CONDUIT_DOOR_LOG`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { doorSuite } from "./door-suite.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

doorSuite("stdio (conduit-mcp serve --stdio)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "conduit-door-"));
  const log = join(dir, "records.jsonl");
  return {
    target: {
      kind: "stdio",
      command: process.execPath,
      args: [
        "--import",
        "tsx",
        "src/cli/main.ts",
        "serve",
        "test/doors/fixtures/door-tools.ts",
        "--stdio",
      ],
      cwd: ROOT,
      env: { CONDUIT_DOOR_LOG: log },
      log,
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
});
