/**
 * Asking the client from a 2025-11-25 task's handler
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, "Input Required
 * Status" and "Task-Augmented Tool Call With Elicitation"). The request that created the task has
 * been answered, so a question cannot go on its stream: the task moves to `input_required` and
 * the question waits in the task's record until the client opens `tasks/result`, on whose stream
 * the server sends it (task-service.ts), on whichever node that request reached.
 *
 * The asks themselves are the 2025 server requests of server-requests.ts — the same ids
 * (`<node>.<secret>`), the same table bounded per scope then per node, the same timeout, the same
 * checks of the answer, and the same way back: the client's answer is a POST to any node, carried
 * by the reply bus to the node that asked, accepted only from the task's scope. Only the way out
 * differs: {@link TaskOutbox} is the asker's sink, and writes each question (with the
 * `io.modelcontextprotocol/related-task` `_meta` every message of a task carries, "Associating
 * Task-Related Messages") to the record's `inputRequests`, as a map from request id to JSON-RPC
 * request. The task goes back to `working` once no question is outstanding.
 *
 * A question withdrawn unanswered (its timeout) stays in the same map as `{ "withdrawn": reason }`
 * (the newest {@link MAX_WITHDRAWN}), so that a `tasks/result` stream that sent it can tell the
 * client with `notifications/cancelled`, as a call's stream is told: a client still showing it
 * would otherwise answer into the void. An answered question just leaves: cancellation may only
 * name a request "believed to still be in-progress" (2025-11-25 basic/utilities/cancellation,
 * "Behavior Requirements", https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation).
 */
import type { HandleLifetime } from "../../cancellation/types.js";
import type { TaskStore } from "../../tasks/task-store.js";
import { ServerRequestAsker, type ServerRequestSettings } from "../asking/index.js";
import type { ResponseSink, SinkListener } from "../wire/index.js";
import { isPlainObject, notificationJson } from "../wire/index.js";
import { META_RELATED_TASK, storedInputRequests } from "./task-wire.js";

/** What {@link TaskOutbox} takes. */
export interface TaskOutboxOptions {
  readonly store: TaskStore;
  readonly scope: string;
  /** The bucket the task is paid for by (its questions count against it too). Absent: `scope`. */
  readonly bucket?: string;
  readonly taskId: string;
  /** Told after each write of the questions (a `tasks/result` wait on this node wakes up). */
  readonly changed: () => void;
}

/**
 * The way out of one 2025 task's asks: its record.
 *
 * @example
 * ```ts
 * const asker = TaskOutbox.asker(settings, { store, scope, taskId, changed }, capabilities);
 * // handed to the task's handler call; tasks/result sends what the record lists
 * ```
 */
export class TaskOutbox implements ResponseSink, HandleLifetime {
  readonly streamable = true;
  private readonly store: TaskStore;
  private readonly scope: string;
  private readonly taskId: string;
  private readonly changed: () => void;
  /** Questions not answered yet: request id → the JSON-RPC request. */
  private readonly questions = new Map<string, Record<string, unknown>>();
  /** Questions withdrawn unanswered, newest last: request id → why (at most {@link MAX_WITHDRAWN}). */
  private readonly withdrawn = new Map<string, string>();
  private closed = false;
  /** Store writes in order, one at a time. */
  private writes: Promise<unknown> = Promise.resolve();
  /** The end of the write queued and not started yet, or null. */
  private pending: Promise<void> | null = null;

  constructor(options: TaskOutboxOptions) {
    this.store = options.store;
    this.scope = options.scope;
    this.taskId = options.taskId;
    this.changed = options.changed;
  }

  /**
   * A {@link ServerRequestAsker} whose questions go to the task's record: `capabilities` are what
   * the client declared (its session's), or null when this server was not told (then the
   * `unknownCapabilities` rule decides, as for any 2025 call).
   */
  static asker(
    settings: ServerRequestSettings,
    options: TaskOutboxOptions,
    capabilities: Readonly<Record<string, unknown>> | null,
  ): ServerRequestAsker {
    const outbox = new TaskOutbox(options);
    const who = { scope: options.scope, bucket: options.bucket ?? options.scope };
    return new ServerRequestAsker(settings, outbox, who, capabilities, {
      ended: (id) => outbox.answered(id),
      closed: () => outbox.close(),
    });
  }

  get ended(): boolean {
    return this.closed;
  }

  get aborted(): boolean {
    return this.closed;
  }

  get lifetime(): HandleLifetime {
    return this;
  }

  /**
   * A question of the asker (a JSON-RPC request): parked in the record. Its withdrawal
   * (`notifications/cancelled`, sent once the question has left): kept for `tasks/result`.
   * Anything else is dropped.
   */
  notify(json: string): Promise<void> {
    if (this.closed) return RESOLVED;
    let message: unknown;
    try {
      message = JSON.parse(json);
    } catch {
      return RESOLVED;
    }
    if (!isPlainObject(message) || typeof message.method !== "string") return RESOLVED;
    const params = isPlainObject(message.params) ? message.params : {};
    if (message.method === "notifications/cancelled") {
      if (typeof params.requestId !== "string") return RESOLVED;
      this.withdrawn.set(params.requestId, String(params.reason ?? ""));
      if (this.withdrawn.size > MAX_WITHDRAWN) {
        this.withdrawn.delete(this.withdrawn.keys().next().value as string);
      }
      return this.publish();
    }
    if (typeof message.id !== "string") return RESOLVED;
    const meta = isPlainObject(params._meta) ? params._meta : {};
    this.questions.set(message.id, {
      jsonrpc: "2.0",
      id: message.id,
      method: message.method,
      params: { ...params, _meta: { ...meta, [META_RELATED_TASK]: { taskId: this.taskId } } },
    });
    return this.publish();
  }

  /** The question `id` was answered, timed out or withdrawn: it leaves the record. */
  answered(id: string): void {
    if (this.questions.delete(id)) void this.publish();
  }

  /** The run is over: nothing more is written (the task's outcome clears the questions). */
  close(): void {
    this.closed = true;
    this.questions.clear();
    this.withdrawn.clear();
  }

  /** A task's asker never answers a request itself. */
  respond(): void {}

  cancel(): void {}

  setSessionId(): void {}

  setListener(_listener: SinkListener | null): void {}

  /** Writes the outstanding questions (and the status they imply) to the store, in order. */
  private publish(): Promise<void> {
    // A write not started yet will write the state as it is then: one more would repeat it (a
    // withdrawal is told twice at once: the ask ended, then its notifications/cancelled).
    if (this.pending !== null) return this.pending;
    const next = this.writes.then(async () => {
      this.pending = null;
      if (this.closed) return;
      const waiting = this.questions.size > 0;
      const listed: Record<string, unknown> = {};
      for (const [id, reason] of this.withdrawn) listed[id] = { withdrawn: reason };
      for (const [id, request] of this.questions) listed[id] = request;
      await this.store.update(this.scope, this.taskId, {
        status: waiting ? "input_required" : "working",
        inputRequests: waiting || this.withdrawn.size > 0 ? JSON.stringify(listed) : null,
      });
      this.changed();
    });
    this.writes = next.catch(ignore);
    this.pending = this.writes.then(ignore);
    return this.pending;
  }
}

const RESOLVED: Promise<void> = Promise.resolve();
/**
 * Most withdrawn questions a record keeps: the default per-scope bound of open asks
 * (server-requests.ts), so every question open at once can be withdrawn and still be announced.
 */
const MAX_WITHDRAWN = 16;
/** Longest withdrawal reason read back from a record (a shared store is not trusted blindly). */
const MAX_REASON_LENGTH = 256;

function ignore(): void {}

/**
 * The questions a 2025 task's record lists (`inputRequests` as {@link TaskOutbox} wrote it), as
 * JSON-RPC request texts by id; empty when there are none or the text is not such a map (a
 * record of a shared store is not trusted blindly).
 *
 * @example
 * ```ts
 * for (const [id, json] of storedQuestions(task.inputRequests)) await sink.notify(json);
 * ```
 */
export function storedQuestions(inputRequests: string | null): Map<string, string> {
  const questions = new Map<string, string>();
  const parsed = storedInputRequests(inputRequests) ?? {};
  for (const [id, message] of Object.entries(parsed)) {
    if (!isPlainObject(message) || typeof message.method !== "string") continue;
    const params = isPlainObject(message.params) ? message.params : {};
    questions.set(id, JSON.stringify({ jsonrpc: "2.0", id, method: message.method, params }));
  }
  return questions;
}

/**
 * The questions a 2025 task's record lists as withdrawn unanswered ({@link TaskOutbox}), as the
 * `notifications/cancelled` text to send for each, by request id; empty when there are none.
 * Each carries the related-task `_meta` of task `taskId`: a notification about a task's request
 * is related to the task (2025-11-25 tasks, "Associating Task-Related Messages": every request,
 * notification and response related to a task carries it).
 *
 * @example
 * ```ts
 * for (const [id, json] of storedWithdrawals(task.inputRequests, task.taskId)) if (sent.has(id)) await send(json);
 * ```
 */
export function storedWithdrawals(
  inputRequests: string | null,
  taskId: string,
): Map<string, string> {
  const withdrawn = new Map<string, string>();
  const parsed = storedInputRequests(inputRequests) ?? {};
  for (const [id, entry] of Object.entries(parsed)) {
    if (!isPlainObject(entry) || typeof entry.withdrawn !== "string") continue;
    const reason = entry.withdrawn.slice(0, MAX_REASON_LENGTH);
    const _meta = { [META_RELATED_TASK]: { taskId } };
    withdrawn.set(
      id,
      notificationJson("notifications/cancelled", { requestId: id, reason, _meta }),
    );
  }
  return withdrawn;
}
