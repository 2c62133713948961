import { deriveId } from "./derive-id.js";

/** An authenticated caller. `id` is always a string or `null` (anonymous). */
export interface Principal {
  /** The identity, as {@link deriveId} derived it; `null` when none could be derived. */
  readonly id: string | null;
  /** Granted OAuth scopes (or the like); empty when none. */
  readonly scopes: readonly string[];
  /** Token claims, when the authenticator had any. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** The application's own user value, passed through untouched. */
  readonly user?: unknown;
}

/** The fields accepted by {@link createPrincipal}. */
export interface PrincipalFields {
  /** Anything {@link deriveId} understands: a string, an integer, `{ id }`/`{ sub }`, a class instance. */
  readonly id?: unknown;
  readonly scopes?: readonly string[];
  readonly claims?: Readonly<Record<string, unknown>>;
  readonly user?: unknown;
}

/**
 * A frozen {@link Principal}: the id goes through {@link deriveId}, scopes keep only strings,
 * `claims` and `user` are kept when given.
 *
 * @example
 * ```ts
 * createPrincipal({ id: 42 }).id; // "42"
 * createPrincipal({ id: true }).id; // null
 * ```
 */
export function createPrincipal(fields: PrincipalFields = {}): Principal {
  const scopes = Object.freeze(
    Array.isArray(fields.scopes)
      ? (fields.scopes as readonly unknown[]).filter((s): s is string => typeof s === "string")
      : [],
  );
  const principal: {
    id: string | null;
    scopes: readonly string[];
    claims?: Readonly<Record<string, unknown>>;
    user?: unknown;
  } = { id: deriveId(fields.id), scopes };
  if (fields.claims !== undefined) principal.claims = fields.claims;
  if ("user" in fields) principal.user = fields.user;
  return Object.freeze(principal);
}

/**
 * The id for scoping, only if a non-empty string: a hand-built `{ id: 123 }` is anonymous, and
 * an authenticator returning `""` cannot put every caller into one shared `principal:` scope.
 */
export function principalId(principal: unknown): string | null {
  if (typeof principal !== "object" || principal === null) return null;
  try {
    const id: unknown = (principal as { id?: unknown }).id;
    return typeof id === "string" && id !== "" ? id : null;
  } catch {
    return null;
  }
}
