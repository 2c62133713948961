import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { checkPrimitiveFields } from "../../src/protocol/index.js";

describe("checkPrimitiveFields", () => {
  test("keeps only the given list-entry fields, copies icons and dedupes scopes", () => {
    const icons = [{ src: "https://example.com/a.png", sizes: ["48x48"], theme: "dark" as const }];
    const visible = () => true;
    const checked = checkPrimitiveFields("prompt p", {
      name: "p",
      title: "P",
      icons,
      scopes: ["read", "read", "write"],
      visible,
      _meta: { "example.com/k": 1 },
    });
    assert.deepEqual(checked.descriptor, {
      name: "p",
      title: "P",
      icons: [{ src: "https://example.com/a.png", sizes: ["48x48"], theme: "dark" }],
      _meta: { "example.com/k": 1 },
    });
    assert.notEqual((checked.descriptor.icons as unknown[])[0], icons[0], "a copy");
    assert.deepEqual(checked.scopes, ["read", "write"]);
    assert.equal(checked.visible, visible);
    const bare = checkPrimitiveFields("prompt q", { name: "q" });
    assert.deepEqual(bare.descriptor, { name: "q" });
    assert.deepEqual(bare.scopes, []);
    assert.equal(bare.visible, null);
  });

  for (const [field, value] of [
    ["title", 1],
    ["description", {}],
    ["icons", [{ src: "" }]],
    ["icons", [{ src: "x", theme: "blue" }]],
    ["icons", "x"],
    ["scopes", ["ok", ""]],
    ["scopes", "read"],
    ["visible", true],
    ["_meta", []],
  ] as const) {
    test(`refuses ${field} = ${JSON.stringify(value)} naming the item and field`, () => {
      assert.throws(
        () => checkPrimitiveFields("resource r", { name: "r", [field]: value } as never),
        (e: unknown) =>
          e instanceof InvalidOptionError && e.message.includes(`resource r: ${field}`),
      );
    });
  }
});
