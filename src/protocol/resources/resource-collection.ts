/**
 * The served direct resources: a {@link PrimitiveCollection} that can also announce that a
 * resource's contents changed, to the sessions subscribed to it (2025-11-25 server/resources
 * "Subscriptions",
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions).
 */

import { PrimitiveCollection } from "../calls/index.js";
import type { ResourceSubscriptions } from "../subscriptions/index.js";
import type { Resource } from "./define-resource.js";

/**
 * The resources of a server.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ resources: [config], sessions: true });
 * await writeConfig();
 * server.resources.updated("file:///etc/app.json"); // subscribers get notifications/resources/updated
 * ```
 */
export class ResourceCollection extends PrimitiveCollection<Resource> {
  private subscriptions: ResourceSubscriptions | null = null;
  private route: ((uri: string) => number) | null = null;

  /** @internal Set by the dispatcher when subscriptions are served (sessions on). */
  serveSubscriptions(subscriptions: ResourceSubscriptions | null): void {
    this.subscriptions = subscriptions;
  }

  /**
   * @internal Set by the server: where an update goes (its change feed, so every node's
   * subscribers and listeners hear it); returns how many listen on this process.
   */
  routeUpdates(route: ((uri: string) => number) | null): void {
    this.route = route;
  }

  /**
   * Tells everyone listening for `uri` that it changed, on every node sharing the server's
   * change feed: 2025-era sessions subscribed to it get `notifications/resources/updated` on
   * their standalone (GET) stream, 2026-07-28 `subscriptions/listen` streams that named it get
   * it tagged with their subscription id. Any URI may be named (a template's match too).
   * Returns how many sessions and listeners on this process listen for it.
   */
  updated(uri: string): number {
    if (typeof uri !== "string" || uri.length === 0) return 0;
    if (this.route !== null) return this.route(uri);
    return this.subscriptions?.updated(uri) ?? 0;
  }
}
