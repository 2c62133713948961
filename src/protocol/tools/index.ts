/**
 * Tools: `defineTool` and what a tool declares (schemas, annotations, isolation, task support).
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type {
  ArgumentCheck,
  ArgumentIssue,
  ContentBlock,
  JsonSchemaObject,
  TaskSupport,
  Tool,
  ToolAnnotations,
  ToolArgs,
  ToolDefinition,
  ToolResult,
  ToolReturn,
} from "./define-tool.js";
export { defineTool } from "./define-tool.js";
export { ToolInvocation } from "./tool-invocation.js";
export type { ToolFeatureOptions, ToolTasks } from "./tool-methods.js";
export { ToolFeature } from "./tool-methods.js";
