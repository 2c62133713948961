/**
 * Hosting a server elsewhere than its own listener: framework adapters (Express, Fastify; Hono
 * takes `server.fetch` as it is) and the in-process `fetch` for tests. No framework is a
 * dependency: each adapter types only what it uses.
 *
 * @example
 * ```ts
 * app.all("/api/mcp", expressHandler(server));
 * ```
 */
export { type ExpressMiddleware, type ExpressRequestLike, expressHandler } from "./express.js";
export {
  type FastifyHandler,
  type FastifyReplyLike,
  type FastifyRequestLike,
  fastifyHandler,
} from "./fastify.js";
export { type InProcessFetch, inProcessFetch } from "./in-process.js";
