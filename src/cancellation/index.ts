/**
 * The cancellation layer: registry, stores, janitor and request-id rules (docs/architecture.md,
 * "Layers").
 */
export { compareCodePoints } from "./code-point-order.js";
export {
  CancellationJanitor,
  type CancellationJanitorOptions,
  DEFAULT_JANITOR_INTERVAL_MS,
} from "./janitor.js";
export {
  DEFAULT_MAX_ROWS,
  DEFAULT_MAX_ROWS_PER_SCOPE,
  MemoryCancellationStore,
  type MemoryCancellationStoreOptions,
} from "./memory-store.js";
export {
  CancellationRegistry,
  type CancellationRegistryOptions,
  DEFAULT_TTL_MS,
  type TrackOptions,
} from "./registry.js";
export { MAX_REQUEST_ID_BYTES, normalizeRequestId } from "./request-id.js";
export type {
  AbortListener,
  CancellationRow,
  CancellationStore,
  CancelResult,
  CleanupResult,
  HandleLifetime,
  RecordOutcome,
  RemoteCancellation,
  RequestHandle,
  RequestId,
} from "./types.js";
