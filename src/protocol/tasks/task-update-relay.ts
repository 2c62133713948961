/**
 * Carrying a `tasks/update` answer to the node that runs the task (2026-07-28
 * `io.modelcontextprotocol/tasks` extension, SEP-2663, "Task Update Requests":
 * https://modelcontextprotocol.io/extensions/tasks/overview). Behind a load balancer a
 * `tasks/update` may reach any node, but the ask it answers waits in the handler on the task's
 * owner node. The answer travels on the deployment's {@link ServerReplyBus} (the bus that carries
 * 2025-era answers to server requests), addressed to a route derived from the owner's node id,
 * so any node can address it from the task record alone.
 *
 * What travels is already narrowed on the receiving node: only the keys the stored task still
 * lists in `inputRequests` (the extension: responses for keys not outstanding are ignored), so a
 * message never carries more answers than a task may have questions. The owner accepts it only
 * for a run of its own, of the same scope; the answers are then checked there as a local
 * `tasks/update`'s are (task-asker.ts).
 */
import { createHash } from "node:crypto";

import { storedInputRequests } from "./task-wire.js";

/**
 * The bus route of the task runs of the node whose store id is `nodeId`: `t` and 21 base64url
 * characters of its SHA-256 (a store's node id may hold characters a route may not; the 2025
 * table's own routes are 11 characters, so the two never meet).
 *
 * @example
 * ```ts
 * taskRoute("host-42-abc"); // "t" + 21 characters, the same on every node
 * ```
 */
export function taskRoute(nodeId: string): string {
  return `t${createHash("sha256").update(nodeId).digest("base64url").slice(0, 21)}`;
}

/**
 * The entries of `responses` whose key the task still has outstanding (`inputRequests`, the
 * stored JSON text of the map), or null when none is.
 *
 * @example
 * ```ts
 * outstandingResponses('{"a":{}}', { a: { action: "accept" }, zz: 1 }); // { a: { action: "accept" } }
 * ```
 */
export function outstandingResponses(
  inputRequests: string | null,
  responses: Readonly<Record<string, unknown>>,
): Record<string, unknown> | null {
  const asked = storedInputRequests(inputRequests);
  if (asked === null) return null;
  // No prototype: a key such as `__proto__` is kept as an entry, never as a prototype.
  const kept: Record<string, unknown> = Object.create(null);
  let count = 0;
  for (const key of Object.keys(asked)) {
    if (!Object.hasOwn(responses, key)) continue;
    kept[key] = responses[key];
    count++;
  }
  return count === 0 ? null : kept;
}
