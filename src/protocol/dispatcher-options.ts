/**
 * What a `Dispatcher` takes: the server's identity and primitives, the cancellation
 * registry, and the bounds and tables of the features it serves (server-features.ts).
 */
import type { CancellationRegistry } from "../cancellation/index.js";
import type { WorkerPool } from "../isolation/worker-pool.js";
import type { InputRequiredSettings, ServerRequestSettings } from "./asking/index.js";
import type { DispatchObserver, Extension, Prompt } from "./calls/index.js";
import type { ServerIdentity, SessionHooks } from "./lifecycle.js";
import type { Resource, ResourceTemplate } from "./resources/index.js";
import type { ChangeListeners, ResourceSubscriptions } from "./subscriptions/index.js";
import type { TaskOptions } from "./tasks/index.js";
import type { Tool } from "./tools/index.js";

/** What {@link Dispatcher} takes. */
export interface DispatcherOptions extends ServerIdentity {
  readonly tools?: readonly Tool[] | undefined;
  readonly resources?: readonly Resource[] | undefined;
  readonly resourceTemplates?: readonly ResourceTemplate[] | undefined;
  readonly prompts?: readonly Prompt[] | undefined;
  readonly registry: CancellationRegistry;
  readonly streamCancelTimeoutMs: number;
  /** Default deadline of a tool's run in ms (a tool's own `timeoutMs` wins); absent or null: none. */
  readonly toolTimeoutMs?: number | null | undefined;
  readonly cancelOnDisconnect: boolean;
  readonly observer?: DispatchObserver | null | undefined;
  readonly sessions?: SessionHooks | null | undefined;
  /** The server's worker pool for isolated tools, created by its owner on first use. */
  readonly workerPool?: (() => WorkerPool) | undefined;
  /** `ttlMs` of the cacheable 2026-07-28 results. Default 60 000. */
  readonly cacheTtlMs?: number | undefined;
  /** `instructions` of `initialize` and `server/discover`, when given. */
  readonly instructions?: string | undefined;
  /** Items per list page. Default 100. */
  readonly pageSize?: number | undefined;
  /** HMAC key of list cursors, shared by every node (absent: a random key per process). */
  readonly cursorSecret?: string | Uint8Array | undefined;
  /** Longest resource URI a request may name. Default 8 192 characters. */
  readonly maxUriLength?: number | undefined;
  /** Sealing and bounds of input-required results (default: a random key per process). */
  readonly inputRequired?: InputRequiredSettings | undefined;
  /** Asking the client on 2025-era requests (default: a memory table, 5 min timeout). */
  readonly serverRequests?: ServerRequestSettings | undefined;
  /** Longest value one template variable may match. Default 1 024 characters. */
  readonly maxTemplateValueLength?: number | undefined;
  /**
   * The `WWW-Authenticate` value of a 403 answer to a caller lacking an item's scopes (RFC 6750
   * §3.1). Default: `Bearer error="insufficient_scope", scope="…"`.
   */
  readonly insufficientScopeChallenge?: ((scopes: readonly string[]) => string) | undefined;
  /**
   * The resource subscription table, when subscriptions are served (2025-era sessions): then
   * `resources.subscribe` is advertised and `resources/subscribe`/`unsubscribe` are answered.
   */
  readonly subscriptions?: ResourceSubscriptions | null | undefined;
  /**
   * Tasks (task-service.ts): options, or `false` to serve none (a tool's `task` is then ignored
   * and the tasks capability not advertised). Default: served, with a memory store.
   */
  readonly tasks?: TaskOptions | false | undefined;
  /**
   * The 2026-07-28 `subscriptions/listen` table: when given, `subscriptions/listen` is served and
   * `server/discover` advertises `listChanged` and `resources.subscribe`.
   */
  readonly listeners?: ChangeListeners | null | undefined;
  /**
   * Extensions served (`defineExtension`): declared in `server/discover` and `initialize`, their
   * methods in the method table. Default none.
   */
  readonly extensions?: readonly Extension[] | undefined;
}
