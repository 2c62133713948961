/**
 * Resource templates: parameterised resources named by an RFC 6570 URI template
 * (https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource-templates).
 * Matching a requested URI against a template is done by `uri-template-matcher` (RFC 6570
 * parsing and reverse matching, rather than hand-written patterns); every extracted value is
 * bounded in length before a handler sees it.
 */
import { UriTemplateMatcher } from "uri-template-matcher";

import { InvalidOptionError } from "../../errors.js";
import type { Icon, ToolContext, VisibilityContext } from "../calls/index.js";
import { isPlainObject } from "../wire/index.js";
import {
  type CheckedResourceFields,
  checkResourceFields,
  MAX_DEFINED_URI_LENGTH,
  type ResourceAnnotations,
  type ResourceFieldsBase,
} from "./define-resource.js";
import type { ResourceReadValue } from "./resource-contents.js";

/** Completes one template variable from its partial value and the variables already chosen. */
export type VariableCompleter = (
  value: string,
  context: { readonly arguments: Readonly<Record<string, string>> },
  ctx: VisibilityContext,
) => readonly string[] | Promise<readonly string[]>;

/** One resource a template stands for, as `resources/list` shows it (MCP `Resource`). */
export interface ListedResource {
  /** The resource's URI: it must match the template (a read of it reaches the template). */
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  /** Default: the template's `mimeType`. */
  readonly mimeType?: string;
  readonly size?: number;
  readonly annotations?: ResourceAnnotations;
  readonly icons?: readonly Icon[];
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/**
 * One page of a template's resources: `nextCursor` (at most 1 024 characters) is where the
 * template's next page starts, handed back to `list` as `cursor`; absent, this was the last.
 */
export interface TemplateListPage {
  readonly resources: readonly ListedResource[];
  readonly nextCursor?: string;
}

/**
 * Enumerates the resources a template stands for, for `resources/list`: every one at once (an
 * array), or a page at a time (`cursor` is undefined for the first page, then the `nextCursor`
 * the previous page returned; the server seals it in the client's cursor, so it comes back only
 * to this template, for the same caller). `ctx` is a handler's context: who asks, and a signal
 * that aborts if the request is cancelled.
 */
export type TemplateLister = (
  request: { readonly cursor: string | undefined },
  ctx: ToolContext,
) =>
  | TemplateListPage
  | readonly ListedResource[]
  | Promise<TemplateListPage | readonly ListedResource[]>;

/** What {@link defineResourceTemplate} takes. */
export interface ResourceTemplateDefinition extends ResourceFieldsBase {
  /** An RFC 6570 URI template, e.g. `"demo://sleep/{ms}"`: unique on the server. */
  readonly uriTemplate: string;
  /** Completers per variable name, for `completion/complete` with `ref/resource`. */
  readonly complete?: Readonly<Record<string, VariableCompleter>>;
  /** Reads the resource a matching URI names; `variables` are the decoded template values. */
  readonly read: (
    request: { readonly uri: string; readonly variables: Readonly<Record<string, string>> },
    ctx: ToolContext,
  ) => Promise<ResourceReadValue> | ResourceReadValue;
  /**
   * Lists the concrete resources the template stands for: they join `resources/list` after the
   * server's own resources, paged like it (docs/schemas.md, "Resource template lists"). Absent:
   * the template is listed only in `resources/templates/list`.
   */
  readonly list?: TemplateLister;
}

/** The outcome of matching a URI against a template. */
export type TemplateMatch =
  | { readonly ok: true; readonly variables: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly tooLong: boolean };

/** A defined resource template, ready for `createMcpServer({ resourceTemplates })`. */
export interface ResourceTemplate {
  readonly uriTemplate: string;
  readonly name: string;
  /** Its `resources/templates/list` entry, frozen. */
  readonly descriptor: Readonly<Record<string, unknown>>;
  readonly mimeType: string | undefined;
  /** The variable names the template has, in order. */
  readonly variables: readonly string[];
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
  readonly cacheScope: "public" | "private";
  readonly ttlMs: number | null;
  readonly read: ResourceTemplateDefinition["read"];
  /** What enumerates its resources for `resources/list`, or null. */
  readonly list: TemplateLister | null;
  /** @internal Matches a URI; values longer than `maxValueLength` make it `tooLong`. */
  match(uri: string, maxValueLength: number): TemplateMatch;
  /** The completer of one variable, or null. */
  completer(variable: string): VariableCompleter | null;
}

/** RFC 6570 §2.2 expressions: an optional operator, then comma-separated varspecs. */
const EXPRESSION = /\{([+#./;?&]?)([^}]*)\}/g;
const VARSPEC =
  /^([A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*(?::[1-9][0-9]{0,3})?$/;

/**
 * Defines a resource template.
 *
 * @example
 * ```ts
 * const sleep = defineResourceTemplate({
 *   uriTemplate: "demo://sleep/{ms}",
 *   name: "sleep",
 *   complete: { ms: (value) => ["100", "1000", "10000"].filter((v) => v.startsWith(value)) },
 *   read: async ({ variables }, ctx) => {
 *     await new Promise((r) => setTimeout(r, Number(variables.ms), { signal: ctx.signal }));
 *     return `slept ${variables.ms} ms`;
 *   },
 * });
 * ```
 */
export function defineResourceTemplate(definition: ResourceTemplateDefinition): ResourceTemplate {
  if (!isPlainObject(definition)) {
    throw new InvalidOptionError("resource template", "an object", definition);
  }
  const { uriTemplate, complete, read, list } = definition;
  if (
    typeof uriTemplate !== "string" ||
    uriTemplate.length === 0 ||
    uriTemplate.length > MAX_DEFINED_URI_LENGTH
  ) {
    throw new InvalidOptionError(
      "resourceTemplate.uriTemplate",
      `an RFC 6570 URI template of 1-${MAX_DEFINED_URI_LENGTH} characters`,
      uriTemplate,
    );
  }
  const label = `resource template ${uriTemplate}`;
  const variables = templateVariables(label, uriTemplate);
  const matcher = new UriTemplateMatcher();
  try {
    matcher.add(uriTemplate);
  } catch {
    throw new InvalidOptionError(
      `${label}: uriTemplate`,
      "a valid RFC 6570 URI template",
      uriTemplate,
    );
  }
  const base: CheckedResourceFields = checkResourceFields(label, definition);
  if (typeof read !== "function")
    throw new InvalidOptionError(`${label}: read`, "a function", read);
  if (list !== undefined && typeof list !== "function") {
    throw new InvalidOptionError(`${label}: list`, "a function", list);
  }
  const completers = new Map<string, VariableCompleter>();
  if (complete !== undefined) {
    if (!isPlainObject(complete)) {
      throw new InvalidOptionError(`${label}: complete`, "an object of functions", complete);
    }
    for (const [variable, completer] of Object.entries(complete)) {
      if (!variables.includes(variable) || typeof completer !== "function") {
        throw new InvalidOptionError(
          `${label}: complete.${variable}`,
          `a function, for one of the template's variables (${variables.join(", ")})`,
          completer,
        );
      }
      completers.set(variable, completer as VariableCompleter);
    }
  }
  const descriptor: Record<string, unknown> = { uriTemplate, ...base.descriptor };
  return Object.freeze({
    uriTemplate,
    name: definition.name,
    descriptor: Object.freeze(descriptor),
    mimeType: definition.mimeType,
    variables: Object.freeze(variables),
    scopes: base.scopes,
    visible: base.visible,
    cacheScope: definition.cacheScope ?? "private",
    ttlMs: definition.ttlMs ?? null,
    read,
    list: list ?? null,
    match(uri: string, maxValueLength: number): TemplateMatch {
      let found: ReturnType<UriTemplateMatcher["match"]>;
      try {
        found = matcher.match(uri);
      } catch {
        return NO_MATCH;
      }
      if (found === null) return NO_MATCH;
      const values: Record<string, string> = Object.create(null);
      for (const [name, value] of Object.entries(found.params)) {
        // Explode modifiers are refused at definition, so every value is one string.
        if (typeof value !== "string") return NO_MATCH;
        if (value.length > maxValueLength) return TOO_LONG;
        values[name] = value;
      }
      return { ok: true, variables: Object.freeze(values) };
    },
    completer(variable: string): VariableCompleter | null {
      return completers.get(variable) ?? null;
    },
  });
}

const NO_MATCH: TemplateMatch = Object.freeze({ ok: false, tooLong: false });
const TOO_LONG: TemplateMatch = Object.freeze({ ok: false, tooLong: true });

/**
 * The variable names of a template, checked against RFC 6570's varspec grammar; explode
 * modifiers (`*`) are refused, since a handler gets one string per variable.
 */
function templateVariables(label: string, template: string): string[] {
  const names: string[] = [];
  for (const expression of template.matchAll(EXPRESSION)) {
    for (const spec of (expression[2] ?? "").split(",")) {
      if (!VARSPEC.test(spec)) {
        throw new InvalidOptionError(
          `${label}: uriTemplate`,
          "RFC 6570 variables without explode modifiers (e.g. {id}, {+path}, {?q,lang})",
          spec,
        );
      }
      const name = spec.replace(/:.*$/, "");
      if (names.includes(name)) {
        throw new InvalidOptionError(`${label}: uriTemplate`, "each variable once", name);
      }
      names.push(name);
    }
  }
  if (names.length === 0) {
    throw new InvalidOptionError(
      `${label}: uriTemplate`,
      "at least one {variable} (a fixed URI is a resource: defineResource)",
      template,
    );
  }
  return names;
}
