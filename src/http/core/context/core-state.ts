/**
 * What a request core is configured with ({@link EndpointConfig}, resolved once by the server),
 * and the state it shares between requests ({@link CoreState}): built once per core, reached by
 * every step through the request's context.
 */
import type { CancellationRegistry } from "../../../cancellation/index.js";
import type { TrustProxy } from "../../../identity/index.js";
import { ScopeLimiter } from "../../../protocol/asking/index.js";
import type { Dispatcher } from "../../../protocol/index.js";
import type { RateLimitPlan } from "../../../rate-limits/index.js";
import type { SessionStore } from "../../../sessions/index.js";
import type { Authenticator } from "../../authenticate.js";
import type { ExchangeLimits, ExchangeSettings } from "../../exchange.js";
import type { ServerMetrics } from "../../operability/metrics.js";
import type { Readiness } from "../../operability/readiness.js";
import type { OriginPolicy } from "../../origin-policy.js";
import type { SessionStreams } from "../../session-streams.js";
import type { ResponseHeaders } from "../../transport.js";
import { BodyBudget } from "../admission/body-budget.js";

/** Everything the core needs, resolved once by the server. */
export interface EndpointConfig {
  readonly path: string;
  readonly dispatcher: Dispatcher;
  readonly registry: CancellationRegistry;
  readonly sessions: { readonly store: SessionStore; readonly required: boolean } | null;
  readonly authenticate: Authenticator | null;
  readonly trustProxy: TrustProxy;
  readonly originPolicy: OriginPolicy;
  readonly maxBodyBytes: number;
  /**
   * Most bytes of bodies being read at once, per scope the request comes from and in all
   * (body-budget.ts): `limits.maxBodyBytesInFlightPerScope` and `limits.maxBodyBytesInFlight`,
   * whose defaults the server's options decide.
   */
  readonly bodyBudget: { readonly perScope: number; readonly total: number };
  /** Total time a body may take to arrive once reading began; 408 beyond. 0 = no limit. */
  readonly bodyTimeoutMs: number;
  /** Per-scope (and global) counters of running requests and of request-scoped SSE streams. */
  readonly limits: ExchangeLimits;
  readonly keepAliveMs: number;
  /** Most bytes an SSE stream may have waiting for a slow client before it is cut. */
  readonly maxStreamBufferBytes: number;
  readonly metrics: ServerMetrics | null;
  /** `GET /metrics` needs the same credentials as the endpoint (when auth is on). */
  readonly metricsAuth?: boolean;
  /**
   * The sessions' standalone GET streams, when served (sessions on): else GET is answered 405.
   */
  readonly streams?: SessionStreams | null;
  /** True once close() began: new requests get 503. */
  readonly closing: () => boolean;
  /** Answers `GET /ready` (readiness.ts); without it the path is not served. */
  readonly readiness?: Readiness;
  /**
   * Header names (lower case) a handler's `ctx.request` shows (`requestHeaders`, checked by the
   * server: never a credential). Absent: none.
   */
  readonly requestHeaders?: readonly string[];
  /** The server card's JSON text (server-card.ts), when one is served; absent or null: none. */
  readonly serverCard?: string | null;
  /** The tenants' rate limits (`rateLimits`, rate-limit.ts); absent or null: none. */
  readonly rateLimits?: RateLimitPlan | null;
}

/**
 * A scope at its request bound may still send small messages — a `notifications/cancelled` is
 * how it frees a unit — at most this many at once, each at most {@link NOTICE_BYTES} (declared
 * up front); a request among them is refused once read. Bounds what a scope over its bound can
 * make the server buffer.
 */
const NOTICES_PER_SCOPE = 8;
const NOTICES_TOTAL = 1_024;
export const NOTICE_BYTES = 4_096;

/**
 * Most peer addresses whose anonymous scope is remembered (scope.ts). A memo, not a bound on
 * anyone: an address pushed out is parsed again on its next request, as it would be without it.
 */
export const ADDRESS_SCOPES = 1_024;

/** One request core's configuration and shared state. */
export class CoreState {
  readonly config: EndpointConfig;
  /** Counts an answer in the metrics (method label, status); null without metrics. */
  readonly recorder: ServerMetrics["recordRequest"] | null;
  /** What every exchange of this core shares (exchange.ts). */
  readonly exchangeSettings: ExchangeSettings;
  /** The standalone GET streams: only with sessions. */
  readonly streams: SessionStreams | null;
  /** The `Allow` header of a 405: the methods the endpoint serves with this configuration. */
  readonly allow: ResponseHeaders;
  /** The notice units of scopes at their request bound (admission.ts). */
  // Its global bound makes room from the largest scope rather than refusing a scope under its
  // own, as the request bound does (docs/server-options.md: maxConcurrentRequests).
  readonly notices = new ScopeLimiter(NOTICES_PER_SCOPE, NOTICES_TOTAL, { evict: true });
  /** The bytes of the bodies being read (read-message.ts). */
  readonly bodyBudget: BodyBudget;
  /**
   * The anonymous scope of recent peer addresses, when it depends only on the address, oldest
   * first (scope.ts): bounded by {@link ADDRESS_SCOPES}, not kept per connection.
   */
  readonly addressScopes = new Map<string, string>();
  /** The peer address whose anonymous scope was decided last, and that scope (scope.ts). */
  lastAddress: string | undefined = undefined;
  lastAddressScope = "";

  constructor(config: EndpointConfig) {
    const sessions = config.sessions;
    this.config = config;
    this.recorder = config.metrics === null ? null : config.metrics.recordRequest;
    this.exchangeSettings = Object.freeze({
      keepAliveMs: config.keepAliveMs,
      maxBufferedBytes: config.maxStreamBufferBytes,
      recorder: this.recorder,
      view: config,
    });
    this.bodyBudget = new BodyBudget({
      maxPerScope: config.bodyBudget.perScope,
      maxTotal: config.bodyBudget.total,
    });
    this.streams = sessions === null ? null : (config.streams ?? null);
    const allow =
      sessions === null ? "POST" : this.streams === null ? "POST, DELETE" : "GET, POST, DELETE";
    this.allow = Object.freeze({ allow });
  }
}
