/**
 * The HTTP transport: the transport-neutral request core and its node:http door, the exchange
 * (JSON or request-scoped SSE), negotiation, body limits, Host/Origin checks, auth and metrics.
 *
 * @example
 * ```ts
 * import { createMcpServer } from "conduit-mcp";
 * http.createServer(createMcpServer({ tools }).handler).listen(3000, "127.0.0.1");
 * ```
 */
export {
  type Authenticator,
  type AuthOptions,
  type AuthRequest,
  bearerToken,
  createAuthenticator,
  MIN_SECRET_BYTES,
} from "./authenticate.js";
export { CloseLatch } from "./doors/close-latch.js";
export {
  type AttachOptions,
  ConnectionBounds,
  type ConnectionBoundsOptions,
  type ConnectionCounts,
} from "./doors/connection-bounds.js";
export {
  createFetchHandler,
  type FetchHandler,
  type FetchOptions,
  type NodeShapedRequest,
} from "./doors/fetch-door.js";
export {
  createNodeListener,
  frameworkBody,
  type NodeRequestListener,
  type NodeServeOptions,
  nodeRequestInput,
  serveNode,
} from "./doors/node-door.js";
export { WebResponse } from "./doors/web-response.js";
export { createRequestCore, type EndpointConfig, type RequestCore } from "./endpoint.js";
export {
  type ExchangeLimits,
  type ExchangeRecorder,
  type ExchangeSettings,
  type HeldUnits,
  HttpExchange,
  type HttpExchangeOptions,
} from "./exchange.js";
export {
  ACCEPTS_JSON,
  ACCEPTS_SSE,
  acceptedMediaTypes,
  isJsonContentType,
} from "./negotiation.js";
export { methodLabel, ServerMetrics } from "./operability/metrics.js";
export { Readiness, type ReadinessOptions, type ReadyState } from "./operability/readiness.js";
export { isLoopbackListenHost, normalizeOrigin, OriginPolicy } from "./origin-policy.js";
export { BODY_TIMEOUT, BODY_TOO_LARGE, declaredTooLarge, readBody } from "./read-body.js";
export {
  SERVER_CARD_MEDIA_TYPE,
  type ServerCardIdentity,
  type ServerCardOptions,
  serverCardJson,
  WELL_KNOWN_SERVER_CARD,
} from "./server-card.js";
export { SessionStreams, type SessionStreamsOptions } from "./session-streams.js";
export type {
  BodyOutcome,
  BodySource,
  CloseSignal,
  ParsedBody,
  RequestHeaders,
  RequestInput,
  ResponseHeaders,
  ResponseTarget,
} from "./transport.js";
export { failResponse, writeEmpty, writeJson, writeText } from "./write-response.js";
