/**
 * The task layer: the {@link TaskStore} contract, the memory store and task ids
 * (docs/architecture.md, "Layers").
 */
export {
  DEFAULT_MAX_TASK_BYTES,
  DEFAULT_MAX_TASK_BYTES_PER_SCOPE,
  DEFAULT_MAX_TASK_RESULT_BYTES,
  DEFAULT_MAX_TASKS,
  DEFAULT_MAX_TASKS_PER_SCOPE,
  MemoryTaskStore,
  type MemoryTaskStoreOptions,
  readTaskBounds,
  type TaskBounds,
} from "./memory-task-store.js";
export { isTaskId, newTaskId, TASK_ID_LENGTH } from "./task-id.js";
export {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  emptyStatusCounts,
  type FinishTaskOutcome,
  isTerminalStatus,
  type ListTasksOptions,
  type NewTask,
  ORPHANED_TASK_ERROR,
  ORPHANED_TASK_MESSAGE,
  type TaskChange,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
  type TaskUpdate,
  type TerminalTaskStatus,
} from "./task-store.js";
