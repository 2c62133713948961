/**
 * The open 2026-07-28 `subscriptions/listen` streams of this process and what each asked to hear
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions):
 * `notifications/tools|prompts|resources/list_changed` and `notifications/resources/updated` for
 * the URIs it named, each tagged with the stream's subscription id (the JSON-RPC id of its
 * `subscriptions/listen`). Bounded per tenant first (the bucket paying for it: principal, else
 * client IP bucket): at most `maxPerScope` listeners and `maxBytesPerScope` bytes of filters
 * (listenerBytes), the only bounds that refuse; then in all: beyond `maxTotal` listeners or
 * `maxBytes` bytes the oldest listener of the bucket holding the most is ended (its listen
 * answered `complete`), so tenants within their own bounds never lock another out. Each listener
 * names at most `maxUris` URIs, and at most {@link MAX_LISTEN_TASK_IDS} task ids (`taskIds`, for
 * `notifications/tasks` of the `io.modelcontextprotocol/tasks` extension, SEP-2663, "Task Status
 * Notifications").
 */
import { ByteLedger, utf8Bytes } from "../../byte-ledger.js";
import type { ChangedList, ChangeEvent } from "../../changes/index.js";

/** Default most listeners one scope may hold open. */
export const DEFAULT_MAX_LISTENERS_PER_SCOPE = 8;
/** Default most listeners open in all. */
export const DEFAULT_MAX_LISTENERS = 10_000;
/** Default most URIs one listener may name in `resourceSubscriptions`. */
export const DEFAULT_MAX_LISTEN_URIS = 64;
/** Default most bytes of filters one bucket's listeners may hold: 256 KiB. */
export const DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE = 256 * 1_024;
/** Default most bytes of filters held by every listener together: 16 MiB. */
export const DEFAULT_MAX_LISTEN_BYTES = 16 * 1_048_576;
/** Bytes every listener is charged besides its filter's texts (its entries, closures, stream state). */
export const LISTENER_OVERHEAD = 1_024;
/** Most task ids one listener may name in `taskIds`. */
export const MAX_LISTEN_TASK_IDS = 64;

/** The `_meta` key naming the subscription a message belongs to. */
export const SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId";

/** What one listener agreed to hear (the acknowledged filter). */
export interface ListenFilter {
  readonly toolsListChanged: boolean;
  readonly promptsListChanged: boolean;
  readonly resourcesListChanged: boolean;
  readonly resourceSubscriptions: readonly string[];
  /** Tasks whose status changes it hears (only ids of its own scope's tasks are acknowledged). */
  readonly taskIds: readonly string[];
}

/** One open listener. */
export interface ChangeListener {
  readonly scope: string;
  /** The bucket paying for it (principal, else client IP bucket). Absent: `scope`. */
  readonly bucket?: string;
  readonly filter: ListenFilter;
  /** The JSON text of its subscription id (the listen request's id). */
  readonly subscriptionIdJson: string;
  /** Writes one notification (JSON text) to its stream. */
  readonly send: (json: string) => void;
  /** Ends it gracefully (server shutdown): the listen request is answered, the stream closed. */
  readonly complete: () => void;
  /**
   * The state last told (or acknowledged) per task id it was acknowledged for
   * (task-notifications.ts); a named id missing here is never told.
   */
  readonly taskStatuses: Map<string, string>;
  /**
   * Until its acknowledgement is sent (its tasks are being read): the ids of named tasks that
   * changed meanwhile, read again once it is sent; then null.
   */
  heldTasks: Set<string> | null;
}

/** Why {@link ChangeListeners.add} refused. */
export type ListenRefusal = "scope-full" | "full";

/** Options of {@link ChangeListeners}. */
export interface ChangeListenersOptions {
  readonly maxPerScope?: number;
  readonly maxTotal?: number;
  readonly maxUris?: number;
  readonly maxBytesPerScope?: number;
  readonly maxBytes?: number;
}

/**
 * What a listener costs its bucket: its filter's URIs and task ids and its subscription id
 * (UTF-8), plus {@link LISTENER_OVERHEAD}.
 */
export function listenerBytes(listener: ChangeListener): number {
  let bytes = LISTENER_OVERHEAD + utf8Bytes(listener.subscriptionIdJson);
  for (const uri of listener.filter.resourceSubscriptions) bytes += utf8Bytes(uri);
  for (const taskId of listener.filter.taskIds) bytes += utf8Bytes(taskId);
  return bytes;
}

/**
 * The listener table.
 *
 * @example
 * ```ts
 * const table = new ChangeListeners({ maxPerScope: 8, maxTotal: 10_000, maxUris: 64 });
 * const added = table.add({ scope, filter, subscriptionIdJson: "1", send, complete });
 * table.deliver({ type: "list", list: "tools" }); // notifications/tools/list_changed to it
 * table.remove(added);
 * ```
 */
export class ChangeListeners {
  readonly maxPerScope: number;
  readonly maxTotal: number;
  readonly maxUris: number;
  private readonly all = new Set<ChangeListener>();
  /** bucket → its listeners, oldest first. */
  private readonly perScope = new Map<string, Set<ChangeListener>>();
  private readonly ledger: ByteLedger<ChangeListener>;
  private readonly byList: Record<ChangedList, Set<ChangeListener>> = {
    tools: new Set(),
    prompts: new Set(),
    resources: new Set(),
  };
  /** uri → listeners naming it. */
  private readonly byUri = new Map<string, Set<ChangeListener>>();
  /** task id → listeners naming it. */
  private readonly byTask = new Map<string, Set<ChangeListener>>();

  constructor(options: ChangeListenersOptions = {}) {
    this.maxPerScope = options.maxPerScope ?? DEFAULT_MAX_LISTENERS_PER_SCOPE;
    this.maxTotal = options.maxTotal ?? DEFAULT_MAX_LISTENERS;
    this.maxUris = options.maxUris ?? DEFAULT_MAX_LISTEN_URIS;
    this.ledger = new ByteLedger({
      maxBytesPerBucket: options.maxBytesPerScope ?? DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_LISTEN_BYTES,
    });
  }

  /** Bytes the open listeners hold (listenerBytes of each). */
  get bytes(): number {
    return this.ledger.bytes;
  }

  /** Open listeners. */
  get size(): number {
    return this.all.size;
  }

  /** Listeners that named `uri`. */
  listenersOf(uri: string): number {
    return this.byUri.get(uri)?.size ?? 0;
  }

  /** Listeners open for `bucket`. */
  countOf(bucket: string): number {
    return this.perScope.get(bucket)?.size ?? 0;
  }

  /**
   * Registers a listener, or says why not: its bucket holds its count or its bytes
   * (`"scope-full"`), or the table holds nothing (`"full"`: a global bound of 0). At a global
   * bound the oldest listener of the bucket holding the most is ended first (`complete`).
   */
  add(listener: ChangeListener): ListenRefusal | null {
    const bucket = payer(listener);
    const bytes = listenerBytes(listener);
    if (this.maxTotal === 0 || this.ledger.maxBytes === 0) return "full";
    if (this.countOf(bucket) >= this.maxPerScope || !this.ledger.fits(bucket, bytes)) {
      return "scope-full";
    }
    const ended: ChangeListener[] = [];
    while (this.all.size >= this.maxTotal) {
      const victim = this.oldestOfLargest();
      if (victim === undefined) break;
      this.remove(victim);
      ended.push(victim);
    }
    const evicted = this.ledger.add(listener, bucket, bytes);
    if (typeof evicted !== "string") {
      for (const victim of evicted) {
        this.remove(victim);
        ended.push(victim);
      }
    }
    let own = this.perScope.get(bucket);
    if (own === undefined) {
      own = new Set();
      this.perScope.set(bucket, own);
    }
    own.add(listener);
    this.all.add(listener);
    const { filter } = listener;
    if (filter.toolsListChanged) this.byList.tools.add(listener);
    if (filter.promptsListChanged) this.byList.prompts.add(listener);
    if (filter.resourcesListChanged) this.byList.resources.add(listener);
    for (const uri of filter.resourceSubscriptions) addTo(this.byUri, uri, listener);
    for (const taskId of filter.taskIds) addTo(this.byTask, taskId, listener);
    for (const victim of ended) endQuietly(victim);
    return null;
  }

  /** The oldest listener of the bucket holding the most (among equals, the name sorting first). */
  private oldestOfLargest(): ChangeListener | undefined {
    let best: Set<ChangeListener> | undefined;
    let bestName = "";
    for (const [name, own] of this.perScope) {
      if (
        best === undefined ||
        own.size > best.size ||
        (own.size === best.size && name < bestName)
      ) {
        best = own;
        bestName = name;
      }
    }
    return best?.values().next().value;
  }

  /** The listeners that named task `taskId` (a copy). */
  listenersOfTask(taskId: string): ChangeListener[] {
    const listeners = this.byTask.get(taskId);
    return listeners === undefined ? [] : [...listeners];
  }

  /** Forgets a listener (it hung up or ended); everything it held goes at once. Idempotent. */
  remove(listener: ChangeListener): void {
    if (!this.all.delete(listener)) return;
    this.ledger.remove(listener);
    const bucket = payer(listener);
    const own = this.perScope.get(bucket);
    own?.delete(listener);
    if (own?.size === 0) this.perScope.delete(bucket);
    this.byList.tools.delete(listener);
    this.byList.prompts.delete(listener);
    this.byList.resources.delete(listener);
    for (const uri of listener.filter.resourceSubscriptions) removeFrom(this.byUri, uri, listener);
    for (const taskId of listener.filter.taskIds) removeFrom(this.byTask, taskId, listener);
  }

  /** Sends a change to the listeners that asked for it; returns how many. */
  deliver(event: ChangeEvent): number {
    let listeners: ReadonlySet<ChangeListener> | undefined;
    let head: string;
    let tail: string;
    if (event.type === "list") {
      listeners = this.byList[event.list];
      head = `{"jsonrpc":"2.0","method":"notifications/${event.list}/list_changed","params":{"_meta":{"${SUBSCRIPTION_ID_KEY}":`;
      tail = "}}}";
    } else if (event.type === "updated") {
      listeners = this.byUri.get(event.uri);
      head = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"${SUBSCRIPTION_ID_KEY}":`;
      tail = `},"uri":${JSON.stringify(event.uri)}}}`;
    } else {
      return 0;
    }
    if (listeners === undefined || listeners.size === 0) return 0;
    const targets = [...listeners];
    for (const listener of targets) {
      try {
        listener.send(head + listener.subscriptionIdJson + tail);
      } catch {
        // A failing stream is its own (its exchange cuts and removes it).
      }
    }
    return targets.length;
  }

  /** Ends every listener gracefully (server shutdown). */
  completeAll(): void {
    for (const listener of [...this.all]) {
      this.remove(listener);
      try {
        listener.complete();
      } catch {
        // Shutdown goes on.
      }
    }
  }
}

function payer(listener: ChangeListener): string {
  return listener.bucket ?? listener.scope;
}

/** Ends a listener dropped by a global bound; its stream's failure is its own. */
function endQuietly(listener: ChangeListener): void {
  try {
    listener.complete();
  } catch {
    // The stream was already gone.
  }
}

function addTo(
  index: Map<string, Set<ChangeListener>>,
  key: string,
  listener: ChangeListener,
): void {
  let listeners = index.get(key);
  if (listeners === undefined) {
    listeners = new Set();
    index.set(key, listeners);
  }
  listeners.add(listener);
}

function removeFrom(
  index: Map<string, Set<ChangeListener>>,
  key: string,
  listener: ChangeListener,
): void {
  const listeners = index.get(key);
  if (listeners === undefined) return;
  listeners.delete(listener);
  if (listeners.size === 0) index.delete(key);
}

/**
 * Reads the `notifications` filter of a `subscriptions/listen`: the filter to acknowledge, or an
 * error message for -32602. Unknown fields are ignored (a later revision may add types this
 * server does not serve; they are simply not acknowledged). URIs repeated count once.
 *
 * @example
 * ```ts
 * parseListenFilter({ toolsListChanged: true }, 64, 8192);
 * // { toolsListChanged: true, promptsListChanged: false, resourcesListChanged: false, resourceSubscriptions: [] }
 * ```
 */
export function parseListenFilter(
  value: unknown,
  maxUris: number,
  maxUriLength: number,
): ListenFilter | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "notifications must be an object";
  }
  const raw = value as Record<string, unknown>;
  const flags: Record<string, boolean> = {};
  for (const key of ["toolsListChanged", "promptsListChanged", "resourcesListChanged"]) {
    const flag = raw[key];
    if (flag !== undefined && typeof flag !== "boolean")
      return `notifications.${key} must be a boolean`;
    flags[key] = flag === true;
  }
  const list = raw.resourceSubscriptions;
  const uris = new Set<string>();
  if (list !== undefined) {
    if (!Array.isArray(list)) return "notifications.resourceSubscriptions must be an array of URIs";
    for (const uri of list as unknown[]) {
      if (typeof uri !== "string" || uri.length === 0 || uri.length > maxUriLength) {
        return "notifications.resourceSubscriptions must hold non-empty URI strings";
      }
      uris.add(uri);
      if (uris.size > maxUris) {
        return `notifications.resourceSubscriptions may name at most ${maxUris} URIs`;
      }
    }
  }
  const tasks = raw.taskIds;
  const taskIds = new Set<string>();
  if (tasks !== undefined) {
    if (!Array.isArray(tasks)) return "notifications.taskIds must be an array of task ids";
    for (const taskId of tasks as unknown[]) {
      if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 128) {
        return "notifications.taskIds must hold task id strings";
      }
      taskIds.add(taskId);
      if (taskIds.size > MAX_LISTEN_TASK_IDS) {
        return `notifications.taskIds may name at most ${MAX_LISTEN_TASK_IDS} tasks`;
      }
    }
  }
  return {
    toolsListChanged: flags.toolsListChanged === true,
    promptsListChanged: flags.promptsListChanged === true,
    resourcesListChanged: flags.resourcesListChanged === true,
    resourceSubscriptions: [...uris],
    taskIds: [...taskIds],
  };
}

/** The acknowledged filter as sent: fields the listener did not ask for are left out. */
export function acknowledgedFilter(filter: ListenFilter): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  if (filter.toolsListChanged) shown.toolsListChanged = true;
  if (filter.promptsListChanged) shown.promptsListChanged = true;
  if (filter.resourcesListChanged) shown.resourcesListChanged = true;
  if (filter.resourceSubscriptions.length > 0) {
    shown.resourceSubscriptions = filter.resourceSubscriptions;
  }
  if (filter.taskIds.length > 0) shown.taskIds = filter.taskIds;
  return shown;
}
