/**
 * Tasks: a tool call that outlives its request. The service behind `tasks/*`, the sinks that
 * record a task's answer, the outbox and asker through which a task asks the client, the relay of
 * task updates between nodes, and the status notifications.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */
export { BeforeTaskInvocation } from "./before-task.js";
export type { TaskAnswer } from "./task-answers.js";
export { missingTasksExtension, orStoreOutage } from "./task-answers.js";
export type { TaskFeatureOptions } from "./task-methods.js";
export { TaskFeature } from "./task-methods.js";
export {
  notifySessionStream,
  notifyTaskListener,
  notifyTaskListeners,
  sessionOfScope,
  taskStateKey,
} from "./task-notifications.js";
export type { TaskOptions } from "./task-options.js";
export { TASK_DEFAULTS } from "./task-options.js";
export type { TaskRequest } from "./task-service.js";
export { TaskService } from "./task-service.js";
export { TASKS_EXTENSION } from "./task-wire.js";
