/**
 * Sealed `requestState` for 2026-07-28 input-required results
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr, "Server
 * Requirements"): the state travels through the client, so it is "attacker-controlled input" that
 * the server MUST integrity-protect and SHOULD bind to the principal, a short expiry and the
 * originating request. Here it is encrypted and authenticated with AES-256-GCM (NIST SP 800-38D,
 * through node:crypto), so a client can neither read nor change it:
 *
 * - the **binding** (method, tool/prompt name or resource URI, a digest of the arguments, and the
 *   caller's scope) is the GCM additional authenticated data: a state presented on another tool,
 *   with other arguments or by another tenant fails authentication like a tampered one;
 * - the **expiry** is inside the ciphertext and fixed when the flow starts: later rounds carry it
 *   over unchanged, so no client can extend a flow by answering again;
 * - **keys**: the first seals, every one opens (rotation: put the new key first, keep the old ones
 *   until their states have expired). A 4-byte key id picks the key, so opening costs one
 *   decryption. Every node that may receive the retry must hold the same keys.
 *
 * Wire form: base64url of `version (1) ‖ key id (4) ‖ IV (12) ‖ tag (16) ‖ ciphertext`.
 * Every failure is the same `null`: the caller learns nothing about which check failed.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/** The format byte; a new layout gets a new one. */
const VERSION = 1;
const KID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KID_BYTES + IV_BYTES + TAG_BYTES;
/** Shortest key material accepted: 256 bits. */
export const MIN_STATE_KEY_BYTES = 32;

/** What a state is bound to: a state opens only for the same four values. */
export interface StateBinding {
  readonly method: string;
  /** The tool or prompt name, or the resource URI. */
  readonly name: string;
  /** The caller's tenant scope (`principal:…`, `ip:…`, `session:…`). */
  readonly scope: string;
  /** {@link argumentsDigest} of the request's arguments. */
  readonly argumentsDigest: string;
}

/**
 * The binding of one call, its digest computed on first use: only a call that opens or seals a
 * requestState needs it. A class, so that each call's binding is a small object of one shape (an
 * object literal with a getter is built in the slow dictionary form).
 *
 * @example
 * ```ts
 * const binding = new CallBinding("tools/call", "confirm", "principal:alice", { amount: 5 });
 * binding.argumentsDigest; // computed now, once
 * ```
 */
export class CallBinding implements StateBinding {
  private digest: string | undefined = undefined;

  constructor(
    readonly method: string,
    readonly name: string,
    readonly scope: string,
    private readonly args: unknown,
  ) {}

  get argumentsDigest(): string {
    this.digest ??= argumentsDigest(this.args);
    return this.digest;
  }
}

/** What {@link RequestStateSealer} takes. */
export interface RequestStateSealerOptions {
  /**
   * Key material, newest first: the first seals, all open. Each at least 32 bytes (a string is
   * taken as UTF-8). Absent: one random key for this process only.
   */
  readonly keys?: readonly (string | Uint8Array)[] | undefined;
  /** Longest sealed state accepted or produced, in characters. Default 65 536. */
  readonly maxStateBytes?: number | undefined;
  /** The clock (ms since the epoch); tests move it. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

interface DerivedKey {
  readonly id: Buffer;
  readonly key: Buffer;
}

/**
 * Seals and opens request states.
 *
 * @example
 * ```ts
 * const sealer = new RequestStateSealer({ keys: [process.env.STATE_KEY as string] });
 * const binding = { method: "tools/call", name: "confirm", scope: "principal:alice", argumentsDigest: argumentsDigest({}) };
 * const token = sealer.seal({ exp: Date.now() + 60_000, answers: {} }, binding);
 * sealer.open(token, binding); // { exp: …, answers: {} }
 * sealer.open(token, { ...binding, scope: "principal:mallory" }); // null
 * ```
 */
export class RequestStateSealer {
  readonly maxStateBytes: number;
  private readonly keys: readonly DerivedKey[];
  private readonly now: () => number;

  constructor(options: RequestStateSealerOptions = {}) {
    const material = options.keys ?? [randomBytes(MIN_STATE_KEY_BYTES)];
    if (material.length === 0) throw new TypeError("requestState keys: at least one key");
    this.keys = material.map(deriveKey);
    this.maxStateBytes = options.maxStateBytes ?? 65_536;
    this.now = options.now ?? Date.now;
  }

  /** The current time on this sealer's clock. */
  currentTime(): number {
    return this.now();
  }

  /**
   * Seals a JSON payload (which must carry `exp`, ms since the epoch) under the first key; null
   * when the result would be longer than `maxStateBytes`.
   */
  seal(
    payload: { readonly exp: number } & Record<string, unknown>,
    binding: StateBinding,
  ): string | null {
    const { id, key } = this.keys[0] as DerivedKey;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aadOf(binding));
    const body = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
    const token = Buffer.concat([Buffer.of(VERSION), id, iv, cipher.getAuthTag(), body]).toString(
      "base64url",
    );
    return token.length > this.maxStateBytes ? null : token;
  }

  /**
   * The payload of a state sealed for `binding` that has not expired, or null (malformed, too
   * long, unknown key, tampered, bound to something else, expired: all alike).
   */
  open(token: unknown, binding: StateBinding): Record<string, unknown> | null {
    if (typeof token !== "string" || token.length > this.maxStateBytes) return null;
    if (!BASE64URL.test(token)) return null;
    const bytes = Buffer.from(token, "base64url");
    // Only the canonical text of the bytes: base64's spare low bits of the last character would
    // otherwise let several texts stand for one state.
    if (bytes.toString("base64url") !== token) return null;
    if (bytes.length <= HEADER_BYTES || bytes[0] !== VERSION) return null;
    const id = bytes.subarray(1, 1 + KID_BYTES);
    const entry = this.keys.find((candidate) => candidate.id.equals(id));
    if (entry === undefined) return null;
    const iv = bytes.subarray(1 + KID_BYTES, 1 + KID_BYTES + IV_BYTES);
    const tag = bytes.subarray(1 + KID_BYTES + IV_BYTES, HEADER_BYTES);
    let text: string;
    try {
      const decipher = createDecipheriv("aes-256-gcm", entry.key, iv, {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(aadOf(binding));
      decipher.setAuthTag(tag);
      text = Buffer.concat([
        decipher.update(bytes.subarray(HEADER_BYTES)),
        decipher.final(),
      ]).toString("utf8");
    } catch {
      return null;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      return null;
    }
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return null;
    const exp = (payload as { exp?: unknown }).exp;
    if (typeof exp !== "number" || !(this.now() < exp)) return null;
    return payload as Record<string, unknown>;
  }
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function deriveKey(material: string | Uint8Array): DerivedKey {
  const bytes =
    typeof material === "string"
      ? Buffer.from(material, "utf8")
      : material instanceof Uint8Array
        ? Buffer.from(material)
        : null;
  if (bytes === null || bytes.length < MIN_STATE_KEY_BYTES) {
    throw new TypeError(`requestState keys: each at least ${MIN_STATE_KEY_BYTES} bytes`);
  }
  // HKDF (RFC 5869) turns any key material of at least 256 bits into a dedicated AES key, so the
  // same secret may also serve elsewhere (e.g. as the list-cursor secret) without key reuse.
  const key = Buffer.from(
    hkdfSync("sha256", bytes, Buffer.alloc(0), "conduit-mcp requestState v1", 32),
  );
  const id = createHash("sha256")
    .update("conduit-mcp key id")
    .update(key)
    .digest()
    .subarray(0, KID_BYTES);
  return { id, key };
}

/** Length-prefixed fields: no two bindings share an AAD. */
function aadOf(binding: StateBinding): Buffer {
  const fields = [binding.method, binding.name, binding.scope, binding.argumentsDigest];
  return Buffer.from(fields.map((field) => `${field.length}:${field}`).join(""), "utf8");
}

/**
 * A digest of a request's arguments that does not depend on key order (the retry may serialise
 * them differently): SHA-256 of their canonical JSON, base64url.
 *
 * @example
 * ```ts
 * argumentsDigest({ a: 1, b: 2 }) === argumentsDigest({ b: 2, a: 1 }); // true
 * ```
 */
export function argumentsDigest(args: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(args ?? {}))
    .digest("base64url");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys
      .map(
        (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
      )
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
