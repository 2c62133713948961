/**
 * The extension seam: an extension (SEP-2133, https://modelcontextprotocol.io/seps/2133-extensions;
 * 2026-07-28 basic/versioning, "Extension Negotiation",
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#extension-negotiation)
 * is an identifier, a settings object published under `capabilities.extensions[id]`, and the
 * methods it adds. {@link defineExtension} checks one at definition; {@link ExtensionFeature}
 * turns it into a {@link ProtocolFeature} of the method table, so its methods are routed, era-checked,
 * tracked, bounded and cancelled like every built-in method, and its handlers run as handler
 * calls (cancellation by notification and by disconnect, the stream cancel timeout, tracing and
 * metrics).
 *
 * Negotiation: the server declares the extension in `server/discover` (2026-07-28) and, per
 * SEP-2133 "Server Capabilities", in the `initialize` result (2025-11-25). The client declares it
 * in `capabilities.extensions` — per request in `_meta["io.modelcontextprotocol/clientCapabilities"]`
 * (2026-07-28), in its `initialize` (2025-11-25, kept with its session). A method may require the
 * client's declaration; a request without it is then refused (SEP-2133, "Graceful Degradation":
 * "reject the request with an appropriate error").
 */
import { ErrorCode, InvalidOptionError } from "../../errors.js";
import { errorResponseJson, isPlainObject } from "../wire/index.js";
import type { HandlerCall, HandlerInvocation } from "./handler-call/handler-call.js";
import type { HandlerResult } from "./handler-call/handler-outcome.js";
import type {
  MethodDefinition,
  MethodEras,
  MethodHolds,
  MethodHost,
  MethodRequest,
  NegotiatedExtension,
  ProtocolFeature,
  ServerCapabilities,
} from "./method-table.js";
import { progressTokenOf } from "./method-table.js";
import type { ToolContext } from "./tool-context.js";

/** A JSON object (an extension's settings, a method's result). */
export type JsonObject = Readonly<Record<string, unknown>>;

/** What an extension method's handler learns of its request besides its params. */
export interface ExtensionRequest {
  /** The extension's identifier. */
  readonly extension: string;
  /** The method called. */
  readonly method: string;
  /** `"2025-11-25"` (session era) or `"2026-07-28"`. */
  readonly era: "2025-11-25" | "2026-07-28";
  /**
   * The settings object the client declared for this extension, or null when it declared none
   * (or, in the 2025 era, when the server was not told: a stateless request). In the 2025 era
   * only the declaration is kept with the session, so its settings read as `{}`.
   */
  readonly clientSettings: JsonObject | null;
}

/**
 * A method an extension adds, whose handler runs as a handler call.
 *
 * @example
 * ```ts
 * const method: ExtensionMethod = {
 *   handler: async (params, ctx) => ({ echoed: params.text, scope: ctx.scope }),
 * };
 * ```
 */
export interface ExtensionMethod {
  /** Which era serves it. Default: the extension's `eras`. */
  readonly eras?: MethodEras | undefined;
  /**
   * Whether a client must declare the extension to call it (2026-07-28: -32021 naming the
   * extension, HTTP 400; 2025-11-25: -32601). Default: the extension's `requireClientDeclaration`.
   */
  readonly requireClientDeclaration?: boolean | undefined;
  /**
   * Checks `params` before the handler runs: a message for -32602 Invalid params, or null.
   * `params` is hostile input: check what you read.
   */
  readonly checkParams?: ((params: JsonObject) => string | null) | undefined;
  /**
   * `"stream"` (default): a running request also holds a stream unit of its scope when answered on
   * an SSE stream (it may run long and report progress); `"request"`: only its request unit.
   */
  readonly holds?: MethodHolds | undefined;
  /**
   * Answers the request: its result object (`resultType` is added for 2026-07-28). Throw an
   * `InvalidParamsError` for -32602 with its message; any other throw is -32603, reported through
   * `onError`. `ctx` is the context of a tool handler: `signal`, `progress`, `log`, scope and
   * principal (asking the client is not offered to extension methods).
   */
  readonly handler: (
    params: JsonObject,
    ctx: ToolContext,
    request: ExtensionRequest,
  ) => JsonObject | Promise<JsonObject>;
}

/**
 * A method answered by the library itself (the built-in extensions), with the dispatcher's
 * {@link MethodHost}: it may answer with any status and headers or start handler calls of its own.
 *
 * @internal
 */
export interface RawExtensionMethod {
  readonly eras?: MethodEras | undefined;
  readonly requireClientDeclaration?: boolean | undefined;
  readonly checkParams?: ((params: JsonObject) => string | null) | undefined;
  readonly holds?: MethodHolds | undefined;
  readonly run: (request: MethodRequest, host: MethodHost) => Promise<void>;
}

/** What {@link defineExtension} takes. */
export interface ExtensionDefinition {
  /**
   * `{vendor-prefix}/{name}`: the prefix a dot-separated series of labels (a reversed domain you
   * control; `io.modelcontextprotocol/` is the official extensions'), the name alphanumeric with
   * `-`, `_` and `.` inside (SEP-2133, "Definition"; 2026-07-28 basic, "_meta" key rules).
   */
  readonly id: string;
  /** The settings object published under `capabilities.extensions[id]`. Default `{}`. */
  readonly settings?: JsonObject | undefined;
  /** The methods it adds, by name (a name another feature defines is refused at construction). */
  readonly methods?: Readonly<Record<string, ExtensionMethod>> | undefined;
  /**
   * Where the extension is declared and its methods served by default: `"2026"` (2026-07-28
   * `server/discover`), `"2025"` (2025-11-25 `initialize`) or `"both"`. Default `"both"`.
   */
  readonly eras?: MethodEras | undefined;
  /** Whether its methods require the client's declaration (see {@link ExtensionMethod}). Default false. */
  readonly requireClientDeclaration?: boolean | undefined;
  /**
   * Other server capabilities the extension needs advertised (merged by top-level key), e.g.
   * `{ resources: {} }`. Default none.
   */
  readonly capabilities?: ServerCapabilities | undefined;
  /**
   * Declares the extension only to a client whose own declaration passes: called with the
   * settings the client declared for `id` (null when it declared none; hostile input, check what
   * you read; a throw counts as false) on each `server/discover` (2026-07-28) and `initialize`
   * (2025-11-25). Default: declared to every client.
   */
  readonly declareWhen?: ((clientSettings: JsonObject | null) => boolean) | undefined;
}

/**
 * An extension as {@link defineExtension} checked it: give it to `createMcpServer({ extensions })`.
 */
export interface Extension {
  readonly id: string;
  readonly settings: JsonObject;
  readonly eras: MethodEras;
  readonly requireClientDeclaration: boolean;
  readonly capabilities: ServerCapabilities;
  /** Its {@link ExtensionDefinition.declareWhen}, or null: declared to every client. */
  readonly declareWhen: ((clientSettings: JsonObject | null) => boolean) | null;
  readonly methods: Readonly<Record<string, ExtensionMethod>>;
  /**
   * Methods the library answers itself (the built-in extensions).
   *
   * @internal
   */
  readonly rawMethods: Readonly<Record<string, RawExtensionMethod>>;
  /**
   * What the 2025-11-25 `initialize` publishes instead of `extensions[id]` (a built-in extension
   * that was a core capability then: tasks); null: `extensions[id]`.
   *
   * @internal
   */
  readonly capabilities2025: ServerCapabilities | null;
}

/** Longest extension id or method name accepted. */
const MAX_NAME_LENGTH = 256;
// SEP-2133 "Definition": `_meta` key rules with a mandatory prefix (2026-07-28 basic, "_meta").
const LABEL = "[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?";
const EXTENSION_ID = new RegExp(
  `^${LABEL}(?:\\.${LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`,
);
/** A method name: printable ASCII without spaces. */
const METHOD_NAME = /^[\x21-\x7e]+$/;
const ERAS: ReadonlySet<unknown> = new Set(["2025", "2026", "both"]);
const HOLDS: ReadonlySet<unknown> = new Set(["request", "stream"]);

/**
 * Whether `id` is a valid extension identifier (`{vendor-prefix}/{name}`).
 *
 * @example
 * ```ts
 * isExtensionId("com.example/my-extension"); // true
 * isExtensionId("my-extension"); // false: the prefix is mandatory
 * ```
 */
export function isExtensionId(id: unknown): id is string {
  return typeof id === "string" && id.length <= MAX_NAME_LENGTH && EXTENSION_ID.test(id);
}

/**
 * Checks an extension once, at definition (throws {@link InvalidOptionError}).
 *
 * @example
 * ```ts
 * const echo = defineExtension({
 *   id: "com.example/echo",
 *   settings: { version: 1 },
 *   methods: {
 *     "echo/say": { handler: (params) => ({ text: String(params.text ?? "") }) },
 *   },
 * });
 * const server = createMcpServer({ extensions: [echo] });
 * ```
 */
export function defineExtension(definition: ExtensionDefinition): Extension {
  return checkExtension(definition, {}, null);
}

/**
 * A built-in extension whose methods the library answers itself.
 *
 * @internal
 */
export function defineBuiltInExtension(
  definition: Omit<ExtensionDefinition, "methods"> & {
    readonly methods: Readonly<Record<string, RawExtensionMethod>>;
    readonly capabilities2025?: ServerCapabilities | undefined;
  },
): Extension {
  const { methods, capabilities2025, ...rest } = definition;
  return checkExtension(rest, methods, capabilities2025 ?? null);
}

function checkExtension(
  definition: ExtensionDefinition,
  rawMethods: Readonly<Record<string, RawExtensionMethod>>,
  capabilities2025: ServerCapabilities | null,
): Extension {
  if (!isPlainObject(definition)) {
    throw new InvalidOptionError("extension", "an object", definition);
  }
  const { id } = definition;
  if (!isExtensionId(id)) {
    throw new InvalidOptionError(
      "extension.id",
      "a `{vendor-prefix}/{name}` identifier (e.g. com.example/my-extension)",
      id,
    );
  }
  const settings = definition.settings ?? {};
  if (!isPlainObject(settings) || !isJson(settings)) {
    throw new InvalidOptionError(`extension ${id}: settings`, "a JSON object", settings);
  }
  const eras = definition.eras ?? "both";
  if (!ERAS.has(eras)) {
    throw new InvalidOptionError(`extension ${id}: eras`, '"2025", "2026" or "both"', eras);
  }
  const capabilities = definition.capabilities ?? {};
  if (!isPlainObject(capabilities) || "extensions" in capabilities) {
    throw new InvalidOptionError(
      `extension ${id}: capabilities`,
      "an object of other capabilities (not `extensions`)",
      capabilities,
    );
  }
  const declareWhen = definition.declareWhen ?? null;
  if (declareWhen !== null && typeof declareWhen !== "function") {
    throw new InvalidOptionError(`extension ${id}: declareWhen`, "a function", declareWhen);
  }
  const methods = definition.methods ?? {};
  if (!isPlainObject(methods)) {
    throw new InvalidOptionError(`extension ${id}: methods`, "an object", methods);
  }
  for (const [name, method] of Object.entries(methods)) checkMethod(id, name, method);
  for (const [name, method] of Object.entries(rawMethods)) checkMethod(id, name, method);
  return Object.freeze({
    id,
    settings: structuredClone(settings),
    eras,
    requireClientDeclaration: definition.requireClientDeclaration === true,
    capabilities,
    declareWhen,
    methods: Object.freeze({ ...methods }),
    rawMethods: Object.freeze({ ...rawMethods }),
    capabilities2025,
  });
}

function checkMethod(id: string, name: string, method: unknown): void {
  const where = `extension ${id}: method ${JSON.stringify(name.slice(0, 80))}`;
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !METHOD_NAME.test(name)) {
    throw new InvalidOptionError(where, "a method name (printable ASCII, no spaces)", name);
  }
  if (name.startsWith("notifications/")) {
    throw new InvalidOptionError(where, "a request method (not notifications/…)", name);
  }
  if (!isPlainObject(method)) throw new InvalidOptionError(where, "an object", method);
  const handler = "handler" in method ? method.handler : method.run;
  if (typeof handler !== "function") {
    throw new InvalidOptionError(`${where}.handler`, "a function", handler);
  }
  if (method.eras !== undefined && !ERAS.has(method.eras)) {
    throw new InvalidOptionError(`${where}.eras`, '"2025", "2026" or "both"', method.eras);
  }
  if (method.holds !== undefined && !HOLDS.has(method.holds)) {
    throw new InvalidOptionError(`${where}.holds`, '"request" or "stream"', method.holds);
  }
  if (method.checkParams !== undefined && typeof method.checkParams !== "function") {
    throw new InvalidOptionError(`${where}.checkParams`, "a function", method.checkParams);
  }
}

/** Whether `value` survives JSON as it is (no functions, cycles, non-finite numbers). */
function isJson(value: unknown, depth = 0): boolean {
  if (depth > 32) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  if (isPlainObject(value)) return Object.values(value).every((item) => isJson(item, depth + 1));
  return false;
}

/**
 * The settings object a client declared for extension `id` in `capabilities`, or null.
 *
 * @example
 * ```ts
 * declaredExtension({ extensions: { "com.example/x": { a: 1 } } }, "com.example/x"); // { a: 1 }
 * ```
 */
export function declaredExtension(
  capabilities: Readonly<Record<string, unknown>> | null | undefined,
  id: string,
): JsonObject | null {
  const extensions = capabilities?.extensions;
  if (!isPlainObject(extensions) || !Object.hasOwn(extensions, id)) return null;
  const settings = extensions[id];
  return isPlainObject(settings) ? settings : null;
}

/** What the client of `request` declared for extension `id` (see {@link ExtensionRequest}). */
export function clientSettingsOf(request: MethodRequest, id: string): JsonObject | null {
  const capabilities = request.modern?.clientCapabilities ?? request.meta.clientCapabilities;
  return declaredExtension(capabilities, id);
}

/** A user's extension method as a handler call runs it. */
class ExtensionInvocation implements HandlerInvocation {
  readonly kind = "extension";
  readonly name: string;
  constructor(
    readonly method: string,
    private readonly definition: ExtensionMethod,
    private readonly params: JsonObject,
    private readonly request: ExtensionRequest,
  ) {
    this.name = method;
  }
  invoke(ctx: HandlerCall): unknown {
    return this.definition.handler(this.params, ctx, this.request);
  }
  toResult(value: unknown): HandlerResult {
    if (!isPlainObject(value)) {
      return {
        ok: false,
        error: new TypeError(`${this.method}: a handler must return a result object`),
      };
    }
    return { ok: true, result: value };
  }
}

/**
 * An extension served: its methods in the method table, its declaration in the capabilities of
 * the eras it names.
 *
 * @example
 * ```ts
 * dispatcher.register(new ExtensionFeature(echo, dispatcher));
 * ```
 */
export class ExtensionFeature implements ProtocolFeature {
  readonly id: string;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025: ServerCapabilities | undefined;
  readonly capabilities2026: ServerCapabilities | undefined;
  readonly negotiated: NegotiatedExtension | undefined;

  constructor(
    readonly extension: Extension,
    private readonly host: MethodHost,
  ) {
    this.id = extension.id;
    const { eras, declareWhen } = extension;
    // Negotiated: initialize and server/discover add extensions[id] per request (lifecycle.ts).
    this.negotiated =
      declareWhen === null
        ? undefined
        : { id: extension.id, settings: extension.settings, eras, accepts: declareWhen };
    const declared =
      declareWhen === null
        ? { ...extension.capabilities, extensions: { [extension.id]: extension.settings } }
        : extension.capabilities;
    this.capabilities2026 = eras === "2025" ? undefined : declared;
    this.capabilities2025 =
      eras === "2026"
        ? undefined
        : extension.capabilities2025 === null
          ? declared
          : { ...extension.capabilities, ...extension.capabilities2025 };
    const methods: Record<string, MethodDefinition> = {};
    for (const [name, method] of Object.entries({
      ...extension.methods,
      ...extension.rawMethods,
    })) {
      methods[name] = this.definitionOf(name, method);
    }
    this.methods = methods;
  }

  private definitionOf(
    name: string,
    method: ExtensionMethod | RawExtensionMethod,
  ): MethodDefinition {
    const { extension, host } = this;
    const required = method.requireClientDeclaration ?? extension.requireClientDeclaration;
    const check = method.checkParams;
    const run =
      "run" in method
        ? (request: MethodRequest) => method.run(request, host)
        : (request: MethodRequest) => {
            const request2: ExtensionRequest = {
              extension: extension.id,
              method: name,
              era: request.modern === null ? "2025-11-25" : "2026-07-28",
              clientSettings: clientSettingsOf(request, extension.id),
            };
            const invocation = new ExtensionInvocation(
              name,
              method,
              request.params ?? {},
              request2,
            );
            return host.startCall(request, invocation, progressTokenOf(request.params));
          };
    return {
      eras: method.eras ?? extension.eras,
      holds: method.holds ?? ("run" in method ? "request" : "stream"),
      checkParams: check === undefined ? null : (params) => check(params ?? {}),
      run: required
        ? (request) =>
            clientSettingsOf(request, extension.id) === null ? this.refuse(request) : run(request)
        : run,
    };
  }

  /** A client that did not declare the extension (SEP-2133, "Graceful Degradation"). */
  private refuse(request: MethodRequest): Promise<void> {
    const { id } = this.extension;
    if (request.modern === null) {
      return this.host.answerError(
        request,
        ErrorCode.MethodNotFound,
        `Method requires the ${id} extension, which the client did not declare`,
      );
    }
    // 2026-07-28 basic, "_meta": -32021 listing the missing capabilities, HTTP 400.
    return this.host.answer(
      request,
      errorResponseJson(
        request.id,
        ErrorCode.MissingCapability,
        "Missing required client capability",
        {
          requiredCapabilities: { extensions: { [id]: {} } },
        },
      ),
      400,
    );
  }
}
