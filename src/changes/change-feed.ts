/**
 * The change feed: how a change made on one node (a tool added, a resource updated) reaches the
 * listeners held by every node serving the same MCP server, exactly once each. The memory feed
 * (the default) serves one process; `RedisChangeFeed` (`conduit-mcp/redis`) joins nodes over
 * Redis pub/sub. What a change becomes on the wire is decided above this layer: 2025-era GET
 * streams and 2026-07-28 `subscriptions/listen` streams
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions).
 */
import type { Reachability } from "../reachability.js";

/** The lists a client can hear about (`notifications/<list>/list_changed`). */
export type ChangedList = "tools" | "prompts" | "resources";

/**
 * One change. `list`: a list changed. `updated`: a resource's contents changed. `forward`: a
 * resource update for one 2025-era session, from the node holding its subscription to the node
 * holding its GET stream. `task`: a task's status changed on the node running it (a hint: the
 * task's id and scope, whose listeners re-read it; the status itself is not carried).
 */
export type ChangeEvent =
  | { readonly type: "list"; readonly list: ChangedList }
  | { readonly type: "updated"; readonly uri: string }
  | { readonly type: "forward"; readonly sessionId: string; readonly uri: string }
  | { readonly type: "task"; readonly taskId: string; readonly scope: string };

/**
 * Where changes are published and heard.
 *
 * @example
 * ```ts
 * const feed: ChangeFeed = new MemoryChangeFeed();
 * feed.onChange((event) => console.log(event));
 * feed.publish({ type: "list", list: "tools" });
 * ```
 */
export interface ChangeFeed {
  /**
   * Whether the service behind the store is reachable (`GET /ready` answers 503 while it is not).
   * Absent for a store that needs no other process.
   */
  readonly reachability?: Reachability;
  /**
   * Tells every node: this node's listeners synchronously, before `publish` returns, and every
   * other node's once (a shared feed). Never throws; a feed that cannot reach the others drops
   * the event for them (changes are hints: clients re-read the list or the resource).
   */
  publish(event: ChangeEvent): void;
  /** Listens to every change published on any node; returns the function that stops. */
  onChange(listener: (event: ChangeEvent) => void): () => void;
  /** Whether other nodes may hear this feed (a shared feed): forwarding is pointless otherwise. */
  readonly shared: boolean;
  /** Releases what the feed holds. Idempotent. */
  close(): Promise<void>;
}

/** Upper bound on a URI carried by a change (the dispatcher's default longest resource URI). */
export const MAX_CHANGE_URI_LENGTH = 8_192;
const LISTS: ReadonlySet<string> = new Set<ChangedList>(["tools", "prompts", "resources"]);
const SESSION_ID = /^[\x21-\x7e]{1,256}$/;
/** Upper bound on a scope carried by a change (`session:…`, `principal:…`, `ip:…`). */
const MAX_SCOPE_LENGTH = 2_048;
/** A task id's characters (base64url), with room to spare over the 22 of today's ids. */
const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A change as received from elsewhere (a shared feed's channel): hostile until checked. Returns
 * the event, or null when anything about it is off.
 *
 * @example
 * ```ts
 * changeEventOf({ type: "list", list: "tools" }); // { type: "list", list: "tools" }
 * changeEventOf({ type: "list", list: "secrets" }); // null
 * ```
 */
export function changeEventOf(value: unknown): ChangeEvent | null {
  if (typeof value !== "object" || value === null) return null;
  const event = value as Record<string, unknown>;
  if (event.type === "list") {
    return typeof event.list === "string" && LISTS.has(event.list)
      ? { type: "list", list: event.list as ChangedList }
      : null;
  }
  if (event.type === "task") {
    const { taskId, scope } = event;
    return typeof taskId === "string" &&
      TASK_ID.test(taskId) &&
      typeof scope === "string" &&
      scope.length > 0 &&
      scope.length <= MAX_SCOPE_LENGTH
      ? { type: "task", taskId, scope }
      : null;
  }
  const uri = event.uri;
  if (typeof uri !== "string" || uri.length === 0 || uri.length > MAX_CHANGE_URI_LENGTH) {
    return null;
  }
  if (event.type === "updated") return { type: "updated", uri };
  if (event.type === "forward") {
    const sessionId = event.sessionId;
    return typeof sessionId === "string" && SESSION_ID.test(sessionId)
      ? { type: "forward", sessionId, uri }
      : null;
  }
  return null;
}

/**
 * Calls each listener with `event`; a listener that throws is ignored (its failure is its own,
 * and must not keep the others from hearing).
 */
export function tellListeners(
  listeners: ReadonlySet<(event: ChangeEvent) => void>,
  event: ChangeEvent,
): void {
  for (const listener of [...listeners]) {
    try {
      listener(event);
    } catch {
      // See above.
    }
  }
}

/**
 * The single-process feed: a change reaches this process's listeners only.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ changeFeed: new MemoryChangeFeed() }); // the default
 * ```
 */
export class MemoryChangeFeed implements ChangeFeed {
  readonly shared = false;
  private readonly listeners = new Set<(event: ChangeEvent) => void>();

  publish(event: ChangeEvent): void {
    tellListeners(this.listeners, event);
  }

  onChange(listener: (event: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
