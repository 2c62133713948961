/**
 * MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`): an interactive HTML view served as
 * a `ui://` resource with the MCP App HTML profile, and the `_meta.ui` a tool carries to name it.
 *
 * Wire shapes follow the MCP Apps specification, stable revision 2026-01-26
 * (https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx):
 * "UI Resource Format" (the `ui://` URI, the `text/html;profile=mcp-app` MIME type, the resource's
 * `_meta.ui`: `csp`, `permissions`, `domain`, `prefersBorder`; text or blob contents, a valid
 * HTML5 document) and "Resource Discovery" (a tool's `_meta.ui.resourceUri` and `visibility`).
 * The resource metadata goes both on the `resources/list` entry and on each `resources/read`
 * content item (the draft revision's "Metadata Location": hosts prefer the content item).
 */
import { InvalidOptionError } from "../../errors.js";
import type { ToolContext } from "../calls/index.js";
import {
  defineResource,
  isResourceUri,
  type Resource,
  type ResourceFieldsBase,
} from "../resources/index.js";
import { isPlainObject } from "../wire/index.js";

/** The MIME type of an MCP App's HTML (SEP-1865, "UI Resource Format"). */
export const MCP_APP_MIME_TYPE = "text/html;profile=mcp-app";

/** The MCP Apps extension identifier (SEP-1865, "Extension Identifier"). */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";

/** Largest HTML document an app may serve, in UTF-8 bytes (4 MiB): a bundled single-file app fits. */
export const MAX_APP_HTML_BYTES = 4 * 1024 * 1024;

/** Most origins one CSP list may name. */
export const MAX_APP_CSP_ORIGINS = 64;

/** Longest `ui://` URI an app may have (the limit of every defined resource URI). */
const MAX_APP_URI_LENGTH = 2_048;
/** Longest origin in a CSP list, and longest `domain`. */
const MAX_ORIGIN_LENGTH = 2_048;

/**
 * Origins the app's view needs, which the host turns into its Content Security Policy (SEP-1865,
 * "UI Resource Format", `McpUiResourceCsp`). Each is an origin such as `https://api.example.com`
 * (`http`, `https`, `ws` or `wss`; a `*.` subdomain wildcard and a port allowed). Omitted or
 * empty: nothing beyond the host's restrictive default.
 */
export interface AppCsp {
  /** Origins for fetch, XHR and WebSocket (`connect-src`). */
  readonly connectDomains?: readonly string[];
  /** Origins for scripts, styles, images, fonts and media. */
  readonly resourceDomains?: readonly string[];
  /** Origins of nested iframes (`frame-src`; omitted: none). */
  readonly frameDomains?: readonly string[];
  /** Allowed base URIs of the document (`base-uri`; omitted: `'self'`). */
  readonly baseUriDomains?: readonly string[];
}

/** A browser capability an app's view may ask the host for (SEP-1865, `permissions`). */
export type AppPermission = "camera" | "microphone" | "geolocation" | "clipboardWrite";

/** Who may call a tool linked to an app (SEP-1865, "Resource Discovery", `visibility`). */
export type AppToolVisibility = "model" | "app";

/** What {@link defineApp} takes. */
export interface AppDefinition extends Omit<ResourceFieldsBase, "mimeType"> {
  /** The view's resource URI: `ui://` then at least one character (RFC 3986 characters only). */
  readonly uri: string;
  /**
   * The view: an HTML5 document (starting with `<!DOCTYPE html>`, at most
   * {@link MAX_APP_HTML_BYTES} bytes), or a function building it on each read (checked the same
   * way; a bad document answers the read with an internal error).
   */
  readonly html: string | ((ctx: ToolContext) => string | Promise<string>);
  /** External origins the view needs. Default none. */
  readonly csp?: AppCsp;
  /** Browser capabilities the view asks for (the host may refuse). Default none. */
  readonly permissions?: readonly AppPermission[];
  /**
   * A dedicated sandbox origin for the view; its format is host-dependent (SEP-1865: servers
   * consult the host's documentation). Default: none (the host's per-conversation origin).
   */
  readonly domain?: string;
  /** Whether the host should draw a border and background around the view. Default: host decides. */
  readonly prefersBorder?: boolean;
}

/** What {@link McpApp.toolMeta} takes. */
export interface AppToolMetaOptions {
  /**
   * Who may call the tool: `"model"` (the agent sees and calls it), `"app"` (the view may call it
   * through the host). Omitted: both, the specification's default (and not sent).
   */
  readonly visibility?: readonly AppToolVisibility[];
}

/** A defined app: its resource to serve, and the `_meta` that links a tool to it. */
export interface McpApp {
  /** The view's `ui://` URI (what a linked tool's `_meta.ui.resourceUri` names). */
  readonly uri: string;
  /** The `ui://` resource, ready for `createMcpServer({ resources })`. */
  readonly resource: Resource;
  /** The resource's `_meta.ui` as sent (CSP, permissions, domain, border), frozen. */
  readonly resourceMeta: Readonly<Record<string, unknown>>;
  /**
   * The `_meta` of a tool that renders its results in this app: `{ ui: { resourceUri, visibility? } }`.
   * Spread it into the tool's own `_meta`.
   *
   * @example
   * ```ts
   * defineTool({ name: "roll", handler: () => "4", _meta: dice.toolMeta({ visibility: ["model", "app"] }) });
   * ```
   */
  toolMeta(options?: AppToolMetaOptions): Readonly<Record<string, unknown>>;
}

const PERMISSIONS: ReadonlySet<string> = new Set<AppPermission>([
  "camera",
  "microphone",
  "geolocation",
  "clipboardWrite",
]);
const CSP_KEYS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const;
/** An origin a CSP source list may hold: scheme, optional `*.` wildcard, host, optional port. */
const ORIGIN =
  /^(?:https?|wss?):\/\/(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?$/;
/** Visible ASCII without quotes, `;` or `,`: nothing that could break out of a host's policy. */
const DOMAIN = /^[\x21\x23-\x26\x28-\x2b\x2d-\x3a\x3c-\x7e]+$/;
/** An HTML5 document begins with its doctype (after an optional BOM and whitespace). */
const DOCTYPE = /^\uFEFF?\s*<!doctype\s+html\s*>/i;

/**
 * Defines an MCP App: a `ui://` resource serving the view's HTML with the MCP App MIME type and
 * its `_meta.ui`, and the tool metadata linking tools to it. Checks everything at once and throws
 * {@link InvalidOptionError} naming the field.
 *
 * @example
 * ```ts
 * const dice = defineApp({
 *   uri: "ui://demo/dice.html",
 *   name: "dice",
 *   html: "<!DOCTYPE html><html><body>…</body></html>",
 *   prefersBorder: true,
 * });
 * const roll = defineTool({ name: "roll_dice", handler: () => "4", _meta: dice.toolMeta() });
 * createMcpServer({ tools: [roll], resources: [dice.resource] });
 * ```
 */
export function defineApp(definition: AppDefinition): McpApp {
  if (!isPlainObject(definition)) throw new InvalidOptionError("app", "an object", definition);
  const { uri, html, csp, permissions, domain, prefersBorder, _meta } = definition;
  if (!isAppUri(uri)) {
    throw new InvalidOptionError(
      "app.uri",
      `a ui:// URI (ui:// then RFC 3986 characters, at most ${MAX_APP_URI_LENGTH} in all)`,
      uri,
    );
  }
  const label = `app ${uri}`;
  const ui: Record<string, unknown> = {};
  if (csp !== undefined) ui.csp = checkCsp(label, csp);
  if (permissions !== undefined) ui.permissions = checkPermissions(label, permissions);
  if (domain !== undefined) {
    if (typeof domain !== "string" || domain.length > MAX_ORIGIN_LENGTH || !DOMAIN.test(domain)) {
      throw new InvalidOptionError(
        `${label}: domain`,
        `a non-empty string of visible ASCII without quotes, ";" or "," (at most ${MAX_ORIGIN_LENGTH} characters)`,
        domain,
      );
    }
    ui.domain = domain;
  }
  if (prefersBorder !== undefined) {
    if (typeof prefersBorder !== "boolean") {
      throw new InvalidOptionError(`${label}: prefersBorder`, "a boolean", prefersBorder);
    }
    ui.prefersBorder = prefersBorder;
  }
  if (_meta !== undefined && isPlainObject(_meta) && Object.hasOwn(_meta, "ui")) {
    throw new InvalidOptionError(
      `${label}: _meta`,
      "metadata without a ui key (defineApp writes _meta.ui from csp, permissions, domain and prefersBorder)",
      _meta,
    );
  }
  let size: number | undefined;
  if (typeof html === "string") {
    const problem = htmlProblem(html);
    if (problem !== null) throw new InvalidOptionError(`${label}: html`, problem, html);
    size = Buffer.byteLength(html);
  } else if (typeof html !== "function") {
    throw new InvalidOptionError(
      `${label}: html`,
      "an HTML5 document (a string) or a function returning one",
      html,
    );
  }
  const resourceMeta = deepFreeze(ui);
  const contentsMeta = Object.keys(resourceMeta).length === 0 ? undefined : { ui: resourceMeta };
  const {
    csp: _c,
    permissions: _p,
    domain: _d,
    prefersBorder: _b,
    html: _h,
    ...fields
  } = definition;
  const resource = defineResource({
    ...fields,
    uri,
    mimeType: MCP_APP_MIME_TYPE,
    ...(size === undefined ? {} : { size }),
    ...(contentsMeta === undefined && _meta === undefined
      ? {}
      : { _meta: { ...(_meta ?? {}), ...(contentsMeta ?? {}) } }),
    read: async (_request, ctx) => {
      const text = typeof html === "string" ? html : await html(ctx);
      if (typeof html !== "string") {
        const problem = typeof text === "string" ? htmlProblem(text) : "a string";
        // A bug in the server's own builder: the read answers -32603 and the operator hears why.
        if (problem !== null) throw new Error(`${label}: html() must return ${problem}`);
      }
      return contentsMeta === undefined
        ? { uri, mimeType: MCP_APP_MIME_TYPE, text }
        : { uri, mimeType: MCP_APP_MIME_TYPE, text, _meta: contentsMeta };
    },
  });
  return Object.freeze({
    uri,
    resource,
    resourceMeta,
    toolMeta: (options?: AppToolMetaOptions) => toolMetaOf(uri, options),
  });
}

/** Whether `value` is a `ui://` URI a definition may use. */
export function isAppUri(value: unknown): value is string {
  return isResourceUri(value, MAX_APP_URI_LENGTH) && value.startsWith("ui://") && value.length > 5;
}

function toolMetaOf(
  resourceUri: string,
  options: AppToolMetaOptions | undefined,
): Readonly<Record<string, unknown>> {
  const label = `toolMeta of app ${resourceUri}`;
  if (options !== undefined && !isPlainObject(options)) {
    throw new InvalidOptionError(label, "an object { visibility? }", options);
  }
  const visibility = options?.visibility;
  const ui: Record<string, unknown> = { resourceUri };
  if (visibility !== undefined) {
    if (
      !Array.isArray(visibility) ||
      visibility.length === 0 ||
      new Set(visibility).size !== visibility.length ||
      !visibility.every((v) => v === "model" || v === "app")
    ) {
      throw new InvalidOptionError(
        `${label}: visibility`,
        'a non-empty array of distinct "model" and "app"',
        visibility,
      );
    }
    ui.visibility = [...visibility];
  }
  return deepFreeze({ ui });
}

function checkCsp(label: string, csp: unknown): Record<string, unknown> {
  const expected = `{ ${CSP_KEYS.join(", ")} }, each an array of origins`;
  if (!isPlainObject(csp)) throw new InvalidOptionError(`${label}: csp`, expected, csp);
  const unknownKey = Object.keys(csp).find((k) => !(CSP_KEYS as readonly string[]).includes(k));
  if (unknownKey !== undefined) {
    throw new InvalidOptionError(`${label}: csp.${unknownKey}`, `absent (csp is ${expected})`, csp);
  }
  const out: Record<string, unknown> = {};
  for (const key of CSP_KEYS) {
    const list = csp[key];
    if (list === undefined) continue;
    if (
      !Array.isArray(list) ||
      list.length > MAX_APP_CSP_ORIGINS ||
      !list.every((o) => typeof o === "string" && o.length <= MAX_ORIGIN_LENGTH && ORIGIN.test(o))
    ) {
      throw new InvalidOptionError(
        `${label}: csp.${key}`,
        `an array of at most ${MAX_APP_CSP_ORIGINS} origins like "https://api.example.com" (http, https, ws or wss; optional "*." subdomain wildcard and port)`,
        list,
      );
    }
    out[key] = [...list];
  }
  return out;
}

function checkPermissions(label: string, permissions: unknown): Record<string, unknown> {
  if (
    !Array.isArray(permissions) ||
    new Set(permissions).size !== permissions.length ||
    !permissions.every((p) => typeof p === "string" && PERMISSIONS.has(p))
  ) {
    throw new InvalidOptionError(
      `${label}: permissions`,
      `an array of distinct ${[...PERMISSIONS].map((p) => `"${p}"`).join(", ")}`,
      permissions,
    );
  }
  // On the wire each granted permission is an empty object (SEP-1865, `permissions`).
  return Object.fromEntries(permissions.map((p: string) => [p, {}]));
}

/** Why `html` is not a servable document, or null when it is. */
function htmlProblem(html: string): string | null {
  if (!DOCTYPE.test(html)) return "an HTML5 document starting with <!DOCTYPE html>";
  if (Buffer.byteLength(html) > MAX_APP_HTML_BYTES) {
    return `an HTML document of at most ${MAX_APP_HTML_BYTES} bytes (UTF-8)`;
  }
  return null;
}

function deepFreeze<T extends Record<string, unknown>>(value: T): Readonly<T> {
  for (const inner of Object.values(value)) {
    if (typeof inner === "object" && inner !== null) {
      deepFreeze(inner as Record<string, unknown>);
    }
  }
  return Object.freeze(value);
}
