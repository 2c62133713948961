/**
 * The registry's handle of one tracked request (registry.ts): its abort, its listener slot, its
 * signal made on first use, and its id among the handles of every node sharing a store.
 */
import { randomBytes } from "node:crypto";

import type { RequestCancelledError } from "../errors.js";
import type { AbortListener, HandleLifetime, RequestHandle } from "./types.js";

// Handle ids: a per-process random prefix (unique across nodes sharing a store) plus a counter.
// Drawn by the first handle, not at load: Cloudflare Workers refuse random values at a module's
// top level (https://developers.cloudflare.com/workers/runtime-apis/handlers/).
let handlePrefix: string | null = null;
let handleCounter = 0;

// A handle's flags (a running call holds its handle: a field each would be 8 bytes per call,
// docs/profile.md "Held calls at 10 000").
const RELEASED = 1;
const NOTIFIABLE = 2;

/**
 * The registry's handle: owns the AbortController whose signal the tool sees. The controller is
 * created on first use of `signal`: a request whose tool never looks at it (most short calls)
 * costs no AbortController, and the transport hears of an abort through its listener slot.
 */
export class LocalRequestHandle implements RequestHandle {
  /** The handle's number in this process, until {@link handleId} makes it text (then the text). */
  private id: number | string;
  readonly scope: string;
  readonly requestId: string | null;
  /** {@link RELEASED} and {@link NOTIFIABLE}: one small integer, not a field each. */
  private flags: number;
  private controller: AbortController | null = null;
  /** The first cause; later ones are ignored (an AbortSignal aborts once). */
  private reason: RequestCancelledError | null = null;
  private listener: AbortListener | null = null;
  private readonly lifetime: HandleLifetime | undefined;

  /** `lifetime` and `notifiable`: the request's TrackOptions (registry.ts). */
  constructor(
    scope: string,
    requestId: string | null,
    lifetime: HandleLifetime | undefined,
    notifiable: boolean,
  ) {
    handlePrefix ??= `${randomBytes(6).toString("base64url")}.`;
    this.id = handleCounter++;
    this.scope = scope;
    this.requestId = requestId;
    this.lifetime = lifetime;
    this.flags = notifiable ? NOTIFIABLE : 0;
  }

  /** Set by untrack or the sweep; never reset. */
  get released(): boolean {
    return (this.flags & RELEASED) !== 0;
  }

  set released(released: boolean) {
    if (released) this.flags |= RELEASED;
  }

  /** Whether a `notifications/cancelled` may abort it (TrackOptions.notifiable, registry.ts). */
  get notifiable(): boolean {
    return (this.flags & NOTIFIABLE) !== 0;
  }

  /**
   * Made on first use: a call tracked by a registry whose own memory store keeps no in-flight
   * entries of its calls (memory-store.ts) never needs it.
   */
  get handleId(): string {
    if (typeof this.id === "number") this.id = (handlePrefix as string) + this.id.toString(36);
    return this.id;
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.reason !== null) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.reason !== null;
  }

  get alive(): boolean {
    return !this.released && this.lifetime?.aborted !== true;
  }

  setAbortListener(listener: AbortListener | null): void {
    this.listener = listener;
  }

  abort(reason: RequestCancelledError): void {
    if (this.reason !== null) return;
    this.reason = reason;
    // The transport first (it ends the exchange), then the tool's own signal listeners.
    const listener = this.listener;
    this.listener = null;
    listener?.handleEvent();
    this.controller?.abort(reason);
  }
}
