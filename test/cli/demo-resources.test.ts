/**
 * The demo's resources, resource template and prompt, at unit level (the HTTP path with the
 * official clients: test/e2e/official-clients.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { demoPrompts, REVIEW_LANGUAGES, reviewPrompt } from "../../src/cli/demo-prompts.js";
import {
  demoResources,
  demoResourceTemplates,
  LOGO_PNG_BASE64,
  logoResource,
  readmeResource,
  sleepTemplate,
} from "../../src/cli/demo-resources.js";
import { MAX_DEMO_MS } from "../../src/cli/demo-tools.js";
import { InvalidParamsError } from "../../src/errors.js";
import type { ToolContext } from "../../src/protocol/calls/tool-context.js";
import { noAsking } from "../helpers/no-asking.js";
import { sync } from "../helpers/sync-check.js";

function context(signal = new AbortController().signal): ToolContext {
  return {
    signal,
    cancelled: () => signal.aborted,
    requestId: 1,
    scope: "ip:127.0.0.1",
    principal: null,
    request: null,
    progress: async () => {},
    log: async () => {},
    ...noAsking,
  };
}

const who = { principal: null, scope: "ip:127.0.0.1" };

describe("demo resources", () => {
  it("lists demo://logo.png, demo://readme and ui://demo/dice.html, and the template demo://sleep/{ms}", () => {
    assert.deepEqual(
      demoResources.map((r) => r.descriptor.uri),
      ["demo://logo.png", "demo://readme", "ui://demo/dice.html"],
    );
    assert.equal(readmeResource.descriptor.mimeType, "text/markdown");
    assert.equal(logoResource.descriptor.mimeType, "image/png");
    assert.deepEqual(
      demoResourceTemplates.map((t) => t.descriptor.uriTemplate),
      ["demo://sleep/{ms}"],
    );
  });

  it("demo://readme is Markdown text whose size is published", async () => {
    const text = await readmeResource.read({ uri: "demo://readme" }, context());
    assert.equal(typeof text, "string");
    assert.match(text as string, /^# conduit-mcp demo server/);
    assert.equal(readmeResource.descriptor.size, Buffer.byteLength(text as string));
  });

  it("demo://logo.png is a real 16×16 PNG served as a base64 blob", async () => {
    const value = (await logoResource.read({ uri: "demo://logo.png" }, context())) as {
      blob: string;
    };
    assert.equal(value.blob, LOGO_PNG_BASE64);
    const bytes = Buffer.from(value.blob, "base64");
    assert.equal(bytes.toString("base64"), value.blob, "canonical base64");
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(bytes.toString("ascii", 12, 16), "IHDR");
    assert.equal(bytes.readUInt32BE(16), 16, "width");
    assert.equal(bytes.readUInt32BE(20), 16, "height");
    assert.equal(bytes.toString("ascii", bytes.length - 8, bytes.length - 4), "IEND");
    assert.equal(logoResource.descriptor.size, bytes.length);
  });

  it("demo://sleep/{ms} waits ms, and a cancel ends the wait at once", async () => {
    const read = async (ms: string, signal?: AbortSignal): Promise<unknown> =>
      sleepTemplate.read({ uri: `demo://sleep/${ms}`, variables: { ms } }, context(signal));
    assert.equal(await read("20"), "slept 20 ms");
    const controller = new AbortController();
    const started = performance.now();
    const pending = read("60000", controller.signal);
    setTimeout(() => controller.abort(new Error("cancelled")), 20);
    await assert.rejects(pending);
    assert.ok(performance.now() - started < 2_000, "the wait ended with the cancel");
  });

  it("demo://sleep/{ms} refuses anything but an integer 0..600000", async () => {
    for (const ms of ["-1", "1.5", "abc", "", "0600", String(MAX_DEMO_MS + 1), "9".repeat(400)]) {
      await assert.rejects(
        Promise.resolve().then(() =>
          sleepTemplate.read({ uri: `demo://sleep/${ms}`, variables: { ms } }, context()),
        ),
        InvalidParamsError,
        ms,
      );
    }
  });

  it("demo://sleep/{ms} completes ms from a few durations", async () => {
    const completer = sleepTemplate.completer("ms");
    assert.ok(completer !== null);
    assert.deepEqual(await completer("10", { arguments: {} }, who), ["100", "1000", "10000"]);
    assert.deepEqual(await completer("6", { arguments: {} }, who), ["60000", "600000"]);
  });
});

describe("demo prompt review", () => {
  it("publishes code (required) and language (optional)", () => {
    assert.deepEqual(
      demoPrompts.map((p) => p.name),
      ["review"],
    );
    assert.deepEqual(reviewPrompt.descriptor.arguments, [
      { name: "code", description: "The code to review", required: true },
      { name: "language", description: "Its programming language", required: false },
    ]);
  });

  it("builds one user message holding the code", async () => {
    const check = sync(reviewPrompt.checkArguments({ code: "x = 1", language: "python" }));
    assert.ok(check.ok);
    const result = reviewPrompt.toResult(await reviewPrompt.get(check.args, context()));
    assert.ok(result.ok);
    const messages = result.result.messages as Array<{ role: string; content: { text: string } }>;
    assert.equal(messages.length, 1);
    assert.equal(messages[0]?.role, "user");
    assert.match(messages[0]?.content.text ?? "", /this python code[\s\S]*x = 1$/);
    assert.equal(
      sync(reviewPrompt.checkArguments({ language: "go" })).ok,
      false,
      "code is required",
    );
    assert.equal(sync(reviewPrompt.checkArguments({ code: "" })).ok, false, "code is not empty");
  });

  it("completes language by prefix, case-insensitively", async () => {
    assert.deepEqual(await reviewPrompt.complete("language", "ja", {}, who), [
      "java",
      "javascript",
    ]);
    assert.deepEqual(await reviewPrompt.complete("language", "PY", {}, who), ["python"]);
    assert.deepEqual(await reviewPrompt.complete("language", "", {}, who), REVIEW_LANGUAGES);
    assert.equal(reviewPrompt.complete("code", "", {}, who), null, "code has no completer");
  });
});
