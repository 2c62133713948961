/**
 * The served direct resources: a {@link PrimitiveCollection} that can also announce that a
 * resource's contents changed, to the sessions subscribed to it (2025-11-25 server/resources
 * "Subscriptions",
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources#subscriptions).
 */
import type { Resource } from "./define-resource.js";
import { PrimitiveCollection } from "./primitive-collection.js";
import type { ResourceSubscriptions } from "./resource-subscriptions.js";

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

  /** @internal Set by the dispatcher when subscriptions are served (sessions on). */
  serveSubscriptions(subscriptions: ResourceSubscriptions | null): void {
    this.subscriptions = subscriptions;
  }

  /**
   * Tells the sessions subscribed to `uri` (on this process) that it changed: each gets
   * `notifications/resources/updated` on its standalone (GET) stream when one is open. Any
   * URI may be named (a template's match too). Returns how many sessions were subscribed; 0
   * without sessions (nothing to subscribe with).
   */
  updated(uri: string): number {
    if (typeof uri !== "string") return 0;
    return this.subscriptions?.updated(uri) ?? 0;
  }
}
