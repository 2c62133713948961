/**
 * The demo's MCP App in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) renders the `ui://demo/dice.html` view read from a conduit-mcp server on
 * 127.0.0.1, inside a host stand-in page, and the view's postMessage bridge is driven as far as
 * calling its tool back through the host.
 *
 * The host stand-in follows the MCP Apps specification (2026-01-26,
 * https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx):
 * "Lifecycle" (the host calls the tool, renders the view, answers `ui/initialize`, waits for
 * `ui/notifications/initialized` before sending anything, then sends `tool-input` and
 * `tool-result`), "Visibility" (a view's `tools/call` is relayed only for a tool whose
 * visibility includes "app"), "Host Behavior" (the restrictive default CSP when `_meta.ui.csp` is
 * absent) and "Iframe Sandboxing" (a sandboxed iframe without `allow-same-origin`). The host's
 * MCP side is the official 2025-11-25 client (`@modelcontextprotocol/sdk` 1.x) declaring the
 * extension, so every `tools/call` the view makes reaches the real server over HTTP.
 *
 * Without Chromium: fails under CI (`CI` set; .ci/apt.d/chromium.txt installs it), else skips
 * with the reason printed.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, afterEach, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type Browser, chromium, type Page } from "playwright-core";

import { demoResources } from "../../src/cli/demo-resources.js";
import { demoTools } from "../../src/cli/demo-tools.js";
import { APPS_EXTENSION, appsExtension, MCP_APP_MIME_TYPE } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
/** Generous: a loaded 2-core machine starts Chromium in seconds, not milliseconds. */
const STEP_TIMEOUT_MS = 30_000;

const missing = existsSync(CHROMIUM)
  ? null
  : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/apt.d/chromium.txt)`;
if (missing !== null && !process.env.CI) {
  console.log(`skipping the MCP Apps browser test: ${missing}`);
}

/**
 * The host stand-in: renders a view in a sandboxed iframe, speaks JSON-RPC with it over
 * postMessage and relays its `tools/call` to `window.relayToolCall` (the Node side's official
 * client). Every message the view sends is kept in `window.fromView`, in order.
 */
const HOST_PAGE = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>host stand-in</title></head>
<body>
<iframe id="view" sandbox="allow-scripts" style="width:480px;height:320px"></iframe>
<script>
(() => {
"use strict";
window.fromView = [];
window.hostState = { initialized: false, sentBeforeInitialized: 0, teardown: null };
let view = null;
let call = null;
let nextHostId = 1;
const waiting = new Map();

function toView(message) {
  if (!window.hostState.initialized && message.method !== undefined) {
    window.hostState.sentBeforeInitialized++;
  }
  view.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
}

window.startView = (html, csp, toolCall) => {
  call = toolCall;
  const policy = '<meta http-equiv="Content-Security-Policy" content="' + csp + '">';
  const frame = document.getElementById("view");
  frame.srcdoc = html.replace(/<head>/i, "<head>" + policy);
  view = frame.contentWindow;
};

window.tearDown = () => {
  const id = "host-" + nextHostId++;
  toView({ id, method: "ui/resource-teardown", params: { reason: "test done" } });
  return new Promise((resolve) => waiting.set(id, resolve));
};

window.addEventListener("message", async (event) => {
  if (view === null || event.source !== view) return;
  const message = event.data;
  window.fromView.push(message);
  if (message.method === undefined) {
    const resolve = waiting.get(message.id);
    if (resolve) { waiting.delete(message.id); resolve(message); }
    return;
  }
  switch (message.method) {
    case "ui/initialize":
      toView({ id: message.id, result: {
        protocolVersion: message.params.protocolVersion,
        hostInfo: { name: "conduit-mcp test host", version: "1.0.0" },
        hostCapabilities: { serverTools: {}, logging: {} },
        hostContext: { theme: "light", displayMode: "inline", platform: "web" },
      } });
      return;
    case "ui/notifications/initialized":
      window.hostState.initialized = true;
      toView({ method: "ui/notifications/tool-input", params: { arguments: call.arguments } });
      toView({ method: "ui/notifications/tool-result", params: call.result });
      return;
    case "tools/call": {
      const params = message.params || {};
      if (!call.appTools.includes(params.name)) {
        toView({ id: message.id, error: { code: -32000, message: "Tool not callable by apps" } });
        return;
      }
      try {
        toView({ id: message.id, result: await window.relayToolCall(params) });
      } catch (error) {
        toView({ id: message.id, error: { code: -32603, message: String(error && error.message) } });
      }
      return;
    }
    default:
      if (message.id !== undefined) {
        toView({ id: message.id, error: { code: -32601, message: "Method not found" } });
      }
  }
});
})();
</script>
</body></html>`;

/** The SEP's restrictive default policy, for a view whose `_meta.ui.csp` is absent. */
const DEFAULT_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'";

interface CallResult {
  readonly content: readonly { readonly type: string; readonly text?: string }[];
  readonly structuredContent?: { sides: number; rolls: number[]; total: number };
  readonly isError?: boolean;
}

describe("the demo's MCP App in headless Chromium", {
  skip: missing !== null && !process.env.CI ? missing : false,
}, () => {
  let server: McpServer;
  let url: string;
  let client: Client;
  let browser: Browser;
  let page: Page;
  const relayed: CallResult[] = [];
  const pageErrors: string[] = [];

  before(async () => {
    if (missing !== null) return; // under CI: each test fails on it below
    server = createMcpServer({
      tools: demoTools,
      resources: demoResources,
      extensions: [appsExtension],
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
    client = new Client(
      { name: "apps-host-stand-in", version: "1.0.0" },
      { capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [MCP_APP_MIME_TYPE] } } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: CHROMIUM_FLAGS,
      timeout: STEP_TIMEOUT_MS,
    });
    page = await browser.newPage();
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    // A script error in the host page fails the test with its message.
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    // The host's relay: a view's tools/call goes to the real server through the official client.
    await page.exposeFunction(
      "relayToolCall",
      async (params: { name: string; arguments?: Record<string, unknown> }) => {
        const result = (await client.callTool({
          name: params.name,
          arguments: params.arguments ?? {},
        })) as unknown as CallResult;
        relayed.push(result);
        return result;
      },
    );
    await page.setContent(HOST_PAGE);
  });

  afterEach(() => {
    assert.deepEqual(pageErrors, [], "no script error in the host page");
  });

  after(async () => {
    await browser?.close();
    await client?.close();
    await server?.close();
  });

  test("renders the ui:// view, initializes its bridge and relays its tools/call to the server", async (t) => {
    assert.equal(missing, null, "CI must install Chromium");
    // Discovery as a host does it: the server declared the extension to this host, the tool
    // names its view, the view reads with the App MIME type.
    const declared = client.getServerCapabilities() as { extensions?: Record<string, unknown> };
    assert.deepEqual(declared.extensions?.[APPS_EXTENSION], {});
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === "roll_dice");
    const ui = (tool?._meta as { ui?: { resourceUri?: string; visibility?: string[] } })?.ui;
    assert.equal(ui?.resourceUri, "ui://demo/dice.html");
    const appTools = tools
      .filter((x) => {
        const meta = (x._meta as { ui?: { visibility?: string[] } } | undefined)?.ui;
        return meta?.visibility === undefined || meta.visibility.includes("app");
      })
      .map((x) => x.name);
    const read = await client.readResource({ uri: "ui://demo/dice.html" });
    const contents = read.contents[0] as { mimeType?: string; text?: string; _meta?: unknown };
    assert.equal(contents.mimeType, MCP_APP_MIME_TYPE);
    assert.equal(typeof contents.text, "string");
    assert.deepEqual(
      contents._meta,
      { ui: { prefersBorder: true } },
      "no csp: the default applies",
    );

    // The agent's call, whose input and result the view is given once it is initialized.
    const args = { count: 3, sides: 6 };
    const first = (await client.callTool({
      name: "roll_dice",
      arguments: args,
    })) as unknown as CallResult;
    assert.equal(first.structuredContent?.rolls.length, 3);

    await page.evaluate(
      ([html, csp, call]) =>
        (globalThis as unknown as { startView: (...a: unknown[]) => void }).startView(
          html,
          csp,
          call,
        ),
      [contents.text, DEFAULT_CSP, { arguments: args, result: first, appTools }] as const,
    );
    const view = page.frameLocator("#view");
    await view.locator("#status").filter({ hasText: "Rolled 3d6." }).waitFor();
    assert.equal(await view.locator(".die").count(), 3);
    assert.equal(
      await view.locator("#total").textContent(),
      String(first.structuredContent?.total),
    );
    assert.equal(await view.locator("#count").inputValue(), "3", "tool-input filled the form");

    // The user rolls again: the view's tools/call goes through the host to the server.
    await view.locator("#sides").fill("20");
    await view.locator("#roll").click();
    await view.locator("#status").filter({ hasText: "Rolled 3d20." }).waitFor();
    assert.equal(relayed.length, 1, "exactly one call relayed");
    const second = relayed[0]?.structuredContent;
    assert.equal(second?.sides, 20);
    assert.equal(await view.locator("#total").textContent(), String(second?.total));
    assert.deepEqual(
      await view.locator(".die").allTextContents(),
      second?.rolls.map(String),
      "the view shows the server's roll",
    );

    // The host tears the view down; the view answers.
    const teardown = (await page.evaluate(() =>
      (globalThis as unknown as { tearDown: () => Promise<unknown> }).tearDown(),
    )) as { result?: unknown };
    assert.deepEqual(teardown.result, {});

    const fromView = (await page.evaluate(
      () => (globalThis as unknown as { fromView: unknown[] }).fromView,
    )) as {
      id?: unknown;
      method?: string;
      params?: Record<string, unknown>;
    }[];
    const methods = fromView.map((m) => m.method ?? `response ${String(m.id)}`);
    assert.deepEqual(methods, [
      "ui/initialize",
      "ui/notifications/initialized",
      "tools/call",
      "response host-1",
    ]);
    const init = fromView[0]?.params as {
      protocolVersion?: unknown;
      appInfo?: unknown;
      appCapabilities?: unknown;
    };
    assert.equal(init.protocolVersion, "2026-01-26");
    assert.deepEqual(init.appCapabilities, {});
    assert.deepEqual(fromView[2]?.params, {
      name: "roll_dice",
      arguments: { count: 3, sides: 20 },
    });
    const state = (await page.evaluate(
      () => (globalThis as unknown as { hostState: unknown }).hostState,
    )) as {
      sentBeforeInitialized: number;
    };
    assert.equal(state.sentBeforeInitialized, 0, "nothing was sent to the view before initialized");

    t.diagnostic(`chromium ${browser.version()}; view → host: ${methods.join(" → ")}`);
    t.diagnostic(
      `agent roll ${JSON.stringify(first.structuredContent)}; view's roll through the host ${JSON.stringify(second)}`,
    );
  });

  test("a view's call to a tool outside its app visibility is refused by the host, never relayed", async () => {
    assert.equal(missing, null, "CI must install Chromium");
    await page.setContent(HOST_PAGE);
    const read = await client.readResource({ uri: "ui://demo/dice.html" });
    const html = (read.contents[0] as { text: string }).text;
    const first = (await client.callTool({
      name: "roll_dice",
      arguments: {},
    })) as unknown as CallResult;
    const before = relayed.length;
    await page.evaluate(
      ([h, csp, call]) =>
        (globalThis as unknown as { startView: (...a: unknown[]) => void }).startView(h, csp, call),
      [html, DEFAULT_CSP, { arguments: {}, result: first, appTools: [] }] as const,
    );
    const view = page.frameLocator("#view");
    await view.locator("#status").filter({ hasText: "Rolled 2d6." }).waitFor();
    await view.locator("#roll").click();
    await view
      .locator("#status")
      .filter({ hasText: "The host refused the call: Tool not callable by apps" })
      .waitFor();
    assert.equal(relayed.length, before);
  });
});
