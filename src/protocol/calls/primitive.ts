/**
 * The vocabulary shared by every server primitive (tools, resources, resource templates,
 * prompts): who is asking ({@link VisibilityContext}), the fields every definition accepts
 * ({@link PrimitiveFields}), and the {@link Prompt} shape the dispatcher serves.
 *
 * Field meanings follow the MCP schema's `BaseMetadata`, `Icons` and `_meta` definitions:
 * https://modelcontextprotocol.io/specification/2025-11-25/schema (and the 2026-07-28 schema,
 * which keeps them unchanged).
 */
import { InvalidOptionError } from "../../errors.js";
import type { Principal } from "../../identity/index.js";
import { isPlainObject, type SchemaIssue } from "../wire/index.js";
import type { ToolContext } from "./tool-context.js";

/**
 * Who is asking, as seen when the server decides whether an item is listed and usable. A
 * `visible` predicate gets it for every list and every use, so it must be cheap and must not
 * throw (a throwing predicate counts as "hidden").
 */
export interface VisibilityContext {
  /** The authenticated caller, or null without auth. */
  readonly principal: Principal | null;
  /** The tenant scope of the request (`session:…`, `principal:…` or `ip:…`). */
  readonly scope: string;
}

/**
 * An icon a client may show next to an item (MCP 2025-11-25 schema, `Icon`:
 * https://modelcontextprotocol.io/specification/2025-11-25/schema#icon).
 */
export interface Icon {
  /** An `http(s):` URL or a `data:` URI with base64 image data. */
  readonly src: string;
  /** MIME type override, e.g. `"image/png"`. */
  readonly mimeType?: string;
  /** Sizes in `WxH` form (`"48x48"`) or `"any"`. */
  readonly sizes?: readonly string[];
  /** The background the icon is designed for. */
  readonly theme?: "light" | "dark";
}

/** The fields every primitive definition accepts, with the same meaning everywhere. */
export interface PrimitiveFields {
  /** The programmatic identifier; unique within its kind on one server. */
  readonly name: string;
  /** A human-readable display name. */
  readonly title?: string;
  /** What the item is for; clients may show it to a model. */
  readonly description?: string;
  /** Icons a client may display. */
  readonly icons?: readonly Icon[];
  /**
   * Authorization scopes the caller must hold (all of them) to see and use the item. Without a
   * principal the item is hidden; with a principal lacking one, it is hidden from lists and its
   * use answers 403 with a `WWW-Authenticate` challenge naming the scopes.
   */
  readonly scopes?: readonly string[];
  /**
   * Per-request predicate: false hides the item, and a hidden item answers exactly as an
   * unknown one would. Absent: always visible.
   */
  readonly visible?: (ctx: VisibilityContext) => boolean;
  /** Opaque metadata passed through to the item's list entry (e.g. MCP Apps' `_meta.ui`). */
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** One problem found in a client's arguments: where (`a.b`, empty for the root) and what. */
export type ArgumentIssue = SchemaIssue;

/** The outcome of checking a client's `arguments`: the values the handler gets, or what is wrong. */
export type ArgumentCheck<T = unknown> =
  | { readonly ok: true; readonly args: T }
  | { readonly ok: false; readonly issues: readonly ArgumentIssue[] };

/**
 * A prompt as the dispatcher serves it (`prompts/list`, `prompts/get`, `completion/complete`;
 * https://modelcontextprotocol.io/specification/2025-11-25/server/prompts). `definePrompt`
 * builds one; the dispatcher only ever talks to this interface.
 */
export interface Prompt {
  readonly name: string;
  /** Its `prompts/list` entry (name, title, description, arguments, icons, _meta). */
  readonly descriptor: Readonly<Record<string, unknown>>;
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
  /**
   * @internal Validates the client's `arguments` (absent arrives as `{}`); a promise only when the
   * schema library validates asynchronously.
   */
  checkArguments(
    value: unknown,
  ): ArgumentCheck<Record<string, unknown>> | Promise<ArgumentCheck<Record<string, unknown>>>;
  /** Runs the user's handler. */
  get(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
  /** @internal Turns the handler's value into a `GetPromptResult`, validating every message. */
  toResult(
    value: unknown,
  ):
    | { readonly ok: true; readonly result: Record<string, unknown> }
    | { readonly ok: false; readonly message: string };
  /**
   * Completion values for one argument given its partial `value` and the other arguments
   * already filled in (`context`); null when that argument has no completer.
   */
  complete(
    argument: string,
    value: string,
    context: Readonly<Record<string, string>>,
    ctx: VisibilityContext,
  ): Promise<readonly string[]> | null;
}

/** The common fields of a definition, checked and normalised by {@link checkPrimitiveFields}. */
export interface CheckedPrimitiveFields {
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
  /** The list-entry fields (`name`, `title`, `description`, `icons`, `_meta`), those given only. */
  readonly descriptor: Readonly<Record<string, unknown>>;
}

/**
 * Checks the fields every definition shares (all but `name`, which each kind checks by its own
 * rule) and throws {@link InvalidOptionError} naming the item and field on the first bad one, so
 * a mistake surfaces at startup rather than as a malformed list on the wire.
 */
export function checkPrimitiveFields(
  label: string,
  fields: PrimitiveFields,
): CheckedPrimitiveFields {
  const { name, title, description, icons, scopes, visible, _meta } = fields;
  if (title !== undefined && typeof title !== "string") {
    throw new InvalidOptionError(`${label}: title`, "a string", title);
  }
  if (description !== undefined && typeof description !== "string") {
    throw new InvalidOptionError(`${label}: description`, "a string", description);
  }
  if (icons !== undefined && (!Array.isArray(icons) || !icons.every(isIcon))) {
    throw new InvalidOptionError(
      `${label}: icons`,
      'an array of { src, mimeType?, sizes?: string[], theme?: "light" | "dark" }',
      icons,
    );
  }
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string" && s !== ""))
  ) {
    throw new InvalidOptionError(`${label}: scopes`, "an array of non-empty strings", scopes);
  }
  if (visible !== undefined && typeof visible !== "function") {
    throw new InvalidOptionError(`${label}: visible`, "a function (ctx) => boolean", visible);
  }
  if (_meta !== undefined && !isPlainObject(_meta)) {
    throw new InvalidOptionError(`${label}: _meta`, "an object", _meta);
  }
  const descriptor: Record<string, unknown> = { name };
  if (title !== undefined) descriptor.title = title;
  if (description !== undefined) descriptor.description = description;
  if (icons !== undefined) descriptor.icons = icons.map(copyIcon);
  if (_meta !== undefined) descriptor._meta = { ..._meta };
  return Object.freeze({
    scopes: Object.freeze([...new Set(scopes ?? [])]),
    visible: visible ?? null,
    descriptor,
  });
}

function isIcon(value: unknown): value is Icon {
  if (!isPlainObject(value) || typeof value.src !== "string" || value.src === "") return false;
  if (value.mimeType !== undefined && typeof value.mimeType !== "string") return false;
  if (
    value.sizes !== undefined &&
    (!Array.isArray(value.sizes) || !value.sizes.every((s) => typeof s === "string"))
  ) {
    return false;
  }
  return value.theme === undefined || value.theme === "light" || value.theme === "dark";
}

/** A frozen copy holding only the schema's fields, so later edits by the caller change nothing. */
function copyIcon(icon: Icon): Icon {
  const copy: {
    src: string;
    mimeType?: string;
    sizes?: readonly string[];
    theme?: "light" | "dark";
  } = { src: icon.src };
  if (icon.mimeType !== undefined) copy.mimeType = icon.mimeType;
  if (icon.sizes !== undefined) copy.sizes = Object.freeze([...icon.sizes]);
  if (icon.theme !== undefined) copy.theme = icon.theme;
  return Object.freeze(copy);
}
