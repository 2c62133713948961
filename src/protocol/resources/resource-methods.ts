/**
 * The resources capability (MCP 2025-11-25 server/resources,
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources, and 2026-07-28):
 * `resources/list`, `resources/templates/list`, `resources/read`, and on 2025-era sessions
 * `resources/subscribe` / `resources/unsubscribe`; the served resources and templates, and what
 * `initialize` and `server/discover` advertise of them.
 */
import { ErrorCode } from "../../errors.js";
import type {
  HandlerCall,
  HandlerInvocation,
  HandlerResult,
  MethodDefinition,
  MethodHost,
  MethodRequest,
  ProtocolFeature,
} from "../calls/index.js";
import {
  accessOf,
  bucketOf,
  listMethod,
  PrimitiveCollection,
  progressTokenOf,
  visibilityOf,
} from "../calls/index.js";
import type { ResourceSubscriptions, SubscribeOutcome } from "../subscriptions/index.js";
import type { ListCursors } from "../wire/index.js";
import { successResponseJson } from "../wire/index.js";
import type { Resource } from "./define-resource.js";
import type { ResourceTemplate } from "./define-resource-template.js";
import { ResourceCollection } from "./resource-collection.js";
import { isResourceUri, toContents } from "./resource-contents.js";
import {
  type ListingPage,
  type ListingSource,
  positionKey,
  positionOf,
  TemplateListingInvocation,
} from "./template-listing.js";

/** What {@link ResourceFeature} takes. */
export interface ResourceFeatureOptions {
  readonly host: MethodHost;
  readonly resources?: readonly Resource[] | undefined;
  readonly resourceTemplates?: readonly ResourceTemplate[] | undefined;
  readonly cursors: ListCursors;
  readonly pageSize: number;
  readonly cacheTtlMs: number;
  /** Longest resource URI a request may name. */
  readonly maxUriLength: number;
  /** Longest value one template variable may match. */
  readonly maxTemplateValueLength: number;
  /**
   * The 2025-era subscription table, when subscriptions are served (sessions on): then
   * `resources/subscribe` and `resources/unsubscribe` are answered and advertised.
   */
  readonly subscriptions: ResourceSubscriptions | null;
  /** Whether 2026-07-28 `subscriptions/listen` is served (it carries updates and list changes). */
  readonly listen: boolean;
}

/**
 * The resources capability.
 *
 * @example
 * ```ts
 * const resources = new ResourceFeature({ host, resources: [config], cursors, pageSize: 100,
 *   cacheTtlMs: 60_000, maxUriLength: 8_192, maxTemplateValueLength: 1_024, subscriptions: null,
 *   listen: false });
 * ```
 */
export class ResourceFeature implements ProtocolFeature {
  readonly id = "resources";
  /** The served direct resources (keyed by URI). */
  readonly resources: ResourceCollection;
  /** The served resource templates (keyed by URI template). */
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025: Readonly<Record<string, unknown>>;
  readonly capabilities2026: Readonly<Record<string, unknown>>;
  private readonly host: MethodHost;
  private readonly cacheTtlMs: number;
  private readonly maxUriLength: number;
  private readonly maxTemplateValueLength: number;

  constructor(options: ResourceFeatureOptions) {
    this.host = options.host;
    this.cacheTtlMs = options.cacheTtlMs;
    this.maxUriLength = options.maxUriLength;
    this.maxTemplateValueLength = options.maxTemplateValueLength;
    this.resources = new ResourceCollection({
      list: "resources",
      shape: { key: "uri", methods: ["read"], what: "a defineResource() result" },
      items: options.resources,
    });
    this.resourceTemplates = new PrimitiveCollection<ResourceTemplate>({
      list: "resourceTemplates",
      shape: {
        key: "uriTemplate",
        methods: ["match", "read"],
        what: "a defineResourceTemplate() result",
      },
      items: options.resourceTemplates,
    });
    const { subscriptions } = options;
    this.resources.serveSubscriptions(subscriptions);
    const plainList = listMethod({ ...options, collection: this.resources, field: "resources" });
    const listing: ListingSource = {
      resources: this.resources,
      resourceTemplates: this.resourceTemplates,
      pageSize: options.pageSize,
      maxTemplateValueLength: options.maxTemplateValueLength,
    };
    const methods: Record<string, MethodDefinition> = {
      // Templates that enumerate their resources make the list run their code: then a handler
      // call; otherwise the plain list of the collection, answered at once.
      "resources/list": {
        eras: "both",
        run: (r) =>
          this.resourceTemplates.values().some((template) => template.list !== null)
            ? this.listWithTemplates(r, listing, options)
            : plainList.run(r),
      },
      "resources/templates/list": listMethod({
        ...options,
        collection: this.resourceTemplates,
        field: "resourceTemplates",
      }),
      "resources/read": { eras: "both", holds: "stream", run: (r) => this.read(r) },
    };
    if (subscriptions !== null) {
      // 2025-era only: the 2026-07-28 revision removed these RPCs (subscriptions/listen).
      methods["resources/subscribe"] = {
        eras: "2025",
        checkParams: (params) => this.checkUri(params),
        run: (r) => this.subscription(r, subscriptions, true),
      };
      methods["resources/unsubscribe"] = {
        eras: "2025",
        checkParams: (params) => this.checkUri(params),
        run: (r) => this.subscription(r, subscriptions, false),
      };
    }
    this.methods = methods;
    this.capabilities2025 = {
      resources:
        subscriptions === null ? { listChanged: false } : { subscribe: true, listChanged: true },
    };
    this.capabilities2026 = {
      resources: options.listen ? { subscribe: true, listChanged: true } : {},
    };
  }

  /** The caching hints of a read's result. */
  readCaching(item: Resource | ResourceTemplate): { ttlMs: number; cacheScope: string } {
    const dependsOnCaller = item.visible !== null || item.scopes.length > 0;
    return {
      ttlMs: item.ttlMs ?? this.cacheTtlMs,
      cacheScope: dependsOnCaller ? "private" : item.cacheScope,
    };
  }

  private read(request: MethodRequest): Promise<void> {
    const { host } = this;
    const uri = request.params?.uri;
    if (!isResourceUri(uri, this.maxUriLength)) {
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `uri must be an absolute RFC 3986 URI of at most ${this.maxUriLength} characters`,
      );
    }
    const ctx = visibilityOf(request.meta);
    const resource = this.resources.get(uri);
    if (resource !== undefined) {
      const access = accessOf(resource, ctx);
      if (access === "forbidden") return host.forbidden(request, resource.scopes);
      if (access === "allowed") {
        return host.startCall(
          request,
          new ReadInvocation(this, resource, uri, null),
          progressTokenOf(request.params),
        );
      }
    }
    for (const template of this.resourceTemplates.values()) {
      const access = accessOf(template, ctx);
      if (access === "hidden") continue;
      const match = template.match(uri, this.maxTemplateValueLength);
      if (!match.ok) {
        if (!match.tooLong) continue;
        return host.answerError(
          request,
          ErrorCode.InvalidParams,
          `A template variable is longer than ${this.maxTemplateValueLength} characters`,
        );
      }
      if (access === "forbidden") return host.forbidden(request, template.scopes);
      return host.startCall(
        request,
        new ReadInvocation(this, template, uri, match.variables),
        progressTokenOf(request.params),
      );
    }
    // MCP 2026-07-28 resources, "Error Handling": -32602 with the URI; 2025-11-25: -32002.
    const code = request.modern === null ? ErrorCode.ResourceNotFound : ErrorCode.InvalidParams;
    return host.answerError(request, code, "Resource not found", { uri });
  }

  /** `resources/list` reaching into templates' lists (template-listing.ts). */
  private listWithTemplates(
    request: MethodRequest,
    source: ListingSource,
    options: ResourceFeatureOptions,
  ): Promise<void> {
    const { host } = this;
    const { scope } = request.meta;
    const cursor = request.params?.cursor;
    const key = cursor === undefined ? null : options.cursors.open("resources", scope, cursor);
    const position = cursor !== undefined && key === null ? null : positionOf(key);
    if (position === null)
      return host.answerError(request, ErrorCode.InvalidParams, "Invalid cursor");
    const shape = (page: ListingPage, modern: boolean): Record<string, unknown> => {
      const result: Record<string, unknown> = { resources: page.resources };
      if (page.next !== null) {
        result.nextCursor = options.cursors.seal("resources", scope, positionKey(page.next));
      }
      if (modern) {
        result.ttlMs = options.cacheTtlMs;
        // A template's `list` sees who asks: what it lists may depend on the caller.
        result.cacheScope = "private";
      }
      return result;
    };
    return host.startCall(
      request,
      new TemplateListingInvocation(source, position, visibilityOf(request.meta), shape),
    );
  }

  private checkUri(params: Readonly<Record<string, unknown>> | undefined): string | null {
    const uri = params?.uri;
    return typeof uri !== "string" || uri.length === 0 || uri.length > this.maxUriLength
      ? "uri must be a non-empty string"
      : null;
  }

  /**
   * `resources/subscribe` / `resources/unsubscribe` (2025-11-25 server/resources
   * "Subscriptions"): a session's own table entry; any URI may be named (a resource may be
   * served later, or be a template's match). Needs a session: updates go to its GET stream.
   */
  private subscription(
    request: MethodRequest,
    table: ResourceSubscriptions,
    subscribe: boolean,
  ): Promise<void> {
    const { host } = this;
    const uri = request.params?.uri as string;
    const { sessionId } = request.meta;
    if (sessionId === null) {
      return host.answerError(
        request,
        ErrorCode.InvalidRequest,
        "Subscriptions need a session: send initialize first and present its Mcp-Session-Id.",
      );
    }
    if (!subscribe) {
      table.unsubscribe(sessionId, uri);
      return host.answer(request, successResponseJson(request.id, "{}"));
    }
    // Without a stable client identity the session itself is what a later request finds (by its
    // id), so it pays: the per-session bound and the global ones still hold.
    const outcome = table.subscribe(sessionId, uri, bucketOf(request.meta) ?? request.meta.scope);
    if (outcome !== "subscribed") {
      return host.answerError(request, ErrorCode.ServerError, SUBSCRIPTION_REFUSALS[outcome]);
    }
    return host.answer(request, successResponseJson(request.id, "{}"));
  }
}

/** What a refused `resources/subscribe` is told. */
const SUBSCRIPTION_REFUSALS: Readonly<Record<Exclude<SubscribeOutcome, "subscribed">, string>> = {
  "session-full": "Too many subscriptions for this session; unsubscribe from one first.",
  "scope-full": "Too many subscriptions for this client; unsubscribe from one first.",
  full: "This server holds no subscriptions.",
};

/** A `resources/read` of a direct resource (`variables` null) or of a template's match. */
class ReadInvocation implements HandlerInvocation {
  readonly method = "resources/read";
  readonly kind: "resource" | "resource-template";
  constructor(
    private readonly feature: ResourceFeature,
    private readonly item: Resource | ResourceTemplate,
    readonly name: string,
    private readonly variables: Readonly<Record<string, string>> | null,
  ) {
    this.kind = variables === null ? "resource" : "resource-template";
  }
  invoke(ctx: HandlerCall): unknown {
    if (this.variables === null) return (this.item as Resource).read({ uri: this.name }, ctx);
    return (this.item as ResourceTemplate).read({ uri: this.name, variables: this.variables }, ctx);
  }
  toResult(value: unknown, modern: boolean): HandlerResult {
    const contents = toContents(value, { uri: this.name, mimeType: this.item.mimeType });
    if (contents === null) {
      return { ok: false, error: new TypeError("a resource read returned no valid contents") };
    }
    const result: Record<string, unknown> = { contents };
    if (modern) Object.assign(result, this.feature.readCaching(this.item));
    return { ok: true, result };
  }
}
