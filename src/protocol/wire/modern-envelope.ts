/**
 * The 2026-07-28 ("modern") request envelope and its error ladder
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http,
 * "Standard Request Headers" and "Server Validation"; `_meta` keys:
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta). A modern request
 * carries its version and capabilities in `params._meta` and repeats the version, the method
 * and the tool name in HTTP headers; every disagreement is refused before dispatch with the HTTP
 * status the spec assigns to it:
 *
 * | condition                                   | HTTP | JSON-RPC |
 * |---------------------------------------------|------|----------|
 * | header missing or disagreeing with the body | 400  | -32020   |
 * | unsupported version (`data.supported`)      | 400  | -32022   |
 * | a required `_meta` key missing or malformed | 400  | -32602   |
 * | (in dispatch) a client capability missing   | 400  | -32021   |
 * | (in dispatch) unknown method                | 404  | -32601   |
 * | (in dispatch) an `Mcp-Param-*` header wrong | 400  | -32020   |
 *
 * The `Mcp-Param-*` headers of a `tools/call` are collected here and checked against the tool's
 * `x-mcp-header` annotations once the tool is known (param-headers.ts).
 * Every error echoes the request's id (the conformance suite checks it).
 */
import type { RequestId } from "../../cancellation/types.js";
import { ErrorCode } from "../../errors.js";
import { isLoggingLevel, type LoggingLevel } from "../../logging-levels.js";
import { reflectText } from "../../reflect.js";
import { isBase64 } from "./content-blocks.js";
import { errorResponseJson, isPlainObject, type JsonRpcRequest } from "./json-rpc.js";
import { ALL_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS } from "./versions.js";

/** `_meta` key of the request's protocol version (required; its presence makes a request modern). */
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
/** `_meta` key of the client's capabilities (required; `{}` declares none). */
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
/** `_meta` key of the request's log level; absent → no `notifications/message` for it. */
export const META_LOG_LEVEL = "io.modelcontextprotocol/logLevel";
/** Result `_meta` key naming the server (moved there from the result body in 2026-07-28). */
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";

/** The headers of a modern POST, as received (undefined when absent). */
export interface ModernHeaders {
  readonly protocolVersion: string | undefined;
  readonly method: string | undefined;
  readonly name: string | undefined;
  /**
   * Where every header, every value kept, can be read (Node's `IncomingMessage.headersDistinct`,
   * which Node builds on first use): the `Mcp-Param-*` headers of a `tools/call` are found there,
   * read only when the called tool declares `x-mcp-header` parameters. Absent: none to read.
   */
  readonly distinct?: HeadersDistinctSource | undefined;
}

/** Something whose `headersDistinct` (read on demand) holds every header, every value kept. */
export interface HeadersDistinctSource {
  readonly headersDistinct: Readonly<Record<string, readonly string[] | undefined>>;
}

/**
 * The `Mcp-Param-*` headers of a request, by lower-cased header name; `null` marks a header
 * sent more than once (ambiguous, so it never matches).
 */
export type PresentedParamHeaders = ReadonlyMap<string, string | null>;

/** A valid envelope, or the ladder's refusal. */
export type ModernEnvelope =
  | {
      readonly ok: true;
      readonly clientCapabilities: Readonly<Record<string, unknown>>;
      /** The request's log level; null means no log messages at all. */
      readonly logLevel: LoggingLevel | null;
      /**
       * The `Mcp-Param-*` headers of a `tools/call` (empty for other methods), picked out when
       * first read.
       */
      readonly paramHeaders: PresentedParamHeaders;
    }
  | { readonly ok: false; readonly status: number; readonly json: string };

/**
 * The era claim of a message: `params._meta["io.modelcontextprotocol/protocolVersion"]`, or
 * undefined when absent. One cheap look at the parsed body, done once per POST: the 2025 path
 * pays two type checks and one property read.
 *
 * @example
 * ```ts
 * modernClaim({ _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } }); // "2026-07-28"
 * modernClaim({ name: "echo" }); // undefined
 * ```
 */
export function modernClaim(params: unknown): unknown {
  if (typeof params !== "object" || params === null) return undefined;
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== "object" || meta === null) return undefined;
  return (meta as Record<string, unknown>)[META_PROTOCOL_VERSION];
}

/**
 * Validates a modern request's envelope and headers (every rung before dispatch).
 *
 * @example
 * ```ts
 * const envelope = checkModernRequest(message, { protocolVersion: "2026-07-28", method: "tools/list", name: undefined });
 * if (!envelope.ok) writeJson(res, envelope.status, envelope.json);
 * ```
 */
export function checkModernRequest(
  message: JsonRpcRequest,
  headers: ModernHeaders,
): ModernEnvelope {
  const id = message.id;
  const params = message.params as Record<string, unknown>;
  const meta = params._meta as Record<string, unknown>;
  const claim = meta[META_PROTOCOL_VERSION];
  if (typeof claim !== "string") {
    return refuse(
      400,
      id,
      ErrorCode.InvalidParams,
      `_meta ${META_PROTOCOL_VERSION} must be a string`,
    );
  }
  // The header MUST equal the _meta version; checked before the version itself, so a
  // header/body disagreement is always -32020 whatever the versions are.
  const headerVersion = headers.protocolVersion?.trim();
  if (headerVersion !== claim) {
    return refuse(
      400,
      id,
      ErrorCode.HeaderMismatch,
      headerVersion === undefined
        ? "MCP-Protocol-Version header required"
        : "MCP-Protocol-Version header does not match _meta protocolVersion",
    );
  }
  if (!MODERN_PROTOCOL_VERSIONS.includes(claim)) {
    // The answer names what is supported, so the client can retry (2025 versions are served
    // through `initialize`, without the envelope).
    const requested = reflectText(claim, 40);
    return refuse(
      400,
      id,
      ErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version: ${requested}`,
      { supported: ALL_PROTOCOL_VERSIONS, requested },
    );
  }
  const clientCapabilities = meta[META_CLIENT_CAPABILITIES];
  if (!isPlainObject(clientCapabilities)) {
    return refuse(
      400,
      id,
      ErrorCode.InvalidParams,
      `Missing required _meta key: ${META_CLIENT_CAPABILITIES}`,
    );
  }
  const level = meta[META_LOG_LEVEL];
  if (level !== undefined && !isLoggingLevel(level)) {
    return refuse(400, id, ErrorCode.InvalidParams, `Invalid _meta ${META_LOG_LEVEL}`);
  }
  // Header names are case-insensitive (node lower-cases them), values are exact after trimming
  // the optional whitespace HTTP allows around them ("Case Sensitivity" in the transport page).
  if (headers.method?.trim() !== message.method) {
    return refuse(
      400,
      id,
      ErrorCode.HeaderMismatch,
      headers.method === undefined
        ? "Mcp-Method header required"
        : "Mcp-Method header does not match the request method",
    );
  }
  const nameKey = NAME_PARAM.get(message.method);
  if (nameKey !== undefined) {
    const value = params[nameKey];
    const expected = typeof value === "string" ? value : undefined;
    const presented = headers.name === undefined ? undefined : decodeHeaderValue(headers.name);
    if (presented !== expected) {
      return refuse(
        400,
        id,
        ErrorCode.HeaderMismatch,
        headers.name === undefined
          ? "Mcp-Name header required"
          : "Mcp-Name header does not match the request",
      );
    }
  }
  return new ValidEnvelope(
    clientCapabilities,
    level === undefined ? null : level,
    message.method === "tools/call" ? headers.distinct : undefined,
  );
}

/**
 * A valid envelope. Its `paramHeaders` are picked out of every header when first read: only a
 * tool that declares `x-mcp-header` parameters reads them, so a call to any other tool never
 * walks its headers for `Mcp-Param-*` ones.
 */
class ValidEnvelope {
  readonly ok = true;
  private picked: PresentedParamHeaders | null = null;

  constructor(
    readonly clientCapabilities: Readonly<Record<string, unknown>>,
    readonly logLevel: LoggingLevel | null,
    private readonly source: HeadersDistinctSource | undefined,
  ) {}

  get paramHeaders(): PresentedParamHeaders {
    if (this.picked === null) {
      this.picked =
        this.source === undefined ? NO_PARAMS : presentedParamHeaders(this.source.headersDistinct);
    }
    return this.picked;
  }
}

const NO_PARAMS: PresentedParamHeaders = new Map();
const PARAM_PREFIX = "mcp-param-";

/**
 * Picks the `Mcp-Param-*` headers out of a request's headers, as Node's
 * `IncomingMessage.headersDistinct` gives them (lower-case names, every value kept).
 *
 * @example
 * ```ts
 * presentedParamHeaders(req.headersDistinct); // Map { "mcp-param-region" => "us-west1" }
 * ```
 */
export function presentedParamHeaders(
  headers: Readonly<Record<string, readonly string[] | undefined>> | undefined,
): PresentedParamHeaders {
  if (headers === undefined) return NO_PARAMS;
  let presented: Map<string, string | null> | null = null;
  for (const name in headers) {
    if (!name.startsWith(PARAM_PREFIX)) continue;
    const values = headers[name];
    if (values === undefined) continue;
    presented ??= new Map();
    presented.set(name, values.length === 1 ? (values[0] as string) : null);
  }
  return presented ?? NO_PARAMS;
}

/**
 * The answer to a POST whose `MCP-Protocol-Version` header names a modern revision while its body
 * carries no `_meta` claim: a modern request missing its envelope (-32602, HTTP 400), not a 2025
 * one (the conformance suite's server-stateless scenario checks this).
 *
 * @example
 * ```ts
 * writeJson(res, 400, missingEnvelopeJson(message.id));
 * ```
 */
export function missingEnvelopeJson(id: RequestId | null): string {
  return errorResponseJson(
    id,
    ErrorCode.InvalidParams,
    `Missing required _meta key: ${META_PROTOCOL_VERSION}`,
  );
}

/**
 * The headers of a transport that has none (stdio: "All request metadata for the stdio transport
 * is carried inline in the JSON-RPC message body. [...] There is no header layer",
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio): exactly what
 * the body says, so {@link checkModernRequest} can only refuse on the body's own rungs. The name
 * travels base64-wrapped, so it comes back from {@link decodeHeaderValue} unchanged.
 *
 * @example
 * ```ts
 * const envelope = checkModernRequest(message, inlineModernHeaders(message));
 * ```
 */
export function inlineModernHeaders(message: JsonRpcRequest): ModernHeaders {
  const claim = modernClaim(message.params);
  const nameKey = NAME_PARAM.get(message.method);
  const name =
    nameKey === undefined ? undefined : (message.params as Record<string, unknown>)[nameKey];
  return {
    protocolVersion: typeof claim === "string" ? claim : undefined,
    method: message.method,
    name:
      typeof name === "string"
        ? `=?base64?${Buffer.from(name, "utf8").toString("base64")}?=`
        : undefined,
  };
}

/**
 * Decodes an `Mcp-Name` or `Mcp-Param-*` header value: `=?base64?<b64>?=` carries UTF-8 text
 * that is not safe as a raw header ("Value Encoding" in the transport page); anything else is
 * taken literally. Null for a malformed sentinel (bad characters or padding, or bytes that are
 * not UTF-8), which is refused.
 *
 * @example
 * ```ts
 * decodeHeaderValue("=?base64?w6liaA==?="); // "ébh"
 * decodeHeaderValue(" echo "); // "echo"
 * ```
 */
export function decodeHeaderValue(raw: string): string | null {
  const value = raw.trim();
  if (!value.startsWith("=?base64?") || !value.endsWith("?=")) return value;
  const encoded = value.slice(9, -2);
  if (!isBase64(encoded)) return null;
  try {
    return UTF8.decode(Buffer.from(encoded, "base64"));
  } catch {
    return null;
  }
}

/** Fatal: bytes that are not UTF-8 are a malformed value, not text with U+FFFD in it. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Which param `Mcp-Name` mirrors, per method ("Standard Request Headers"). */
const NAME_PARAM: ReadonlyMap<string, string> = new Map([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
  // SEP-2663, "Streamable HTTP: Routing Headers": the task id, so a balancer can route on it.
  ["tasks/get", "taskId"],
  ["tasks/update", "taskId"],
  ["tasks/cancel", "taskId"],
]);

function refuse(
  status: number,
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): ModernEnvelope {
  return { ok: false, status, json: errorResponseJson(id, code, message, data) };
}
