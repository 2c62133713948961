import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";

import { InvalidOptionError } from "../../src/errors.js";
import type { ToolContext } from "../../src/protocol/calls/tool-context.js";
import { definePrompt } from "../../src/protocol/prompts/define-prompt.js";
import { noAsking } from "../helpers/no-asking.js";
import { sync } from "../helpers/sync-check.js";

const ctx: ToolContext = {
  signal: new AbortController().signal,
  cancelled: () => false,
  requestId: 1,
  scope: "ip:127.0.0.1",
  principal: null,
  request: null,
  progress: async () => {},
  log: async () => {},
  ...noAsking,
};
const who = { principal: null, scope: "ip:127.0.0.1" };

const review = definePrompt({
  name: "review",
  title: "Code review",
  description: "Asks for a review",
  arguments: z.object({
    code: z.string().describe("The code to review"),
    language: z.string().optional().meta({ title: "Language", description: "Its language" }),
    tone: z.enum(["kind", "blunt"]).default("kind"),
  }),
  complete: {
    language: (typed, context) =>
      ["go", "python", "typescript"].filter(
        (l) => l.startsWith(typed) && context.arguments.tone !== "x",
      ),
  },
  get: ({ code, language, tone }) => `Review this ${language ?? "code"} (${tone}):\n${code}`,
});

describe("definePrompt", () => {
  test("publishes name, title, description and the arguments list from the zod fields", () => {
    assert.deepEqual(review.descriptor, {
      name: "review",
      title: "Code review",
      description: "Asks for a review",
      arguments: [
        { name: "code", description: "The code to review", required: true },
        { name: "language", title: "Language", description: "Its language", required: false },
        { name: "tone", required: false },
      ],
    });
    assert.ok(Object.isFrozen(review.descriptor));
    const bare = definePrompt({ name: "bare", get: () => "hi" });
    assert.deepEqual(bare.descriptor, { name: "bare" }, "no arguments key when there are none");
  });

  test("validates arguments with issue details and applies defaults", () => {
    assert.deepEqual(sync(review.checkArguments({ code: "x" })), {
      ok: true,
      args: { code: "x", tone: "kind" },
    });
    const missing = sync(review.checkArguments({}));
    assert.equal(missing.ok, false);
    if (!missing.ok)
      assert.deepEqual(
        missing.issues.map((i) => i.path),
        ["code"],
      );
    const wrongType = sync(review.checkArguments({ code: 42, tone: "rude" }));
    assert.equal(wrongType.ok, false);
    if (!wrongType.ok)
      assert.deepEqual(wrongType.issues.map((i) => i.path).sort(), ["code", "tone"]);
    assert.equal(sync(review.checkArguments(null)).ok, false, "null is not an arguments object");
    assert.equal(sync(review.checkArguments(["x"])).ok, false);
    const bare = definePrompt({ name: "bare", get: () => "hi" });
    assert.deepEqual(sync(bare.checkArguments(undefined)), { ok: true, args: {} });
    assert.equal(sync(bare.checkArguments("x")).ok, false);
  });

  test("issues are bounded and reflected (no control characters echoed)", () => {
    const shape: Record<string, z.ZodString> = {};
    for (let i = 0; i < 40; i++) shape[`f${i}`] = z.string();
    const wide = definePrompt({ name: "wide", arguments: z.object(shape), get: () => "" });
    const check = sync(wide.checkArguments({}));
    assert.equal(check.ok, false);
    if (!check.ok) assert.equal(check.issues.length, 20);
    const strict = definePrompt({
      name: "strict",
      arguments: z.strictObject({ a: z.string() }),
      get: () => "",
    });
    const forged = sync(strict.checkArguments({ a: "x", "evil\r\nkey": "y" }));
    assert.equal(forged.ok, false);
    if (!forged.ok) assert.doesNotMatch(JSON.stringify(forged.issues), /\\r|\\n/);
  });

  test("a string result is one user text message; the prompt's description is added", async () => {
    const check = sync(review.checkArguments({ code: "f()", language: "go" }));
    assert.ok(check.ok);
    const value = await review.get(check.args, ctx);
    assert.deepEqual(review.toResult(value), {
      ok: true,
      result: {
        description: "Asks for a review",
        messages: [
          { role: "user", content: { type: "text", text: "Review this go (kind):\nf()" } },
        ],
      },
    });
  });

  test("an array of messages and a whole result are accepted and copied clean", () => {
    const prompt = definePrompt({ name: "p", get: () => [] });
    const messages = [
      { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/png" } },
      { role: "assistant", content: { type: "text", text: "seen", internal: true } },
    ];
    assert.deepEqual(prompt.toResult(messages), {
      ok: true,
      result: {
        messages: [
          { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/png" } },
          { role: "assistant", content: { type: "text", text: "seen" } },
        ],
      },
    });
    assert.deepEqual(
      prompt.toResult({
        description: "d",
        messages: [],
        _meta: { k: 1 },
        resultType: "input_required",
      }),
      { ok: true, result: { _meta: { k: 1 }, description: "d", messages: [] } },
    );
  });

  test("invalid results are errors, never sent as is", () => {
    const prompt = definePrompt({ name: "p", get: () => "" });
    assert.deepEqual(prompt.toResult(42), {
      ok: false,
      message: "a prompt must return a string, messages or a GetPromptResult",
    });
    assert.deepEqual(prompt.toResult({ messages: "hi" }), {
      ok: false,
      message: "result.messages must be an array",
    });
    assert.deepEqual(prompt.toResult({ description: 1, messages: [] }), {
      ok: false,
      message: "result.description must be a string",
    });
    assert.deepEqual(
      prompt.toResult([
        { role: "user", content: { type: "audio", data: "@@", mimeType: "audio/wav" } },
      ]),
      { ok: false, message: "messages[0].content.data must be base64 (RFC 4648, padded)" },
    );
    assert.deepEqual(
      prompt.toResult([
        { role: "user", content: { type: "resource", resource: { uri: "a:b", text: "t" } } },
      ]),
      {
        ok: false,
        message: 'messages[0].content.resource.mimeType must be a MIME type such as "image/png"',
      },
    );
  });

  test("get runs the handler with the context; a throwing handler rejects", async () => {
    let seen: ToolContext | undefined;
    const prompt = definePrompt({
      name: "ctx",
      get: (_args, c) => {
        seen = c;
        return "x";
      },
    });
    assert.equal(await prompt.get({}, ctx), "x");
    assert.equal(seen, ctx);
    const throwing = definePrompt({
      name: "boom",
      get: () => {
        throw new Error("secret");
      },
    });
    await assert.rejects(throwing.get({}, ctx), /secret/, "a sync throw becomes a rejection");
  });

  test("complete: per argument, with the other declared arguments as context", async () => {
    assert.deepEqual(await review.complete("language", "py", {}, who), ["python"]);
    assert.deepEqual(await review.complete("language", "", { tone: "x" }, who), []);
    assert.equal(review.complete("code", "", {}, who), null, "no completer for code");
    assert.equal(review.complete("nope", "", {}, who), null);
    let context: unknown;
    const spy = definePrompt({
      name: "spy",
      arguments: z.object({ a: z.string(), b: z.string() }),
      complete: {
        a: (_v, c) => {
          context = c;
          return [];
        },
      },
      get: () => "",
    });
    await spy.complete("a", "", { a: "self", b: "other", c: "undeclared", d: 5 } as never, who);
    assert.deepEqual(context, { arguments: { b: "other" } });
    const bad = definePrompt({
      name: "bad",
      arguments: z.object({ a: z.string() }),
      complete: { a: () => [1] as never },
      get: () => "",
    });
    await assert.rejects(bad.complete("a", "", {}, who) as Promise<unknown>, TypeError);
  });

  test("bad definitions are refused at definition, naming the field", () => {
    const cases: [unknown, RegExp][] = [
      [{ name: "", get: () => "" }, /prompt\.name/],
      [{ name: "a\nb", get: () => "" }, /prompt\.name/],
      [{ name: "x".repeat(129), get: () => "" }, /prompt\.name/],
      [{ name: "p" }, /prompt p: get/],
      [{ name: "p", arguments: { code: "string" }, get: () => "" }, /Standard Schema/],
      [{ name: "p", arguments: z.object({ n: z.number() }), get: () => "" }, /arguments\.n/],
      [
        { name: "p", arguments: z.object({ a: z.string().nullable() }), get: () => "" },
        /arguments\.a/,
      ],
      [
        {
          name: "p",
          arguments: z.object({ a: z.string() }),
          complete: { b: () => [] },
          get: () => "",
        },
        /complete\.b/,
      ],
      [
        { name: "p", arguments: z.object({ a: z.string() }), complete: { a: "x" }, get: () => "" },
        /complete\.a/,
      ],
      [{ name: "p", title: 3, get: () => "" }, /title/],
    ];
    for (const [definition, message] of cases) {
      assert.throws(
        () => definePrompt(definition as never),
        (error: unknown) => error instanceof InvalidOptionError && message.test(error.message),
        JSON.stringify(definition, (_k, v) => (typeof v === "function" ? "fn" : v)),
      );
    }
  });
});
