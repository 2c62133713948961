/**
 * The list methods (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`):
 * one page of a collection as the caller may see it (MCP pagination,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination; 2026-07-28
 * caching hints: `private` when what is listed depends on the caller).
 */
import { ErrorCode } from "../../errors.js";
import type { ListCursors, ListKind } from "../wire/index.js";
import type { MethodDefinition, MethodHost, MethodRequest } from "./method-table.js";
import { visibilityOf } from "./method-table.js";
import type { ListedItem, PrimitiveCollection } from "./primitive-collection.js";

/** What {@link listMethod} takes. */
export interface ListMethodOptions<T extends ListedItem> {
  readonly host: MethodHost;
  readonly collection: PrimitiveCollection<T>;
  /** The result's field, and the kind its cursors are sealed for. */
  readonly field: ListKind;
  readonly cursors: ListCursors;
  readonly pageSize: number;
  /** `ttlMs` of 2026-07-28 results. */
  readonly cacheTtlMs: number;
}

/**
 * A list method served in both eras.
 *
 * @example
 * ```ts
 * const toolsList = listMethod({ host, collection: tools, field: "tools", cursors, pageSize: 100, cacheTtlMs: 60_000 });
 * ```
 */
export function listMethod<T extends ListedItem>(options: ListMethodOptions<T>): MethodDefinition {
  return { eras: "both", run: (request) => listPage(options, request) };
}

function listPage<T extends ListedItem>(
  options: ListMethodOptions<T>,
  request: MethodRequest,
): Promise<void> {
  const { host, collection, field, cursors } = options;
  const { scope } = request.meta;
  const cursor = request.params?.cursor;
  let after: string | null = null;
  if (cursor !== undefined) {
    after = cursors.open(field, scope, cursor);
    if (after === null) return host.answerError(request, ErrorCode.InvalidParams, "Invalid cursor");
  }
  const page = collection.page(visibilityOf(request.meta), after, options.pageSize);
  if (page === null) return host.answerError(request, ErrorCode.InvalidParams, "Invalid cursor");
  const result: Record<string, unknown> = {
    [field]: page.items.map((item) => item.descriptor),
  };
  if (page.lastKey !== null) result.nextCursor = cursors.seal(field, scope, page.lastKey);
  if (request.modern !== null) {
    result.ttlMs = options.cacheTtlMs;
    result.cacheScope = collection.dependsOnCaller ? "private" : "public";
  }
  return host.answerResult(request, result);
}
