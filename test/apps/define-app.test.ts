/**
 * `defineApp` at unit level: the `ui://` resource it builds (MIME type, `_meta.ui` on the list
 * entry and on the read contents), the tool metadata, and every refusal with the field named.
 * Over HTTP with both official clients: test/apps/apps-wire.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import type { ToolContext } from "../../src/protocol/calls/tool-context.js";
import {
  type AppDefinition,
  defineApp,
  MAX_APP_CSP_ORIGINS,
  MAX_APP_HTML_BYTES,
  MCP_APP_MIME_TYPE,
} from "../../src/protocol/index.js";
import { noAsking } from "../helpers/no-asking.js";

const HTML = "<!DOCTYPE html><html><body><p>hi</p></body></html>";

function context(): ToolContext {
  const signal = new AbortController().signal;
  return {
    signal,
    cancelled: () => false,
    requestId: 1,
    scope: "ip:127.0.0.1",
    principal: null,
    request: null,
    progress: async () => {},
    log: async () => {},
    ...noAsking,
  };
}

/** Asserts `definition` is refused with an InvalidOptionError whose option is `option`. */
function refused(definition: unknown, option: string, message?: RegExp): void {
  assert.throws(
    () => defineApp(definition as AppDefinition),
    (error: unknown) => {
      assert.ok(error instanceof InvalidOptionError, String(error));
      assert.equal(error.option, option);
      if (message !== undefined) assert.match(error.message, message);
      return true;
    },
  );
}

describe("defineApp", () => {
  test("serves the HTML as text/html;profile=mcp-app with _meta.ui on the list entry and the contents", async () => {
    const app = defineApp({
      uri: "ui://weather/dashboard.html",
      name: "dashboard",
      title: "Weather",
      html: HTML,
      csp: {
        connectDomains: ["https://api.example.com", "wss://live.example.com:8443"],
        resourceDomains: ["https://*.cdn.example.net"],
      },
      permissions: ["clipboardWrite", "geolocation"],
      domain: "a904794854a047f6.example-host.com",
      prefersBorder: false,
      _meta: { "com.example/build": "42" },
    });
    assert.equal(MCP_APP_MIME_TYPE, "text/html;profile=mcp-app");
    const ui = {
      csp: {
        connectDomains: ["https://api.example.com", "wss://live.example.com:8443"],
        resourceDomains: ["https://*.cdn.example.net"],
      },
      permissions: { clipboardWrite: {}, geolocation: {} },
      domain: "a904794854a047f6.example-host.com",
      prefersBorder: false,
    };
    assert.deepEqual(app.resourceMeta, ui);
    assert.ok(Object.isFrozen(app.resourceMeta));
    assert.deepEqual(app.resource.descriptor, {
      uri: "ui://weather/dashboard.html",
      name: "dashboard",
      title: "Weather",
      _meta: { "com.example/build": "42", ui },
      mimeType: MCP_APP_MIME_TYPE,
      size: Buffer.byteLength(HTML),
    });
    const read = await app.resource.read({ uri: app.uri }, context());
    assert.deepEqual(read, {
      uri: "ui://weather/dashboard.html",
      mimeType: MCP_APP_MIME_TYPE,
      text: HTML,
      _meta: { ui },
    });
  });

  test("without metadata no _meta is sent; a function builds the HTML on each read and is checked", async () => {
    let n = 0;
    const app = defineApp({
      uri: "ui://x",
      name: "x",
      html: () => (++n === 1 ? HTML : "<p>not a document</p>"),
    });
    assert.deepEqual(app.resourceMeta, {});
    assert.equal(app.resource.descriptor._meta, undefined);
    assert.equal(app.resource.descriptor.size, undefined);
    assert.deepEqual(await app.resource.read({ uri: "ui://x" }, context()), {
      uri: "ui://x",
      mimeType: MCP_APP_MIME_TYPE,
      text: HTML,
    });
    await assert.rejects(
      async () => app.resource.read({ uri: "ui://x" }, context()),
      /app ui:\/\/x: html\(\) must return an HTML5 document starting with <!DOCTYPE html>/,
    );
  });

  test("toolMeta links a tool: resourceUri, and visibility only when given", () => {
    const app = defineApp({ uri: "ui://dice/view", name: "dice", html: HTML });
    assert.deepEqual(app.toolMeta(), { ui: { resourceUri: "ui://dice/view" } });
    assert.deepEqual(app.toolMeta({ visibility: ["app"] }), {
      ui: { resourceUri: "ui://dice/view", visibility: ["app"] },
    });
    assert.ok(Object.isFrozen((app.toolMeta() as { ui: object }).ui));
    for (const visibility of [[], ["model", "model"], ["user"], "app"]) {
      assert.throws(
        () => app.toolMeta({ visibility } as never),
        (e: unknown) =>
          e instanceof InvalidOptionError &&
          e.option === "toolMeta of app ui://dice/view: visibility",
      );
    }
  });

  test("the URI must be ui:// with RFC 3986 characters, at most 2 048 of them", () => {
    for (const uri of [
      "https://x/y",
      "UI://x",
      "ui://",
      "ui:x",
      "ui://a b",
      "ui://é",
      `ui://${"a".repeat(2_044)}`,
      42,
    ]) {
      refused({ uri, name: "x", html: HTML }, "app.uri", /a ui:\/\/ URI/);
    }
    assert.equal(
      defineApp({ uri: `ui://${"a".repeat(2_043)}`, name: "x", html: HTML }).uri.length,
      2_048,
    );
  });

  test("the HTML must be an HTML5 document within the size bound", () => {
    refused(
      { uri: "ui://x", name: "x", html: "<html></html>" },
      "app ui://x: html",
      /<!DOCTYPE html>/,
    );
    refused({ uri: "ui://x", name: "x", html: 7 }, "app ui://x: html");
    const big = `<!doctype html>${"x".repeat(MAX_APP_HTML_BYTES)}`;
    refused({ uri: "ui://x", name: "x", html: big }, "app ui://x: html", /at most 4194304 bytes/);
    // Leading BOM and whitespace, any case.
    assert.ok(defineApp({ uri: "ui://x", name: "x", html: "\uFEFF\n  <!DocType HTML><p>" }));
  });

  test("CSP lists hold origins only, a bounded number, under known keys", () => {
    const bad = [
      "https://api.example.com/path",
      "https://api.example.com; script-src *",
      "'unsafe-eval'",
      "*",
      "ftp://x.example",
      "https://*",
      "https://a..b",
      "",
    ];
    for (const origin of bad) {
      refused(
        { uri: "ui://x", name: "x", html: HTML, csp: { connectDomains: [origin] } },
        "app ui://x: csp.connectDomains",
        /origins like "https:\/\/api\.example\.com"/,
      );
    }
    const many = Array.from({ length: MAX_APP_CSP_ORIGINS + 1 }, (_, i) => `https://h${i}.example`);
    refused(
      { uri: "ui://x", name: "x", html: HTML, csp: { frameDomains: many } },
      "app ui://x: csp.frameDomains",
    );
    refused(
      { uri: "ui://x", name: "x", html: HTML, csp: { scriptDomains: ["https://x.example"] } },
      "app ui://x: csp.scriptDomains",
    );
    refused(
      { uri: "ui://x", name: "x", html: HTML, csp: ["https://x.example"] },
      "app ui://x: csp",
    );
    assert.ok(
      defineApp({
        uri: "ui://x",
        name: "x",
        html: HTML,
        csp: { baseUriDomains: ["http://localhost:3000"], frameDomains: [] },
      }),
    );
  });

  test("permissions, domain, prefersBorder and _meta.ui are checked", () => {
    refused(
      { uri: "ui://x", name: "x", html: HTML, permissions: ["camera", "camera"] },
      "app ui://x: permissions",
    );
    refused(
      { uri: "ui://x", name: "x", html: HTML, permissions: ["usb"] },
      "app ui://x: permissions",
      /"camera", "microphone", "geolocation", "clipboardWrite"/,
    );
    refused(
      { uri: "ui://x", name: "x", html: HTML, permissions: { camera: {} } },
      "app ui://x: permissions",
    );
    for (const domain of ["", "a b", 'x"y', "a;b", "x".repeat(2_049), 1]) {
      refused({ uri: "ui://x", name: "x", html: HTML, domain }, "app ui://x: domain");
    }
    refused(
      { uri: "ui://x", name: "x", html: HTML, prefersBorder: "yes" },
      "app ui://x: prefersBorder",
    );
    refused(
      { uri: "ui://x", name: "x", html: HTML, _meta: { ui: { csp: {} } } },
      "app ui://x: _meta",
      /without a ui key/,
    );
    // The resource's own checks still apply (name, cacheScope…).
    refused({ uri: "ui://x", name: "", html: HTML }, "resource ui://x: name");
    refused(null, "app");
  });
});
