/**
 * Who listens for changes: the 2026-07-28 `subscriptions/listen` streams and the 2025-11-25
 * `resources/subscribe` subscriptions. Capabilities announce into them.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type { ChangeListener, ChangeListenersOptions } from "./change-listeners.js";
export {
  acknowledgedFilter,
  ChangeListeners,
  DEFAULT_MAX_LISTEN_BYTES,
  DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
  DEFAULT_MAX_LISTEN_URIS,
  DEFAULT_MAX_LISTENERS,
  DEFAULT_MAX_LISTENERS_PER_SCOPE,
  parseListenFilter,
  SUBSCRIPTION_ID_KEY,
} from "./change-listeners.js";
export type { ListenFeatureOptions, ListenTasks } from "./listen-method.js";
export { ListenFeature } from "./listen-method.js";
export type { SessionDelivery, SubscribeOutcome } from "./resource-subscriptions.js";
export {
  DEFAULT_MAX_SUBSCRIPTION_BYTES,
  DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
} from "./resource-subscriptions.js";
