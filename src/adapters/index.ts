/**
 * Hosting a server outside its own listener: Express, Fastify (Hono takes `server.fetch` as it
 * is) and an in-process `fetch` for tests. No framework is a dependency.
 */
export { type ExpressMiddleware, type ExpressRequestLike, expressHandler } from "./express.js";
export {
  type FastifyHandler,
  type FastifyReplyLike,
  type FastifyRequestLike,
  fastifyHandler,
} from "./fastify.js";
export { type InProcessFetch, inProcessFetch } from "./in-process.js";
