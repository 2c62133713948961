/**
 * The contract between the protocol layer and a transport for one request's exchange. The
 * protocol layer decides *what* to send; the sink decides *how* (one JSON body, or a
 * request-scoped SSE stream opened lazily at the first related notification) and guards every
 * write, so that nothing is ever written after the exchange ended.
 */
import type { HandleLifetime } from "../../cancellation/types.js";

/** Told by the sink when the client went away before the exchange ended. */
export interface SinkListener {
  onDisconnect(): void;
}

/**
 * One request's way back to the client.
 *
 * @example
 * ```ts
 * // A transport implements it; the dispatcher only calls it:
 * if (sink.streamable) await sink.notify(notificationJson("notifications/progress", params));
 * sink.respond(successResponseJson(id, "{}"));
 * ```
 */
export interface ResponseSink {
  /** Whether notifications related to the request can reach the client (it accepts SSE). */
  readonly streamable: boolean;
  /** True once the exchange ended (answered, cancelled, or the client went away). */
  readonly ended: boolean;
  /**
   * Its `aborted` turns true when the exchange ends, whichever way (an answer included); given
   * to `registry.track` as the handle's `lifetime`, so a handle whose exchange is over counts as
   * dead for the janitor's sweep.
   */
  readonly lifetime: HandleLifetime;
  /** Sends a notification (JSON text). Resolves when written or dropped; never rejects. */
  notify(json: string): Promise<void>;
  /**
   * Sends the final response (JSON text) and ends the exchange; ignored once ended. `status`
   * (default 200) and `headers` (e.g. `www-authenticate` on a 403) apply to a plain JSON answer;
   * once a stream is open the answer is its last event and both are ignored.
   */
  respond(json: string, status?: number, headers?: Readonly<Record<string, string>>): void;
  /**
   * Ends a cancelled exchange promptly: a stream is ended without a response; a JSON exchange
   * still waiting answers `json` (the -32800 error). Ignored once ended.
   */
  cancel(json: string): void;
  /** Attaches the session id header to the answer (initialize with sessions on). */
  setSessionId(id: string): void;
  /**
   * Who to tell about a disconnect (one listener; the call in flight). A client that already
   * went away is reported to the listener at once, so a hang-up before the call attached its
   * listener is never lost.
   */
  setListener(listener: SinkListener | null): void;
  /**
   * The protocol layer is done with the request even though its handler may still be running
   * (a cancelled tool abandoned at the stream cancel timeout): the transport gives back what the
   * request held (its concurrency slots). Optional; the transport must make it idempotent,
   * because it also releases when the dispatch settles.
   */
  releaseSlots?(): void;
  /**
   * A handler call runs on this sink and calls {@link releaseSlots} itself when it ends, however
   * it ends (answered, cancelled, abandoned): the transport need not wait for the dispatch's
   * promise to give the slots back (one reaction and its closures fewer per running call).
   * Optional.
   */
  callReleasesSlots?(): void;
}
