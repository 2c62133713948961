/**
 * One handler call: its context (what a handler sees), its run from start to answer, its
 * cancellation by `notifications/cancelled`, and the primitive every capability defines (a named
 * handler with a schema) with the collection that lists it.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */
export { type CallAsking, callAsking } from "./call-asker.js";
export { processCancelledNotification } from "./cancelled-notification.js";
export type { DispatchObserver } from "./dispatch-observer.js";
export type {
  Extension,
  ExtensionDefinition,
  ExtensionMethod,
  ExtensionRequest,
  JsonObject,
  RawExtensionMethod,
} from "./extension.js";
export {
  clientSettingsOf,
  declaredExtension,
  defineBuiltInExtension,
  defineExtension,
  ExtensionFeature,
  isExtensionId,
} from "./extension.js";
export { HANDLED } from "./handled.js";
export type {
  HandlerCallHost,
  HandlerCallOptions,
  HandlerInvocation,
} from "./handler-call/handler-call.js";
export { HandlerCall } from "./handler-call/handler-call.js";
export type {
  HandlerEnd,
  HandlerInfo,
  HandlerOutcome,
  HandlerResult,
  InvocationAnswer,
  ToolOutcome,
} from "./handler-call/handler-outcome.js";
export { type ListMethodOptions, listMethod } from "./list-method.js";
export type {
  DetachedRun,
  MethodDefinition,
  MethodEras,
  MethodHolds,
  MethodHost,
  MethodRequest,
  ModernRequestInfo,
  NegotiatedExtension,
  ProtocolFeature,
  ServerCapabilities,
} from "./method-table.js";
export { capabilitiesOf, progressTokenOf, visibilityOf } from "./method-table.js";
export type {
  ArgumentCheck,
  ArgumentIssue,
  CheckedPrimitiveFields,
  Icon,
  PrimitiveFields,
  Prompt,
  VisibilityContext,
} from "./primitive.js";
export { checkPrimitiveFields } from "./primitive.js";
export type { CollectionChange, ItemAccess, ListedItem, ListPage } from "./primitive-collection.js";
export { accessOf, PrimitiveCollection } from "./primitive-collection.js";
export type {
  ProtocolEra,
  RequestInfo,
  RequestMeta,
  RequestView,
  RequestViewSource,
} from "./request-info.js";
export { bucketOf, NO_STABLE_CLIENT, snapshotView } from "./request-info.js";
export { RunningCalls } from "./running-calls.js";
export type { ToolContext } from "./tool-context.js";
