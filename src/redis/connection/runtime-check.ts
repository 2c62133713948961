/**
 * The Redis stores keep ioredis connections (commands, a subscriber, lease timers) that every
 * request of the process shares. Cloudflare's workerd binds a socket to the request that opened
 * it ("Cannot perform I/O on behalf of a different request", as workerd reports it:
 * https://developers.cloudflare.com/workers/observability/errors/), so there they would fail on
 * the second request; they refuse to start instead (docs/runtimes.md, "Cloudflare Workers").
 */
import { UnsupportedRuntimeError } from "../../errors.js";
import { currentRuntime } from "../../runtime.js";

/** Throws {@link UnsupportedRuntimeError} on workerd, naming what to use instead. */
export function refuseSharedConnections(): void {
  const runtime = currentRuntime();
  if (runtime !== "workerd") return;
  throw new UnsupportedRuntimeError(
    "the stores and buses of conduit-mcp/redis (ioredis connections shared by every request)",
    runtime,
    "keep the default memory stores of one Worker, or run the nodes that share Redis on Node.js, Bun or Deno (docs/runtimes.md)",
  );
}
