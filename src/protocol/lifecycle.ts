/**
 * The methods every server has, whatever it serves: `initialize` and `ping` (2025-11-25
 * basic/lifecycle, https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle),
 * `server/discover` (2026-07-28), and `logging/setLevel` (2025-11-25 server/utilities/logging).
 * The capabilities `initialize` and `server/discover` publish are those of the features served,
 * merged in the order they were registered.
 */
import { ErrorCode } from "../errors.js";
import { isLoggingLevel, type LoggingLevel } from "../logging-levels.js";
import { reflectText } from "../reflect.js";
import { askableCapabilities } from "./asking/index.js";
import {
  capabilitiesOf,
  declaredExtension,
  type Icon,
  type MethodDefinition,
  type MethodHost,
  type MethodRequest,
  type NegotiatedExtension,
  type ProtocolFeature,
} from "./calls/index.js";
import {
  ALL_PROTOCOL_VERSIONS,
  errorResponseJson,
  isPlainObject,
  isSupportedProtocolVersion,
  META_SERVER_INFO,
  SUPPORTED_PROTOCOL_VERSIONS,
  successResponseJson,
} from "./wire/index.js";

/**
 * What {@link SessionHooks.create} resolves: the new session's id, or why none was created —
 * `"scope-full"` (the creating scope holds its quota: 429) or `"full"` (503).
 */
export type SessionCreation =
  | { readonly id: string }
  | { readonly id: null; readonly refused: "full" | "scope-full" };

/** Session operations the protocol needs (the transport owns the store). */
export interface SessionHooks {
  /** Mints and stores a session created by `creatorScope` (the `initialize`'s scope). */
  create(
    principalId: string | null,
    protocolVersion: string,
    creatorScope: string,
    /** What the client declared it can be asked (server-requests.ts `askableCapabilities`). */
    clientCapabilities: string,
  ): Promise<SessionCreation>;
  setLogLevel(sessionId: string, level: LoggingLevel): Promise<void>;
}

/** The server's identity as `initialize` and `server/discover` publish it (MCP `Implementation`). */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly icons?: readonly Icon[] | undefined;
  readonly websiteUrl?: string | undefined;
}

/** What {@link LifecycleFeature} takes. */
export interface LifecycleOptions {
  readonly host: MethodHost;
  readonly identity: ServerIdentity;
  readonly sessions: SessionHooks | null;
  /** `instructions` of `initialize` and `server/discover`, when given. */
  readonly instructions?: string | undefined;
  /** `ttlMs` of `server/discover` (cached `public`: nothing in it depends on who asks). */
  readonly cacheTtlMs: number;
}

const EMPTY_RESULT = "{}";
const STORE_FULL: SessionCreation = { id: null, refused: "full" };
const TOO_MANY_SESSIONS =
  "Too many sessions for this client; end one (DELETE) or let one expire, then retry.";
/** A session quota frees when one of the creator's sessions ends or idles out: not within 1 s. */
const SESSION_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "60" };

/**
 * `initialize`, `ping`, `server/discover` and `logging/setLevel`. The `logging` capability is
 * its own (every server takes a log level); the rest comes from {@link LifecycleFeature.serve}.
 *
 * @example
 * ```ts
 * const lifecycle = new LifecycleFeature({ host, identity: { name: "demo", version: "1.0.0" },
 *   sessions: null, cacheTtlMs: 60_000 });
 * lifecycle.serve([tools, resources, prompts, completion, lifecycle]);
 * ```
 */
export class LifecycleFeature implements ProtocolFeature {
  readonly id = "lifecycle";
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  readonly capabilities2025 = { logging: {} };
  readonly capabilities2026 = { logging: {} };
  /** The constant tail of every initialize result (without negotiated extensions). */
  private initializeTail = "";
  private discoverJson = "";
  /** What a result with negotiated extensions is built from (none: the strings above serve all). */
  private negotiable: {
    readonly capabilities2025: Record<string, unknown>;
    readonly discover: Record<string, unknown>;
    readonly tail: string;
    readonly list2025: readonly NegotiatedExtension[];
    readonly list2026: readonly NegotiatedExtension[];
  } | null = null;
  /**
   * The extensions declared in the 2025-11-25 `initialize`: a client's declaration of one of them
   * is kept with its session (SEP-2133, "Client Capabilities").
   */
  extensionIds: ReadonlySet<string> = new Set();

  constructor(private readonly options: LifecycleOptions) {
    const { host } = options;
    this.methods = {
      initialize: { eras: "2025", run: (r) => this.initialize(r) },
      ping: { eras: "2025", run: (r) => host.answer(r, successResponseJson(r.id, EMPTY_RESULT)) },
      "logging/setLevel": {
        eras: "2025",
        checkParams: (params) =>
          isLoggingLevel(params?.level)
            ? null
            : `Invalid log level: ${reflectText(params?.level, 40)}`,
        run: (r) => this.setLogLevel(r),
      },
      "server/discover": {
        eras: "2026",
        run: (r) =>
          host.answer(r, successResponseJson(r.id, this.discoverFor(r.modern?.clientCapabilities))),
      },
    };
  }

  /** Publishes the capabilities of `features` (this one among them, where its key should go). */
  serve(features: readonly ProtocolFeature[]): void {
    const { identity, instructions, cacheTtlMs } = this.options;
    const serverInfo = serverInfoOf(identity);
    const instructionsJson =
      instructions === undefined ? "" : `,"instructions":${JSON.stringify(instructions)}`;
    const capabilities2025 = capabilitiesOf(features, "2025");
    const extensions = capabilities2025.extensions;
    const negotiated = features.flatMap((f) => (f.negotiated === undefined ? [] : [f.negotiated]));
    const list2025 = negotiated.filter((n) => n.eras !== "2026");
    const list2026 = negotiated.filter((n) => n.eras !== "2025");
    this.extensionIds = new Set([
      ...(isPlainObject(extensions) ? Object.keys(extensions) : []),
      ...list2025.map((n) => n.id),
    ]);
    const tail = `,"serverInfo":${JSON.stringify(serverInfo)}${instructionsJson}`;
    this.initializeTail = `"capabilities":${JSON.stringify(capabilities2025)}${tail}`;
    // server/discover holds nothing of who asks, only what the request's _meta declared (a
    // negotiated extension): cached "public" (2026-07-28 server/utilities/caching, "Cache Key":
    // the parameters that affect the result are part of the key).
    const discover: Record<string, unknown> = {
      resultType: "complete",
      supportedVersions: ALL_PROTOCOL_VERSIONS,
      capabilities: capabilitiesOf(features, "2026"),
      _meta: { [META_SERVER_INFO]: serverInfo },
      ttlMs: cacheTtlMs,
      cacheScope: "public",
    };
    if (instructions !== undefined) discover.instructions = instructions;
    this.discoverJson = JSON.stringify(discover);
    this.negotiable =
      negotiated.length === 0 ? null : { capabilities2025, discover, tail, list2025, list2026 };
  }

  /** The `server/discover` result for a client that declared `clientCapabilities`. */
  private discoverFor(clientCapabilities: Readonly<Record<string, unknown>> | undefined): string {
    const negotiable = this.negotiable;
    const accepted = negotiable && acceptedBy(negotiable.list2026, clientCapabilities);
    if (!negotiable || accepted === null) return this.discoverJson;
    const capabilities = negotiable.discover.capabilities as Record<string, unknown>;
    return JSON.stringify({
      ...negotiable.discover,
      capabilities: withExtensions(capabilities, accepted),
    });
  }

  /** The `initialize` result's tail for a client that declared `clientCapabilities`. */
  private initializeTailFor(clientCapabilities: unknown): string {
    const negotiable = this.negotiable;
    const declared = isPlainObject(clientCapabilities) ? clientCapabilities : undefined;
    const accepted = negotiable && acceptedBy(negotiable.list2025, declared);
    if (!negotiable || accepted === null) return this.initializeTail;
    const capabilities = withExtensions(negotiable.capabilities2025, accepted);
    return `"capabilities":${JSON.stringify(capabilities)}${negotiable.tail}`;
  }

  private async initialize(request: MethodRequest): Promise<void> {
    const { host, sessions } = this.options;
    const { params, meta, sink } = request;
    const version = params?.protocolVersion;
    if (typeof version !== "string") {
      return host.answerError(
        request,
        ErrorCode.InvalidParams,
        `protocolVersion must be a string, got: ${reflectText(version, 40)}`,
      );
    }
    if (!isSupportedProtocolVersion(version)) {
      const requested = reflectText(version, 40);
      return host.answerError(
        request,
        ErrorCode.InvalidRequest,
        `Unsupported protocol version: ${requested}. Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
        { supported: SUPPORTED_PROTOCOL_VERSIONS, requested },
      );
    }
    if (sessions !== null && meta.sessionId === null) {
      let created: SessionCreation;
      try {
        created = await sessions.create(
          meta.principal?.id ?? null,
          version,
          meta.scope,
          askableCapabilities(params?.capabilities, this.extensionIds),
        );
      } catch {
        created = STORE_FULL;
      }
      if (created.id === null && created.refused === "scope-full") {
        // The creator's own quota, not the server's: 429, like the per-scope request bound.
        return host.answer(
          request,
          errorResponseJson(request.id, ErrorCode.ServerError, TOO_MANY_SESSIONS),
          429,
          SESSION_RETRY_AFTER,
        );
      }
      const sessionId = created.id;
      if (sessionId === null) {
        return host.answerError(
          request,
          ErrorCode.InternalError,
          "Session store unavailable; the server cannot accept new sessions right now.",
          undefined,
          503,
        );
      }
      sink.setSessionId(sessionId);
    }
    const tail = this.initializeTailFor(params?.capabilities);
    const result = `{"protocolVersion":${JSON.stringify(version)},${tail}}`;
    return host.answer(request, successResponseJson(request.id, result));
  }

  private async setLogLevel(request: MethodRequest): Promise<void> {
    const { host, sessions } = this.options;
    const level = request.params?.level as LoggingLevel;
    // Without sessions nothing is remembered between requests (stateless): accepted, no effect.
    const { sessionId } = request.meta;
    if (sessions !== null && sessionId !== null) await sessions.setLogLevel(sessionId, level);
    return host.answer(request, successResponseJson(request.id, EMPTY_RESULT));
  }
}

/**
 * The negotiated extensions `clientCapabilities` qualifies for, as `extensions` entries, or null
 * for none. A check that throws counts as a refusal (it reads hostile input).
 */
function acceptedBy(
  list: readonly NegotiatedExtension[],
  clientCapabilities: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | null {
  let accepted: Record<string, unknown> | null = null;
  for (const negotiated of list) {
    let ok = false;
    try {
      ok = negotiated.accepts(declaredExtension(clientCapabilities, negotiated.id)) === true;
    } catch {
      ok = false;
    }
    if (ok) {
      accepted ??= {};
      accepted[negotiated.id] = negotiated.settings;
    }
  }
  return accepted;
}

function withExtensions(
  capabilities: Readonly<Record<string, unknown>>,
  accepted: Record<string, unknown>,
): Record<string, unknown> {
  const before = capabilities.extensions;
  return { ...capabilities, extensions: { ...(isPlainObject(before) ? before : {}), ...accepted } };
}

function serverInfoOf(identity: ServerIdentity): Record<string, unknown> {
  const info: Record<string, unknown> = { name: identity.name, version: identity.version };
  if (identity.title !== undefined) info.title = identity.title;
  if (identity.description !== undefined) info.description = identity.description;
  if (identity.icons !== undefined) info.icons = identity.icons;
  if (identity.websiteUrl !== undefined) info.websiteUrl = identity.websiteUrl;
  return info;
}
