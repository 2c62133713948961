/**
 * The demo resources served by `conduit-mcp serve`, one per kind of read the protocol has
 * (https://modelcontextprotocol.io/specification/2025-11-25/server/resources):
 *
 * - `demo://readme` — text (Markdown) that says what the demo serves;
 * - `demo://logo.png` — a blob: a real 16×16 PNG, base64 in `contents[0].blob`;
 * - `ui://demo/dice.html` — the MCP App view of the `roll_dice` tool (demo-app.ts);
 * - `demo://sleep/{ms}` — a resource template whose read waits `ms` milliseconds (at most
 *   10 minutes) and honours cancellation like the `sleep` tool, so a client can watch a slow
 *   `resources/read` being cancelled (by `notifications/cancelled` in the 2025 era, by closing
 *   the stream in 2026-07-28).
 */
import { setTimeout as delay } from "node:timers/promises";

import { InvalidParamsError } from "../errors.js";
import {
  defineResource,
  defineResourceTemplate,
  type Resource,
  type ResourceTemplate,
} from "../protocol/index.js";
import { diceResource } from "./demo-app.js";
import { MAX_DEMO_MS } from "./demo-tools.js";

/**
 * A 16×16 PNG (8-bit RGB, 107 bytes): a teal square crossed by a white pipe. Embedded so the demo
 * has no file to ship; `demo://logo.png` serves exactly these bytes.
 */
export const LOGO_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAMklEQVR42mP4TyJggFC8eRUEEUIDMarheuisAdM/aCIIDcSEz2DXQLKnB1vEkZz4SAIAu27nwAqSiuMAAAAASUVORK5CYII=";

const README = `# conduit-mcp demo server

Tools: echo, sleep, count, crunch, stubborn, stats, confirm, ask-model, roll_dice.
Resources: demo://readme (this text), demo://logo.png (a PNG),
ui://demo/dice.html (the MCP App of roll_dice).
Resource template: demo://sleep/{ms} — waits ms milliseconds (at most ${MAX_DEMO_MS}).
Prompt: review {code, language} — language completes.

Every long request can be cancelled: 2025-era clients send notifications/cancelled,
2026-07-28 clients close the stream.
`;

/** Sleep values offered by completion (ms), shortest first. */
const SLEEP_SUGGESTIONS = ["100", "1000", "5000", "10000", "60000", "600000"];
/** A decimal integer without sign or leading zeros (but `0` itself). */
const MILLISECONDS = /^(?:0|[1-9][0-9]{0,5})$/;

/**
 * `demo://readme`: what the demo server serves, as Markdown.
 *
 * @example
 * ```ts
 * // resources/read {"uri":"demo://readme"} → contents[0].text starts with "# conduit-mcp demo server"
 * ```
 */
export const readmeResource: Resource = defineResource({
  uri: "demo://readme",
  name: "readme",
  title: "About this demo",
  description: "What the demo server serves, as Markdown.",
  mimeType: "text/markdown",
  size: Buffer.byteLength(README),
  cacheScope: "public",
  read: () => README,
});

/**
 * `demo://logo.png`: a 16×16 PNG, read as a base64 blob.
 *
 * @example
 * ```ts
 * // resources/read {"uri":"demo://logo.png"} → contents[0] = { uri, mimeType: "image/png", blob }
 * ```
 */
export const logoResource: Resource = defineResource({
  uri: "demo://logo.png",
  name: "logo",
  title: "conduit-mcp logo",
  description: "A 16×16 PNG, to show binary (blob) contents.",
  mimeType: "image/png",
  size: Buffer.from(LOGO_PNG_BASE64, "base64").length,
  cacheScope: "public",
  read: () => ({ blob: LOGO_PNG_BASE64 }),
});

/**
 * `demo://sleep/{ms}`: waits `ms` milliseconds, then answers `slept N ms`; a cancel ends the wait
 * at once. `ms` must be an integer from 0 to 600 000; anything else is refused: the read throws
 * an `InvalidParamsError`, which the client gets as -32602 with its message.
 *
 * @example
 * ```ts
 * // resources/read {"uri":"demo://sleep/1500"} → "slept 1500 ms" after 1.5 s
 * ```
 */
export const sleepTemplate: ResourceTemplate = defineResourceTemplate({
  uriTemplate: "demo://sleep/{ms}",
  name: "sleep",
  title: "A slow read",
  description: `Waits ms milliseconds (an integer, at most ${MAX_DEMO_MS}) and honours cancellation.`,
  mimeType: "text/plain",
  complete: { ms: (typed) => SLEEP_SUGGESTIONS.filter((ms) => ms.startsWith(typed)) },
  read: async ({ variables }, ctx) => {
    const text = variables.ms ?? "";
    const ms = MILLISECONDS.test(text) ? Number(text) : Number.NaN;
    if (!(ms <= MAX_DEMO_MS)) {
      throw new InvalidParamsError(`ms must be an integer from 0 to ${MAX_DEMO_MS}`);
    }
    // Rejects with an AbortError as soon as the request is cancelled.
    await delay(ms, undefined, { signal: ctx.signal });
    return `slept ${ms} ms`;
  },
});

/** The demo's direct resources, in the order `resources/list` shows them (by URI). */
export const demoResources: readonly Resource[] = Object.freeze([
  logoResource,
  readmeResource,
  diceResource,
]);

/** The demo's resource templates. */
export const demoResourceTemplates: readonly ResourceTemplate[] = Object.freeze([sleepTemplate]);
