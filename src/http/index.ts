/**
 * The node:http transport: the request listener, the exchange (JSON or request-scoped SSE),
 * negotiation, body limits, Host/Origin checks, auth and metrics.
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
  bearerToken,
  createAuthenticator,
} from "./authenticate.js";
export { createRequestListener, type EndpointConfig } from "./endpoint.js";
export { type ExchangeLimits, type ExchangeRecorder, HttpExchange } from "./exchange.js";
export { methodLabel, ServerMetrics } from "./metrics.js";
export {
  ACCEPTS_JSON,
  ACCEPTS_SSE,
  acceptedMediaTypes,
  isJsonContentType,
} from "./negotiation.js";
export { isLoopbackListenHost, normalizeOrigin, OriginPolicy } from "./origin-policy.js";
export { BODY_TIMEOUT, BODY_TOO_LARGE, declaredTooLarge, readBody } from "./read-body.js";
export {
  ACQUIRED,
  GLOBAL_LIMIT,
  type LimitOutcome,
  SCOPE_LIMIT,
  ScopeLimiter,
} from "./scope-limiter.js";
export { failResponse, writeEmpty, writeJson } from "./write-response.js";
