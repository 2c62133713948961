/**
 * The tasks capability: the `tasks/*` methods (2025-11-25 basic/utilities/tasks; 2026-07-28 the
 * `io.modelcontextprotocol/tasks` extension, SEP-2663,
 * https://modelcontextprotocol.io/extensions/tasks/overview), a `tools/call` that becomes a task,
 * the task ids of a `subscriptions/listen`, and what `initialize` and `server/discover` advertise.
 */
import type { CancellationRegistry } from "../../cancellation/index.js";
import type { ServerRequestSettings } from "../asking/index.js";
import type {
  Extension,
  MethodEras,
  MethodHost,
  MethodRequest,
  RawExtensionMethod,
} from "../calls/index.js";
import { bucketOf, defineBuiltInExtension, progressTokenOf } from "../calls/index.js";
import type { ChangeListener, ListenTasks } from "../subscriptions/index.js";
import type { ToolInvocation, ToolTasks } from "../tools/index.js";
import type { ListCursors } from "../wire/index.js";
import { cancelledResponseJson } from "../wire/index.js";
import { BeforeTaskInvocation } from "./before-task.js";
import { missingTasksExtension, orStoreOutage, type TaskAnswer } from "./task-answers.js";
import { notifyTaskListener, taskStateKey } from "./task-notifications.js";
import type { TaskOptions } from "./task-options.js";
import { type TaskRequest, TaskService } from "./task-service.js";
import { TASKS_EXTENSION } from "./task-wire.js";

/** What {@link TaskFeature} takes. */
export interface TaskFeatureOptions {
  readonly host: MethodHost;
  readonly registry: CancellationRegistry;
  readonly cursors: ListCursors;
  readonly pageSize: number;
  readonly options?: TaskOptions | undefined;
  readonly serverRequests: ServerRequestSettings;
}

/**
 * The tasks capability, over one {@link TaskService}.
 *
 * @example
 * ```ts
 * const tasks = new TaskFeature({ host, registry, cursors, pageSize: 100, serverRequests });
 * const tools = new ToolFeature({ ...toolOptions, tasks });
 * ```
 */
export class TaskFeature implements ToolTasks, ListenTasks {
  readonly service: TaskService;
  /**
   * The tasks methods and declarations as an extension on the method table's seam (served by an
   * `ExtensionFeature`, like any user extension): 2026-07-28 declares
   * `extensions["io.modelcontextprotocol/tasks"]` (SEP-2663, "Capability Negotiation": the
   * extension, never a `tasks` capability); 2025-11-25 keeps its core `tasks` capability
   * (2025-11-25, Tasks, "Server Capabilities").
   */
  readonly extension: Extension;
  private readonly host: MethodHost;

  constructor(options: TaskFeatureOptions) {
    this.host = options.host;
    this.service = new TaskService(options);
    const tasks = this.service;
    this.extension = defineBuiltInExtension({
      id: TASKS_EXTENSION,
      capabilities2025: {
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      methods: {
        "tasks/get": this.serve("both", (r) => tasks.get(r)),
        "tasks/cancel": this.serve("both", (r) => tasks.cancel(r)),
        // 2025-11-25 only: SEP-2663 removed tasks/result and tasks/list (-32601 in 2026-07-28).
        "tasks/result": this.serve("2025", (r) => tasks.result(r)),
        "tasks/list": this.serve("2025", (r) => tasks.list(r)),
        "tasks/update": this.serve("2026", (r) => tasks.update(r)),
      },
    });
  }

  /**
   * ToolTasks: a `tools/call` of a task-supporting tool, or a 2025-era one carrying
   * `params.task`: a task when the client asks for one (2025: `params.task`; 2026-07-28: the
   * tasks extension declared), else a plain call, or a refusal (task-service.ts). The task's run
   * gets a progress token of its own, so progress reaches the task's status message even when
   * the client sent none.
   */
  async call(request: MethodRequest, invocation: ToolInvocation): Promise<void> {
    const { host } = this;
    const { params } = request;
    const taskRequest = {
      id: request.id,
      params,
      scope: request.meta.scope,
      bucket: bucketOf(request.meta),
      modern: request.modern?.clientCapabilities ?? null,
      declared: request.meta.clientCapabilities ?? null,
    };
    const decision = this.service.decide(taskRequest, invocation.tool.taskSupport);
    if (decision.kind === "sync") {
      return host.startCall(request, invocation, progressTokenOf(params));
    }
    if (decision.kind === "refuse") return this.answer(request, decision.answer);
    if (request.modern !== null && invocation.tool.beforeTask !== null) {
      // Ask first, then become a task (before-task.ts): `beforeTask` runs as this request's
      // call, through input_required rounds; the task is created once it has returned.
      const phase = new BeforeTaskInvocation(invocation.tool, invocation.args, (prepared, call) =>
        this.create(request, { ...taskRequest, signal: call.signal }, invocation.with(prepared)),
      );
      return host.startCall(request, phase, progressTokenOf(params));
    }
    return this.answer(request, await this.create(request, taskRequest, invocation));
  }

  /** ListenTasks. */
  declared(clientCapabilities: Readonly<Record<string, unknown>>): boolean {
    return TaskService.declaresExtension(clientCapabilities);
  }

  /** ListenTasks. */
  refuse(request: MethodRequest): Promise<void> {
    return this.answer(request, missingTasksExtension(request.id));
  }

  /** ListenTasks. */
  async states(scope: string, taskIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const visible = await this.service.visible(scope, taskIds);
    return new Map(visible.map((task) => [task.taskId, taskStateKey(task)]));
  }

  /** ListenTasks. */
  notify(listener: ChangeListener, taskId: string): void {
    void notifyTaskListener(listener, this.service.store, taskId);
  }

  /** Creates the task of a `tools/call` and starts `invocation` as its detached run. */
  private create(
    request: MethodRequest,
    taskRequest: Omit<TaskRequest, "signal"> & { readonly signal?: AbortSignal },
    invocation: ToolInvocation,
  ): Promise<TaskAnswer> {
    return this.service.create(taskRequest, (sink, handle, asker) => {
      void this.host.startCall(request, invocation, progressTokenOf(request.params) ?? 0, {
        sink,
        handle,
        asker,
      });
    });
  }

  /** Answers what a task method resolved; null means the request's exchange already ended. */
  private answer(request: MethodRequest, answer: TaskAnswer | null): Promise<void> {
    if (answer === null) return this.host.answer(request, cancelledResponseJson(request.id));
    return this.host.answer(request, answer.json, answer.status, answer.headers);
  }

  /** A `tasks/*` method: the request as a task method sees it, its answer written. */
  private serve(
    eras: MethodEras,
    run: (request: TaskRequest) => Promise<TaskAnswer | null>,
  ): RawExtensionMethod {
    return {
      eras,
      // A shared store that cannot be reached answers 503 with a retry hint, never a bare -32603.
      run: async (request) =>
        this.answer(request, await orStoreOutage(request.id, () => run(taskRequestOf(request)))),
    };
  }
}

/** The request as a task method sees it. */
function taskRequestOf(request: MethodRequest): TaskRequest {
  return {
    id: request.id,
    params: request.params,
    scope: request.meta.scope,
    bucket: bucketOf(request.meta),
    modern: request.modern?.clientCapabilities ?? null,
    signal: request.handle.signal,
    send: request.sink.streamable ? (json) => request.sink.notify(json) : null,
  };
}
