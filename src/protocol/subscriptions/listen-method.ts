/**
 * `subscriptions/listen` (2026-07-28 basic/patterns/subscriptions,
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): a
 * long-lived stream. The acknowledgement goes first, then every change the filter asked for,
 * each tagged with the request id as subscription id. The request ends when the stream does: the
 * client closed it (or sent `notifications/cancelled`, on stdio), or it was cut for not reading
 * (no response then), or the server shuts down (a `complete` result, then the end). It holds its
 * scope's request and stream units while it lasts.
 */
import { ErrorCode } from "../../errors.js";
import {
  bucketOf,
  type MethodDefinition,
  type MethodHost,
  type MethodRequest,
  type ProtocolFeature,
} from "../calls/index.js";
import { internalErrorJson, successResponseJson } from "../wire/index.js";
import {
  acknowledgedFilter,
  type ChangeListener,
  type ChangeListeners,
  type ListenFilter,
  parseListenFilter,
  SUBSCRIPTION_ID_KEY,
} from "./change-listeners.js";

/**
 * Most list and resource changes a `subscriptions/listen` keeps while its tasks are read, before
 * its acknowledgement (later ones in that window are dropped, as before the listener existed).
 */
const MAX_EARLY_CHANGES = 64;

/** What `subscriptions/listen` needs of tasks, when they are served (tasks/task-methods.ts). */
export interface ListenTasks {
  /** Whether the client declared the tasks extension (task ids need it). */
  declared(clientCapabilities: Readonly<Record<string, unknown>>): boolean;
  /** Answers the refusal of task ids to a client that did not declare the extension (-32021). */
  refuse(request: MethodRequest): Promise<void>;
  /** The state keys of the caller's own tasks among `taskIds` (another scope's are left out). */
  states(scope: string, taskIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** Tells `listener` the current state of `taskId` (never rejects). */
  notify(listener: ChangeListener, taskId: string): void;
}

/** What {@link ListenFeature} takes. */
export interface ListenFeatureOptions {
  readonly host: MethodHost;
  readonly table: ChangeListeners;
  /** Longest resource URI a filter may name. */
  readonly maxUriLength: number;
  readonly tasks: ListenTasks | null;
}

/**
 * The `subscriptions/listen` method (its capabilities are the tools', resources' and prompts'
 * `listChanged` and `subscribe`, which they advertise when it is served).
 *
 * @example
 * ```ts
 * const listen = new ListenFeature({ host, table: new ChangeListeners(), maxUriLength: 8_192, tasks: null });
 * ```
 */
export class ListenFeature implements ProtocolFeature {
  readonly id = "subscriptions";
  readonly methods: Readonly<Record<string, MethodDefinition>>;

  constructor(private readonly options: ListenFeatureOptions) {
    this.methods = {
      "subscriptions/listen": { eras: "2026", run: (r) => this.listen(r) },
    };
  }

  private listen(request: MethodRequest): Promise<void> {
    const { host, table, maxUriLength } = this.options;
    let filter = parseListenFilter(request.params?.notifications, table.maxUris, maxUriLength);
    if (typeof filter === "string") {
      return host.answerError(request, ErrorCode.InvalidParams, filter);
    }
    const { sink } = request;
    if (!sink.streamable || request.id === null) {
      return host.answerError(
        request,
        ErrorCode.InvalidRequest,
        "subscriptions/listen needs a stream: accept text/event-stream.",
      );
    }
    // SEP-2663, "Task Status Notifications": task ids need the extension declared (-32021).
    const tasks = filter.taskIds.length > 0 ? this.options.tasks : null;
    if (tasks !== null && !tasks.declared(request.modern?.clientCapabilities ?? {})) {
      return tasks.refuse(request);
    }
    if (tasks === null) filter = { ...filter, taskIds: [] };
    return new Promise<void>((resolve) => {
      listenUntilEnd({ host, table, tasks, request, filter: filter as ListenFilter, resolve });
    });
  }
}

/** One open `subscriptions/listen`: its listener, from the bounds' verdict to the stream's end. */
function listenUntilEnd(open: {
  readonly host: MethodHost;
  readonly table: ChangeListeners;
  readonly tasks: ListenTasks | null;
  readonly request: MethodRequest;
  readonly filter: ListenFilter;
  readonly resolve: () => void;
}): void {
  const { host, table, tasks, request, filter: requested, resolve } = open;
  const { sink, handle } = request;
  const subscriptionIdJson = JSON.stringify(request.id);
  let done = false;
  const finish = (graceful: boolean): void => {
    if (done) return;
    done = true;
    table.remove(listener);
    sink.setListener(null);
    handle.setAbortListener(null);
    if (graceful) {
      void host
        .answer(
          request,
          successResponseJson(
            request.id,
            `{"resultType":"complete","_meta":{"${SUBSCRIPTION_ID_KEY}":${subscriptionIdJson}}}`,
          ),
        )
        .then(resolve, resolve);
      return;
    }
    // Ended by the client (or cut): no response, the stream just ends.
    void host.endUnanswered(request).then(resolve, resolve);
  };
  // Changes heard before the acknowledgement is sent (it goes first), sent right after it.
  let early: string[] | null = [];
  const listener: ChangeListener = {
    scope: request.meta.scope,
    bucket: bucketOf(request.meta) ?? request.meta.scope,
    filter: requested,
    subscriptionIdJson,
    taskStatuses: new Map(),
    heldTasks: tasks === null ? null : new Set(),
    send: (json) => {
      if (sink.ended) finish(false);
      else if (early === null) void sink.notify(json);
      else if (early.length < MAX_EARLY_CHANGES) early.push(json);
    },
    complete: () => finish(true),
  };
  // Added before any task is read: the bounds refuse first, and a task that changes while
  // its state is read is heard (held until the acknowledgement, then read again).
  const refused = table.add(listener);
  if (refused !== null) {
    done = true;
    void host
      .answerError(
        request,
        ErrorCode.ServerError,
        refused === "scope-full"
          ? `Too many subscriptions/listen streams for this client (at most ${table.maxPerScope}, or their filters' bytes); close one first.`
          : "Too many subscriptions/listen streams on this server; retry later.",
      )
      .then(resolve, resolve);
    return;
  }
  // A hang-up, a cut for not reading, or a cancel frees the listener at once.
  sink.setListener({ onDisconnect: () => finish(false) });
  handle.setAbortListener({ handleEvent: () => finish(false) });
  const acknowledge = (): void => {
    if (done) return;
    // Only the caller's own tasks are acknowledged (another scope's id is left out, as an
    // unknown one); the others stay named but are never told (task-notifications.ts).
    const acknowledged = { ...requested, taskIds: [...listener.taskStatuses.keys()] };
    void sink.notify(
      `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"${SUBSCRIPTION_ID_KEY}":${subscriptionIdJson}},"notifications":${JSON.stringify(acknowledgedFilter(acknowledged))}}}`,
    );
    for (const json of early ?? []) void sink.notify(json);
    early = null;
    if (sink.ended) {
      finish(false);
      return;
    }
    const held = listener.heldTasks;
    listener.heldTasks = null;
    if (tasks === null || held === null) return;
    for (const taskId of held) tasks.notify(listener, taskId);
  };
  if (tasks === null) {
    acknowledge();
    return;
  }
  tasks.states(request.meta.scope, requested.taskIds).then(
    (states) => {
      for (const [taskId, state] of states) listener.taskStatuses.set(taskId, state);
      acknowledge();
    },
    () => {
      // The task store failed (an outage): answered as any method that threw.
      if (done) return;
      done = true;
      table.remove(listener);
      sink.setListener(null);
      handle.setAbortListener(null);
      void host.answer(request, internalErrorJson(request.id)).then(resolve, resolve);
    },
  );
}
