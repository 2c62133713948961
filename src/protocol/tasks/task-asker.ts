/**
 * Asking the client from a task's handler (2026-07-28 `io.modelcontextprotocol/tasks` extension,
 * SEP-2663, "Task Update Requests"): an ask parks the task in `input_required` with the question
 * in `inputRequests` under its key; the client answers through `tasks/update` `inputResponses`,
 * and the ask resolves in place while the handler keeps running. The task goes back to `working`
 * once no question is outstanding. Questions are built and answers checked exactly as for
 * input-required results (input-required.ts).
 *
 * Keys are unique over the task's lifetime ("Each request key in inputRequests MUST be unique
 * over the lifetime of a single task"): a key asked twice is refused. Responses for keys not
 * outstanding are ignored ("A server SHOULD ignore any inputResponses responses mapped to a key
 * that is not currently outstanding"); an answer that fails its check refuses the whole update
 * with -32602, as an invalid input-required answer does.
 *
 * A `tasks/update` on the node that runs the task answers here directly; one on another node
 * reaches {@link TaskAsker.answer} through the reply bus (task-update-relay.ts), where an answer
 * that fails its check is ignored instead (its ack was already sent).
 */
import type { TaskStore } from "../../tasks/task-store.js";
import {
  type AskOptions,
  ClientAskerBase,
  checkAnswer,
  type InputRequest,
  type PreparedAsk,
} from "../asking/index.js";

/** Most questions one task may have outstanding at once. */
const MAX_OUTSTANDING = 16;

interface Outstanding {
  readonly request: InputRequest;
  readonly check: (answer: unknown) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The asks of one task's run.
 *
 * @example
 * ```ts
 * const asker = new TaskAsker(store, scope, taskId, clientCapabilities);
 * // handed to the task's handler call; tasks/update calls asker.answer(inputResponses)
 * ```
 */
export class TaskAsker extends ClientAskerBase {
  private readonly outstanding = new Map<string, Outstanding>();
  private readonly used = new Set<string>();
  private closed = false;
  /** Store writes in order, one at a time. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: TaskStore,
    private readonly scope: string,
    private readonly taskId: string,
    private readonly capabilities: Readonly<Record<string, unknown>>,
    /** Told after each write of the questions (status notifications, task-service.ts). */
    private readonly changed: () => void = noop,
  ) {
    super();
  }

  /**
   * `tasks/update`'s `inputResponses`: resolves the outstanding asks they answer (keys not
   * outstanding are ignored), then writes what is still outstanding. Resolves once the store has
   * it: null, or why an answer was refused (nothing resolved then; the client may send it again).
   */
  async answer(responses: Readonly<Record<string, unknown>>): Promise<string | null> {
    // Checked first, all of them: an invalid answer refuses the update and resolves nothing.
    const accepted: Array<[Outstanding, unknown, string]> = [];
    for (const [key, answer] of Object.entries(responses)) {
      const ask = this.outstanding.get(key);
      if (ask === undefined) continue;
      const checked = await checkAnswer(ask, answer, (verdict) => verdict);
      if (typeof checked === "string") return `Invalid inputResponses entry ${key}: ${checked}`;
      accepted.push([ask, checked, key]);
    }
    if (accepted.length === 0) return null;
    for (const [ask, checked, key] of accepted) {
      this.outstanding.delete(key);
      ask.resolve(checked);
    }
    await this.publish();
    return null;
  }

  /** The run is over: open asks reject; nothing more is written. */
  close(_reason: string, error: () => unknown): void {
    this.closed = true;
    if (this.outstanding.size === 0) return;
    const reason = error();
    for (const ask of this.outstanding.values()) ask.reject(reason);
    this.outstanding.clear();
  }

  protected declared(): Readonly<Record<string, unknown>> {
    return this.capabilities;
  }

  protected ask(prepared: PreparedAsk, options: AskOptions | undefined): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("the task has ended"));
    const key = this.keyOf(prepared, options);
    if (key instanceof TypeError) return Promise.reject(key);
    if (this.used.has(key)) {
      return Promise.reject(new TypeError(`ask key ${key} was already used in this task`));
    }
    if (this.outstanding.size >= MAX_OUTSTANDING) {
      return Promise.reject(new RangeError(`at most ${MAX_OUTSTANDING} questions at once`));
    }
    this.used.add(key);
    return new Promise((resolve, reject) => {
      this.outstanding.set(key, {
        request: prepared.request,
        check: prepared.check,
        resolve,
        reject,
      });
      void this.publish();
    });
  }

  /** Writes the outstanding questions (and the status they imply) to the store, in order. */
  private publish(): Promise<void> {
    const next = this.writes.then(async () => {
      if (this.closed) return;
      const requests = Object.fromEntries(
        [...this.outstanding].map(([key, ask]) => [key, ask.request]),
      );
      const waiting = this.outstanding.size > 0;
      await this.store.update(this.scope, this.taskId, {
        status: waiting ? "input_required" : "working",
        inputRequests: waiting ? JSON.stringify(requests) : null,
      });
      this.changed();
    });
    this.writes = next.catch(() => {});
    return this.writes.then(() => {});
  }
}

function noop(): void {}
