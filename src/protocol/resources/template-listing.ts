/**
 * `resources/list` when resource templates enumerate their resources (`list`): the server's own
 * resources first, in the collection's order, then each listing template's resources, template
 * after template in list order, paged as every list is (MCP 2025-11-25 pagination,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination).
 *
 * A page runs as a handler call (the templates' `list` is user code: tracked, cancellable,
 * bounded like a read). Its cursor is the list's sealed cursor (wire/list-cursor.ts: HMAC over
 * the list, the caller's scope and the position, valid on every node sharing the secret) whose
 * position is either "after resource R" or "template T, at the template's own cursor C, item N of
 * that page". The template's own cursor therefore only ever comes back to that template, for the
 * caller it was made for, unchanged.
 */
import { InvalidParamsError } from "../../errors.js";
import type {
  HandlerCall,
  HandlerInvocation,
  HandlerResult,
  PrimitiveCollection,
  VisibilityContext,
} from "../calls/index.js";
import { accessOf } from "../calls/index.js";
import { isPlainObject } from "../wire/index.js";
import { checkResourceFields, type Resource } from "./define-resource.js";
import type { ListedResource, ResourceTemplate } from "./define-resource-template.js";

/** Longest cursor a template's `list` may hand back (it travels sealed in the client's cursor). */
export const MAX_TEMPLATE_CURSOR_LENGTH = 1_024;
/** Most resources one `list` call may return; more is a bug in it, refused. */
export const MAX_TEMPLATE_PAGE_ITEMS = 10_000;
/** Most `list` calls one page makes (templates that list nothing are skipped without limit otherwise). */
const MAX_LIST_CALLS_PER_PAGE = 16;

/** Where a page starts: after a server resource, or inside a template's list. */
export type ListingPosition =
  | { readonly kind: "start" }
  | { readonly kind: "resource"; readonly after: string }
  | {
      readonly kind: "template";
      readonly uriTemplate: string;
      readonly cursor: string | null;
      readonly offset: number;
    };

const START: ListingPosition = Object.freeze({ kind: "start" });

/** The key sealed in a cursor for `position` (JSON; sealed, so only the server makes one). */
export function positionKey(position: ListingPosition): string {
  if (position.kind === "resource") return JSON.stringify(["r", position.after]);
  if (position.kind === "template") {
    return JSON.stringify(["t", position.uriTemplate, position.cursor, position.offset]);
  }
  return JSON.stringify(["s"]);
}

/** The position an opened cursor's key names, or null for a key this module did not make. */
export function positionOf(key: string | null): ListingPosition | null {
  if (key === null) return START;
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const [kind, a, b, c] = parsed as unknown[];
  if (kind === "r" && typeof a === "string") return { kind: "resource", after: a };
  if (
    kind === "t" &&
    typeof a === "string" &&
    (b === null || typeof b === "string") &&
    Number.isSafeInteger(c) &&
    (c as number) >= 0
  ) {
    return { kind: "template", uriTemplate: a, cursor: b, offset: c as number };
  }
  return null;
}

/** What one page of the listing is: list entries, and where the next page starts (null: none). */
export interface ListingPage {
  readonly resources: readonly Readonly<Record<string, unknown>>[];
  readonly next: ListingPosition | null;
}

/** What a listing page needs of the resources feature. */
export interface ListingSource {
  readonly resources: PrimitiveCollection<Resource>;
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  readonly pageSize: number;
  readonly maxTemplateValueLength: number;
}

/** One `resources/list` page that reaches into templates' lists, as a handler call runs it. */
export class TemplateListingInvocation implements HandlerInvocation {
  readonly method = "resources/list";
  readonly kind = "resource-template";
  readonly name = "resources/list";

  constructor(
    private readonly source: ListingSource,
    private readonly position: ListingPosition,
    private readonly visibility: VisibilityContext,
    /** Turns the page into the result (the cursor sealed for the caller, caching hints). */
    private readonly shape: (page: ListingPage, modern: boolean) => Record<string, unknown>,
  ) {}

  invoke(ctx: HandlerCall): Promise<ListingPage> {
    return listingPage(this.source, this.position, this.visibility, ctx);
  }

  toResult(value: unknown, modern: boolean): HandlerResult {
    return { ok: true, result: this.shape(value as ListingPage, modern) };
  }
}

/** One page from `position` (see the module comment). */
async function listingPage(
  source: ListingSource,
  position: ListingPosition,
  visibility: VisibilityContext,
  ctx: HandlerCall,
): Promise<ListingPage> {
  const { pageSize } = source;
  const resources: Readonly<Record<string, unknown>>[] = [];
  const templates = source.resourceTemplates
    .values()
    .filter((template) => template.list !== null && accessOf(template, visibility) === "allowed");
  let index = 0;
  let cursor: string | null = null;
  let offset = 0;
  if (position.kind === "template") {
    index = templates.findIndex((template) => template.uriTemplate === position.uriTemplate);
    // Removed, disabled or hidden since: the client starts over, as for any list.
    if (index < 0) throw new InvalidParamsError("Invalid cursor");
    ({ cursor, offset } = position);
  } else {
    const page = source.resources.page(
      visibility,
      position.kind === "resource" ? position.after : null,
      pageSize,
    );
    if (page === null) throw new InvalidParamsError("Invalid cursor");
    for (const item of page.items) resources.push(item.descriptor);
    if (page.lastKey !== null)
      return { resources, next: { kind: "resource", after: page.lastKey } };
  }
  for (let calls = 0; index < templates.length; calls++) {
    const template = templates[index] as ResourceTemplate;
    if (resources.length === pageSize || calls === MAX_LIST_CALLS_PER_PAGE) {
      return {
        resources,
        next: { kind: "template", uriTemplate: template.uriTemplate, cursor, offset },
      };
    }
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const listed = await listOnce(template, cursor, ctx, source.maxTemplateValueLength);
    const room = pageSize - resources.length;
    const rest = listed.resources.slice(offset);
    for (const item of rest.slice(0, room)) resources.push(item);
    if (rest.length > room) {
      const next = {
        kind: "template",
        uriTemplate: template.uriTemplate,
        cursor,
        offset: offset + room,
      } as const;
      return { resources, next };
    }
    offset = 0;
    if (listed.nextCursor !== null) {
      cursor = listed.nextCursor;
    } else {
      cursor = null;
      index++;
    }
  }
  return { resources, next: null };
}

/** One call of a template's `list`, its answer checked; a TypeError says what is wrong with it. */
async function listOnce(
  template: ResourceTemplate,
  cursor: string | null,
  ctx: HandlerCall,
  maxValueLength: number,
): Promise<{ resources: Readonly<Record<string, unknown>>[]; nextCursor: string | null }> {
  const label = `resource template ${template.uriTemplate}: list`;
  const answer: unknown = await (template.list as NonNullable<ResourceTemplate["list"]>)(
    { cursor: cursor ?? undefined },
    ctx,
  );
  const items: unknown = Array.isArray(answer)
    ? answer
    : isPlainObject(answer)
      ? answer.resources
      : undefined;
  if (!Array.isArray(items)) {
    throw new TypeError(`${label} must return resources, or { resources, nextCursor? }`);
  }
  if (items.length > MAX_TEMPLATE_PAGE_ITEMS) {
    throw new TypeError(`${label} returned more than ${MAX_TEMPLATE_PAGE_ITEMS} resources at once`);
  }
  let nextCursor: string | null = null;
  if (!Array.isArray(answer) && isPlainObject(answer) && answer.nextCursor !== undefined) {
    const next = answer.nextCursor;
    if (typeof next !== "string" || next.length === 0 || next.length > MAX_TEMPLATE_CURSOR_LENGTH) {
      throw new TypeError(
        `${label}: nextCursor must be a string of 1-${MAX_TEMPLATE_CURSOR_LENGTH} characters`,
      );
    }
    nextCursor = next;
  }
  const resources = items.map((item, i) =>
    listedEntry(template, item, `${label}[${i}]`, maxValueLength),
  );
  return { resources, nextCursor };
}

/** One listed resource as its `resources/list` entry: checked like a defined resource, URI matched. */
function listedEntry(
  template: ResourceTemplate,
  item: unknown,
  label: string,
  maxValueLength: number,
): Readonly<Record<string, unknown>> {
  if (!isPlainObject(item)) throw new TypeError(`${label} must be an object`);
  const listed = item as unknown as ListedResource;
  const { uri, size } = listed;
  // A listed URI the template does not match could not be read: a bug in `list`.
  if (typeof uri !== "string" || !template.match(uri, maxValueLength).ok) {
    throw new TypeError(`${label}: uri must match ${template.uriTemplate}`);
  }
  if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
    throw new TypeError(`${label}: size must be a non-negative integer`);
  }
  const mimeType = listed.mimeType ?? template.mimeType;
  const fields = checkResourceFields(label, {
    name: listed.name,
    ...(listed.title === undefined ? {} : { title: listed.title }),
    ...(listed.description === undefined ? {} : { description: listed.description }),
    ...(listed.icons === undefined ? {} : { icons: listed.icons }),
    ...(listed._meta === undefined ? {} : { _meta: listed._meta }),
    ...(mimeType === undefined ? {} : { mimeType }),
    ...(listed.annotations === undefined ? {} : { annotations: listed.annotations }),
  });
  const entry: Record<string, unknown> = { uri, ...fields.descriptor };
  if (size !== undefined) entry.size = size;
  return Object.freeze(entry);
}
