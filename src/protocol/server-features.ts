/**
 * The features a dispatcher serves, built from its options: tools, resources, prompts,
 * completion, the lifecycle methods, `subscriptions/listen` when a listener table is given,
 * tasks unless turned off (the built-in `io.modelcontextprotocol/tasks` extension), then the
 * user's extensions (calls/extension.ts), each through the same extension seam. Their order is the order of their capabilities' keys in `initialize`
 * and `server/discover` results.
 */
import type { CancellationRegistry } from "../cancellation/index.js";
import type { ServerRequestSettings } from "./asking/index.js";
import { ExtensionFeature, type MethodHost, type ProtocolFeature } from "./calls/index.js";
import { CompletionFeature } from "./completion/index.js";
import type { DispatcherOptions } from "./dispatcher-options.js";
import { LifecycleFeature } from "./lifecycle.js";
import { PromptFeature } from "./prompts/index.js";
import { ResourceFeature } from "./resources/index.js";
import { ListenFeature } from "./subscriptions/index.js";
import { TaskFeature } from "./tasks/index.js";
import { ToolFeature } from "./tools/index.js";
import { ListCursors } from "./wire/index.js";

/** What {@link serverFeatures} builds. */
export interface ServedFeatures {
  readonly tools: ToolFeature;
  readonly resources: ResourceFeature;
  readonly prompts: PromptFeature;
  readonly lifecycle: LifecycleFeature;
  readonly tasks: TaskFeature | null;
  /** Every feature, in the order they are registered. */
  readonly all: readonly ProtocolFeature[];
}

/**
 * Builds the features of a dispatcher.
 *
 * @example
 * ```ts
 * const served = serverFeatures(options, { host: dispatcher, registry, serverRequests });
 * for (const feature of served.all) dispatcher.register(feature);
 * ```
 */
export function serverFeatures(
  options: DispatcherOptions,
  context: {
    readonly host: MethodHost;
    readonly registry: CancellationRegistry;
    readonly serverRequests: ServerRequestSettings;
  },
): ServedFeatures {
  const subscriptions = options.subscriptions ?? null;
  const listeners = options.listeners ?? null;
  const shared = {
    host: context.host,
    cursors: new ListCursors(options.cursorSecret),
    pageSize: options.pageSize ?? 100,
    cacheTtlMs: options.cacheTtlMs ?? 60_000,
    maxUriLength: options.maxUriLength ?? 8_192,
    // List changes reach 2025-era sessions on their GET stream, so they are announced only where
    // sessions (and so GET streams) are served; 2026-07-28 ones on subscriptions/listen.
    listChanged: { "2025": subscriptions !== null, "2026": listeners !== null },
  };
  const tasks =
    options.tasks === false
      ? null
      : new TaskFeature({
          ...shared,
          registry: context.registry,
          options: options.tasks,
          serverRequests: context.serverRequests,
        });
  const tools = new ToolFeature({ ...shared, tools: options.tools, tasks });
  const resources = new ResourceFeature({
    ...shared,
    resources: options.resources,
    resourceTemplates: options.resourceTemplates,
    maxTemplateValueLength: options.maxTemplateValueLength ?? 1_024,
    subscriptions,
    listen: listeners !== null,
  });
  const prompts = new PromptFeature({ ...shared, prompts: options.prompts });
  const completion = new CompletionFeature({
    host: context.host,
    prompts: prompts.prompts,
    resourceTemplates: resources.resourceTemplates,
  });
  const lifecycle = new LifecycleFeature({
    host: context.host,
    identity: options,
    sessions: options.sessions ?? null,
    instructions: options.instructions,
    cacheTtlMs: shared.cacheTtlMs,
  });
  const all: ProtocolFeature[] = [tools, resources, prompts, completion, lifecycle];
  if (listeners !== null) all.push(new ListenFeature({ ...shared, table: listeners, tasks }));
  if (tasks !== null) all.push(new ExtensionFeature(tasks.extension, context.host));
  for (const extension of options.extensions ?? []) {
    all.push(new ExtensionFeature(extension, context.host));
  }
  return { tools, resources, prompts, lifecycle, tasks, all };
}
