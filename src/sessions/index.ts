/**
 * Sessions (2025-era `Mcp-Session-Id`): the store contract, the bounded memory store, id minting
 * and the TTL janitor.
 *
 * @example
 * ```ts
 * import { MemorySessionStore, mintSessionId } from "./index.js";
 * const store = new MemorySessionStore({ maxSessions: 1000 });
 * ```
 */
export {
  DEFAULT_MAX_SESSION_BYTES,
  DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_SCOPE,
  MemorySessionStore,
  type MemorySessionStoreOptions,
} from "./memory-session-store.js";
export { isWellFormedSessionId, mintSessionId } from "./session-id.js";
export { SessionJanitor } from "./session-janitor.js";
export type { SessionCreateOutcome, SessionRecord, SessionStore } from "./session-store.js";
export { SESSION_RECORD_OVERHEAD, sessionRecordBytes } from "./session-store.js";
