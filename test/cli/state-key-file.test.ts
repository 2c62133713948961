/**
 * `conduit-mcp serve --state-key-file PATH` (docs/asking-the-client.md; `--help`): two CLI
 * processes given the same file resume each other's input-required flows — the demo's `confirm`
 * asks on the first node and acts on the second — while a process with its own random key refuses
 * the state; the file's problems are usage errors naming the line, never the key.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";
import { serveOptions } from "../../src/cli/serve.js";
import { type CliProcess, startCli } from "./cli-process.js";

const dir = mkdtempSync(join(tmpdir(), "conduit-state-keys-"));
const KEY_FILE = join(dir, "keys");
const KEY = "a shared key of at least 32 bytes, newest";
writeFileSync(KEY_FILE, `# newest first\n${KEY}\n\nan older key still accepted, 32+ bytes\n`);

/** One 2026-07-28 tools/call of the demo's `confirm`. */
async function confirm(url: string, id: number, extra: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "confirm",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "confirm",
        arguments: { action: "rename the file" },
        ...extra,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        },
      },
    }),
  });
  return (await response.json()) as {
    result?: { resultType: string; requestState?: string; content?: { text: string }[] };
    error?: { code: number; message: string };
  };
}

describe("--state-key-file", () => {
  let nodeA: CliProcess;
  let nodeB: CliProcess;
  let loner: CliProcess;

  before(async () => {
    [nodeA, nodeB, loner] = await Promise.all([
      startCli(["serve", "--port", "0", "--state-key-file", KEY_FILE]),
      startCli(["serve", "--port", "0", "--state-key-file", KEY_FILE]),
      startCli(["serve", "--port", "0"]),
    ]);
  });

  after(async () => {
    await Promise.all([nodeA?.kill(), nodeB?.kill(), loner?.kill()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("two processes with the same file: confirm asks on one, acts on the other", async () => {
    const first = await confirm(nodeA.url, 1);
    assert.equal(first.result?.resultType, "input_required");
    const answer = { confirm: { action: "accept", content: { confirm: true } } };
    const retry = await confirm(nodeB.url, 2, {
      requestState: first.result?.requestState,
      inputResponses: answer,
    });
    assert.deepEqual(retry.result?.content, [{ type: "text", text: "Done: rename the file" }]);
    const refused = await confirm(loner.url, 3, {
      requestState: first.result?.requestState,
      inputResponses: answer,
    });
    assert.equal(refused.error?.code, -32602, "a process without the key cannot open it");
  });

  it("parses newest first, skips blanks and comments; serveOptions passes the keys", () => {
    const parsed = parseCli(["serve", "--state-key-file", KEY_FILE]);
    assert.ok(parsed.ok);
    const command = parsed.command as ServeCommand;
    assert.deepEqual(command.stateKeys, [KEY, "an older key still accepted, 32+ bytes"]);
    assert.deepEqual(serveOptions(command).inputRequired?.keys, command.stateKeys);
  });

  it("refuses a short key (naming the line, not the key), an empty file and a missing one", () => {
    const short = join(dir, "short");
    writeFileSync(short, `${KEY}\ntoo-short-secret\n`);
    const shortParse = parseCli(["serve", "--state-key-file", short]);
    assert.equal(shortParse.ok, false);
    const message = (shortParse as { message: string }).message;
    assert.match(message, /line 2: a key needs at least 32 bytes/);
    assert.ok(!message.includes("too-short-secret"));
    const empty = join(dir, "empty");
    writeFileSync(empty, "# nothing\n\n");
    assert.match(
      (parseCli(["serve", "--state-key-file", empty]) as { message: string }).message,
      /has no key/,
    );
    assert.match(
      (parseCli(["serve", "--state-key-file", join(dir, "absent")]) as { message: string }).message,
      /cannot be read \(ENOENT\)/,
    );
  });
});
