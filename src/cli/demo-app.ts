/**
 * The demo's MCP App (SEP-1865; docs/apps.md): `roll_dice {count, sides}` rolls dice and names
 * `ui://demo/dice.html`, a small view that shows the roll and rolls again by calling the tool back
 * through the host. The view speaks the MCP Apps postMessage dialect itself (JSON-RPC 2.0 with its
 * parent window, MCP Apps specification 2026-01-26, "Transport Layer" and "Lifecycle":
 * https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx):
 * `ui/initialize`, then `ui/notifications/initialized`; it renders `ui/notifications/tool-input` and
 * `ui/notifications/tool-result`, answers `ping` and `ui/resource-teardown`, and sends `tools/call`.
 *
 * The tool's text content says the roll too, so a client without MCP Apps loses nothing
 * (SEP-1865, "Graceful Degradation").
 */
import { randomInt } from "node:crypto";

import { z } from "zod";

import { defineApp, type McpApp } from "../protocol/apps/index.js";
import type { Resource } from "../protocol/resources/index.js";
import { defineTool, type Tool } from "../protocol/tools/index.js";

/** Most dice one roll may throw. */
export const MAX_DICE = 20;
/** Most sides a die may have. */
export const MAX_DIE_SIDES = 1_000;

/**
 * The view. Plain HTML, CSS and JavaScript in one document (no external origin: the host's
 * restrictive default CSP is enough). Everything the host sends is written with `textContent`.
 */
const DICE_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Dice</title>
<style>
  :root { color-scheme: light dark; font-family: var(--font-sans, system-ui, sans-serif); }
  body { margin: 0; padding: 12px; }
  #dice { display: flex; flex-wrap: wrap; gap: 6px; min-height: 40px; margin: 8px 0; }
  .die { min-width: 36px; height: 36px; padding: 0 4px; box-sizing: border-box; display: grid;
    place-items: center; border: 2px solid currentColor; border-radius: 8px; font-weight: 600; }
  label { margin-right: 8px; }
  input { width: 4em; }
  #status { min-height: 1.2em; opacity: 0.8; }
</style>
</head>
<body>
<div><label>Dice <input id="count" type="number" min="1" max="${MAX_DICE}" value="2"></label>
<label>Sides <input id="sides" type="number" min="2" max="${MAX_DIE_SIDES}" value="6"></label>
<button id="roll" type="button" disabled>Roll again</button></div>
<div id="dice" aria-live="polite"></div>
<div>Total: <strong id="total">–</strong></div>
<div id="status">Connecting to the host…</div>
<script>
"use strict";
(() => {
  const parentWindow = window.parent;
  const pending = new Map();
  let nextId = 1;
  const $ = (id) => document.getElementById(id);

  function send(message) {
    parentWindow.postMessage(Object.assign({ jsonrpc: "2.0" }, message), "*");
  }
  function request(method, params) {
    const id = nextId++;
    send({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function show(result) {
    const data = result && result.structuredContent;
    if (result && result.isError) {
      $("status").textContent = "The tool failed: " + textOf(result);
      return;
    }
    if (!data || !Array.isArray(data.rolls)) {
      $("status").textContent = textOf(result);
      return;
    }
    const box = $("dice");
    box.replaceChildren();
    for (const value of data.rolls) {
      const die = document.createElement("span");
      die.className = "die";
      die.textContent = String(value);
      box.append(die);
    }
    $("total").textContent = String(data.total);
    $("status").textContent = "Rolled " + data.rolls.length + "d" + data.sides + ".";
  }
  function textOf(result) {
    const block = result && Array.isArray(result.content)
      ? result.content.find((c) => c && c.type === "text") : null;
    return block ? String(block.text) : "no result";
  }
  function setInputs(args) {
    if (args && Number.isInteger(args.count)) $("count").value = String(args.count);
    if (args && Number.isInteger(args.sides)) $("sides").value = String(args.sides);
  }

  window.addEventListener("message", (event) => {
    if (event.source !== parentWindow) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && message.method === undefined) {
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(String(message.error.message)));
      else waiter.resolve(message.result);
      return;
    }
    switch (message.method) {
      case "ui/notifications/tool-input":
        setInputs(message.params && message.params.arguments);
        break;
      case "ui/notifications/tool-result":
        show(message.params);
        break;
      case "ui/notifications/tool-cancelled":
        $("status").textContent = "The roll was cancelled.";
        break;
      case "ping":
      case "ui/resource-teardown":
        if (message.id !== undefined) send({ id: message.id, result: {} });
        break;
      default:
        if (message.id !== undefined) {
          send({ id: message.id, error: { code: -32601, message: "Method not found" } });
        }
    }
  });

  $("roll").addEventListener("click", async () => {
    $("roll").disabled = true;
    $("status").textContent = "Rolling…";
    try {
      const args = { count: Number($("count").value), sides: Number($("sides").value) };
      show(await request("tools/call", { name: "roll_dice", arguments: args }));
    } catch (error) {
      $("status").textContent = "The host refused the call: " + error.message;
    } finally {
      $("roll").disabled = false;
    }
  });

  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: "conduit-mcp dice", version: "1.0.0" },
    appCapabilities: {},
  }).then(
    (result) => {
      send({ method: "ui/notifications/initialized", params: {} });
      const host = result && result.hostInfo && result.hostInfo.name;
      $("status").textContent = "Connected" + (host ? " to " + host : "") + ".";
      $("roll").disabled = false;
    },
    (error) => {
      $("status").textContent = "The host refused ui/initialize: " + error.message;
    },
  );
})();
</script>
</body>
</html>
`;

/**
 * `ui://demo/dice.html`: the dice view.
 *
 * @example
 * ```ts
 * // resources/read {"uri":"ui://demo/dice.html"} → contents[0].mimeType "text/html;profile=mcp-app"
 * ```
 */
export const diceApp: McpApp = defineApp({
  uri: "ui://demo/dice.html",
  name: "dice",
  title: "Dice",
  description: "Shows a roll of dice and rolls again.",
  html: DICE_HTML,
  prefersBorder: true,
  cacheScope: "public",
});

/** The dice view's resource, for the demo's resource list. */
export const diceResource: Resource = diceApp.resource;

/**
 * `roll_dice {count, sides}` rolls `count` dice of `sides` sides; its results render in
 * `ui://demo/dice.html`, which calls it again (`visibility` model and app).
 *
 * @example
 * ```ts
 * // tools/call {"name":"roll_dice","arguments":{"count":2,"sides":6}}
 * // → "Rolled 2d6: 3, 5 (total 8)", structuredContent { sides: 6, rolls: [3, 5], total: 8 }
 * ```
 */
export const rollDiceTool: Tool = defineTool({
  name: "roll_dice",
  title: "Roll dice",
  description: "Rolls dice and shows them in an interactive view (MCP Apps).",
  input: z.object({
    count: z.number().int().min(1).max(MAX_DICE).default(2),
    sides: z.number().int().min(2).max(MAX_DIE_SIDES).default(6),
  }),
  output: z.object({
    sides: z.number().int(),
    rolls: z.array(z.number().int()),
    total: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  _meta: diceApp.toolMeta({ visibility: ["model", "app"] }),
  handler: ({ count, sides }) => {
    const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
    const total = rolls.reduce((sum, value) => sum + value, 0);
    return {
      content: [
        { type: "text", text: `Rolled ${count}d${sides}: ${rolls.join(", ")} (total ${total})` },
      ],
      structuredContent: { sides, rolls, total },
    };
  },
});
