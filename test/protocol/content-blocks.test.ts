import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  checkContentBlock,
  checkPromptMessage,
  isBase64,
  isMediaType,
} from "../../src/protocol/wire/content-blocks.js";

const LAX = { embeddedMimeTypeRequired: false };
const STRICT = { embeddedMimeTypeRequired: true };
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

function problemOf(value: unknown, rules = LAX): string {
  const check = checkContentBlock(value, "content", rules);
  assert.equal(check.ok, false, `expected ${JSON.stringify(value)} to be refused`);
  return check.ok ? "" : check.message;
}

describe("content blocks (MCP 2025-11-25 schema, ContentBlock)", () => {
  test("base64 and media type predicates", () => {
    assert.equal(isBase64("SGVsbG8="), true);
    assert.equal(isBase64(""), true, "zero bytes are valid base64");
    assert.equal(isBase64("SGVsbG8"), false, "unpadded");
    assert.equal(isBase64("SGVs!!!bG8="), false, "outside the alphabet");
    assert.equal(isBase64("SGVsbG8=\n"), false, "no line breaks");
    assert.equal(isMediaType("image/png"), true);
    assert.equal(isMediaType("text/plain; charset=utf-8"), true);
    assert.equal(isMediaType("png"), false);
    assert.equal(isMediaType("image/png\r\nx: y"), false);
  });

  test("each valid kind is copied with the schema's fields only", () => {
    const text = checkContentBlock(
      { type: "text", text: "hi", annotations: { audience: ["user"], priority: 0.5 }, extra: 1 },
      "content",
      LAX,
    );
    assert.deepEqual(text, {
      ok: true,
      block: { type: "text", text: "hi", annotations: { audience: ["user"], priority: 0.5 } },
    });
    for (const type of ["image", "audio"]) {
      assert.deepEqual(
        checkContentBlock({ type, data: PNG, mimeType: "image/png", secret: "x" }, "c", LAX),
        { ok: true, block: { type, data: PNG, mimeType: "image/png" } },
      );
    }
    assert.deepEqual(
      checkContentBlock(
        {
          type: "resource_link",
          uri: "file:///a.rs",
          name: "a.rs",
          mimeType: "text/x-rust",
          size: 3,
        },
        "c",
        LAX,
      ),
      {
        ok: true,
        block: {
          type: "resource_link",
          size: 3,
          uri: "file:///a.rs",
          name: "a.rs",
          mimeType: "text/x-rust",
        },
      },
    );
    assert.deepEqual(
      checkContentBlock(
        {
          type: "resource",
          resource: { uri: "test://x", mimeType: "text/plain", text: "t", y: 2 },
        },
        "c",
        STRICT,
      ),
      {
        ok: true,
        block: {
          type: "resource",
          resource: { uri: "test://x", mimeType: "text/plain", text: "t" },
        },
      },
    );
    assert.deepEqual(
      checkContentBlock({ type: "resource", resource: { uri: "test://b", blob: PNG } }, "c", LAX),
      { ok: true, block: { type: "resource", resource: { uri: "test://b", blob: PNG } } },
    );
  });

  test("invalid blocks are refused with the path of what is wrong", () => {
    assert.match(problemOf("text"), /content must be a content block object/);
    assert.match(problemOf({ type: "html", html: "<b>" }), /content\.type must be one of/);
    assert.match(problemOf({ type: "text", text: 3 }), /content\.text must be a string/);
    assert.match(
      problemOf({ type: "image", data: "not base64!", mimeType: "image/png" }),
      /content\.data must be base64/,
    );
    assert.match(
      problemOf({ type: "audio", data: "AAAA" }),
      /content\.mimeType must be a MIME type/,
    );
    assert.match(problemOf({ type: "image", data: PNG, mimeType: "png" }), /mimeType/);
    assert.match(
      problemOf({ type: "resource_link", uri: "no scheme", name: "n" }),
      /content\.uri must be a URI/,
    );
    assert.match(
      problemOf({ type: "resource_link", uri: "file:///x" }),
      /content\.name must be a string/,
    );
    assert.match(problemOf({ type: "resource_link", uri: "a:b", name: "n", size: -1 }), /size/);
    assert.match(
      problemOf({ type: "resource", resource: { uri: "a:b" } }),
      /exactly one of text, blob/,
    );
    assert.match(
      problemOf({ type: "resource", resource: { uri: "a:b", text: "t", blob: "AAAA" } }),
      /exactly one of text, blob/,
    );
    assert.match(
      problemOf({ type: "resource", resource: { uri: "a:b", blob: "%%%%" } }),
      /resource\.blob must be base64/,
    );
    assert.match(
      problemOf({ type: "resource", resource: { uri: "a:b", text: "t" } }, STRICT),
      /content\.resource\.mimeType/,
      "prompts require the embedded resource's MIME type",
    );
    assert.match(problemOf({ type: "text", text: "t", annotations: { priority: 2 } }), /priority/);
    assert.match(
      problemOf({ type: "text", text: "t", annotations: { audience: ["system"] } }),
      /audience/,
    );
    assert.match(problemOf({ type: "text", text: "t", _meta: [] }), /_meta must be an object/);
  });

  test("prompt messages need a known role and one content block", () => {
    assert.equal(
      checkPromptMessage({ role: "assistant", content: { type: "text", text: "ok" } }, "m", STRICT)
        .ok,
      true,
    );
    const badRole = checkPromptMessage(
      { role: "system", content: { type: "text", text: "x" } },
      "messages[1]",
      STRICT,
    );
    assert.deepEqual(badRole, {
      ok: false,
      message: 'messages[1].role must be "user" or "assistant"',
    });
    const array = checkPromptMessage(
      { role: "user", content: [{ type: "text", text: "x" }] },
      "m",
      STRICT,
    );
    assert.equal(array.ok, false, "content is a single block, not an array");
  });
});
