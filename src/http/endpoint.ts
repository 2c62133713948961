/**
 * The request core: routing (`/mcp`, `/health`, `/ready`, `/metrics`, the OAuth metadata, the
 * server card), then, for the
 * endpoint, Host/Origin and the method's steps over one request context (core/), on the
 * transport-neutral request of transport.ts, so that every door (node:http in node-door.ts, a
 * web `fetch` handler) shares them. A POST's way — authenticate → negotiate → admit → read the
 * body → dispatch → write — is core/post.ts.
 *
 * Everything from the network is hostile: the core never throws at the transport, never
 * reflects a header, never leaks internals, and refuses what it can before reading a body.
 * See docs/architecture.md for a request's way through the layers.
 */

import type { IncomingHttpHeaders } from "node:http";
import { HANDLED } from "../protocol/calls/index.js";
import { authenticate } from "./core/admission/authenticate.js";
import { FORBIDDEN, METHOD_NOT_ALLOWED, refuseUnread } from "./core/context/answers.js";
import { CoreState, type EndpointConfig } from "./core/context/core-state.js";
import { RequestContext } from "./core/context/request-context.js";
import { post } from "./core/post.js";
import { endSession, listen } from "./core/session-methods.js";
import {
  SERVER_CARD_HEADERS,
  SERVER_CARD_MEDIA_TYPE,
  WELL_KNOWN_SERVER_CARD,
} from "./server-card.js";
import type { RequestInput, ResponseHeaders, ResponseTarget } from "./transport.js";
import { writeJson, writeText } from "./write-response.js";

export type { EndpointConfig } from "./core/context/core-state.js";

/** The transport-neutral request core. */
export interface RequestCore {
  /**
   * Answers one request on `target`; settles once the answer is complete (a stream: once it has
   * ended), or, for a target whose door does not wait for that (`awaitsAnswer` false: node:http),
   * possibly as soon as a call runs. Rejects only on a bug (the door then answers 500).
   */
  handle(input: RequestInput, target: ResponseTarget): Promise<void>;
  /**
   * Whether a request for `path` (no query string) is one the core answers when it routes by
   * path: the endpoint, `/health`, `/metrics` when metrics are on, the OAuth metadata documents
   * when OAuth is on. A door mounted among other
   * routes (Express `app.use`) passes the others on.
   */
  serves(path: string): boolean;
}

const HEALTH_JSON = '{"status":"ok"}';

/** The protected resource metadata is public (RFC 9728 §3): browser clients may read it. */
const METADATA_HEADERS: ResponseHeaders = Object.freeze({
  "access-control-allow-origin": "*",
  "cache-control": "max-age=300",
});

/** The promise of a request answered at once (handled.ts). */
const DONE: Promise<void> = HANDLED;

/**
 * Builds the request core.
 *
 * @example
 * ```ts
 * const core = createRequestCore(config);
 * http.createServer(createNodeListener(core)).listen(3000);
 * ```
 */
export function createRequestCore(config: EndpointConfig): RequestCore {
  const core = new CoreState(config);
  return {
    // Not async: the endpoint's step hands back its own promise (no extra promise per request).
    handle(input: RequestInput, target: ResponseTarget): Promise<void> {
      try {
        const ctx = new RequestContext(core, input, target);
        if (input.path === config.path || input.endpoint === true) return endpoint(ctx);
        return elsewhere(ctx);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    serves: (route: string): boolean => serves(core, route),
  };
}

/** A request for the endpoint: Host/Origin, then its method's steps. */
function endpoint(ctx: RequestContext): Promise<void> {
  if (!ctx.core.config.originPolicy.allows(ctx.headers as IncomingHttpHeaders)) {
    refuseUnread(ctx, 403, FORBIDDEN);
    return DONE;
  }
  switch (ctx.input.method) {
    case "POST":
      return post(ctx);
    case "DELETE":
      return endSession(ctx);
    case "GET":
      return listen(ctx);
    default:
      refuseUnread(ctx, 405, METHOD_NOT_ALLOWED, ctx.core.allow);
      return DONE;
  }
}

/** Any other path: `/health`, `/ready`, the OAuth metadata, `/metrics`, else 404. */
async function elsewhere(ctx: RequestContext): Promise<void> {
  const { input, target } = ctx;
  const { config } = ctx.core;
  const route = input.path;
  if (route === "/health" && (input.method === "GET" || input.method === "HEAD")) {
    input.body.skip();
    return writeJson(target, 200, HEALTH_JSON);
  }
  const readiness = config.readiness;
  if (route === "/ready" && readiness && (input.method === "GET" || input.method === "HEAD")) {
    input.body.skip();
    return readiness.answer(target);
  }
  const resourceServer = config.authenticate?.resourceServer ?? null;
  if (resourceServer !== null && (input.method === "GET" || input.method === "HEAD")) {
    const document = resourceServer.metadataFor(route, config.path);
    if (document !== null) {
      input.body.skip();
      return writeJson(target, 200, document, METADATA_HEADERS);
    }
  }
  const card = config.serverCard ?? null;
  if (card !== null && isServerCardRoute(route, config.path)) {
    if (input.method === "GET" || input.method === "HEAD") {
      input.body.skip();
      target.writeHead(200, {
        ...SERVER_CARD_HEADERS,
        "content-type": SERVER_CARD_MEDIA_TYPE,
        "content-length": Buffer.byteLength(card),
        "x-content-type-options": "nosniff",
      });
      target.end(input.method === "HEAD" ? "" : card);
      return;
    }
  }
  const metrics = config.metrics;
  if (route === "/metrics" && metrics !== null && input.method === "GET") {
    if (!config.originPolicy.allows(ctx.headers as IncomingHttpHeaders)) {
      refuseUnread(ctx, 403, FORBIDDEN);
      return;
    }
    // Optional: the same credentials as the endpoint (docs/auth.md).
    if (config.metricsAuth === true && !(await authenticate(ctx))) return;
    input.body.skip();
    const text = await metrics.render(config.registry);
    return writeText(target, 200, text, "text/plain; version=0.0.4; charset=utf-8");
  }
  input.body.skip();
  writeText(target, 404, "Not found");
}

/** `<endpoint>/server-card` (the draft's reserved location) or the well-known path. */
function isServerCardRoute(route: string, path: string): boolean {
  return route === WELL_KNOWN_SERVER_CARD || route === `${path.replace(/\/$/, "")}/server-card`;
}

function serves(core: CoreState, route: string): boolean {
  const { config } = core;
  if (route === config.path || route === "/health") return true;
  if (route === "/ready") return config.readiness !== undefined;
  if (route === "/metrics") return config.metrics !== null;
  if (isServerCardRoute(route, config.path)) return (config.serverCard ?? null) !== null;
  const resourceServer = config.authenticate?.resourceServer ?? null;
  return resourceServer !== null && resourceServer.metadataFor(route, config.path) !== null;
}
