/**
 * The server's requests to clients that wait for an answer (2025-11-25 `elicitation/create`,
 * `sampling/createMessage`, `roots/list`, sent on the calling request's SSE stream), and how a
 * client's answer finds its waiter.
 *
 * The client answers with a separate POST carrying a JSON-RPC response
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server),
 * and behind a load balancer that POST may reach another node. So:
 *
 * - A request id is `<node>.<secret>`: the node tag (random per table, 64 bits) says which node
 *   waits, the secret (128 bits from the CSPRNG) makes it unguessable.
 * - An answer is accepted only from the scope the asking call runs in (the same session,
 *   principal or client address bucket) and only for an id that is waiting. Anything else — an
 *   id nobody waits for, another scope's answer, a guessed id, a second answer — is dropped, and
 *   the POST is answered 202 all the same (nothing is learnt).
 * - An answer for another node goes through a {@link ServerReplyBus} (none: the answer is
 *   dropped; `RedisReplyBus` of `conduit-mcp/redis` carries it to that node).
 *
 * Bounded per scope first, then globally (docs/architecture.md, "Bounds, per scope before
 * global"): one tenant's unanswered requests never crowd out another's.
 */
import { randomBytes } from "node:crypto";
import { ByteLedger } from "../../byte-ledger.js";
import type { ClientReply, ServerReplyBus } from "../../replies/index.js";
import { isPlainObject } from "../wire/index.js";

export type { ClientReply, ServerReplyBus } from "../../replies/index.js";

import { ACQUIRED, type LimitOutcome, SCOPE_LIMIT, ScopeLimiter } from "./scope-limiter.js";

/** Someone waiting for one answer. */
export interface ReplyWaiter {
  /** Called at most once, with the answer from the waiter's own scope. */
  settle(reply: ClientReply): void;
  /**
   * Its entry was dropped to keep the table within its global byte budget (it is still listed
   * until it calls {@link PendingServerRequests.close}). Absent: the entry is closed silently.
   */
  evict?(): void;
}

/** What one waiting request costs its bucket (the tenant paying for it, never a session). */
export interface AskCharge {
  /** The creator's bucket: its principal, else its client's IP bucket. */
  readonly bucket: string;
  /** The bytes it holds: the request as sent, plus {@link ASK_OVERHEAD}. */
  readonly bytes: number;
}

/** Bytes every waiting request is charged besides its JSON text (its entry, timer and promise). */
export const ASK_OVERHEAD = 512;
/** Default most bytes of questions one bucket may have waiting on a node: 1 MiB. */
export const DEFAULT_MAX_ASK_BYTES_PER_SCOPE = 1_048_576;
/** Default most bytes of questions waiting on a node in all: 16 MiB. */
export const DEFAULT_MAX_ASK_BYTES = 16 * 1_048_576;

/** What {@link PendingServerRequests} takes. */
export interface PendingServerRequestsOptions {
  /** Most requests one scope may have waiting. */
  readonly maxPerScope: number;
  /** Most requests waiting in all on this node. */
  readonly max: number;
  /** Most bytes one bucket's waiting requests may hold. Default {@link DEFAULT_MAX_ASK_BYTES_PER_SCOPE}. */
  readonly maxBytesPerScope?: number;
  /**
   * Most bytes of waiting requests in all; beyond, the oldest of the bucket holding the most bytes
   * is withdrawn. Default {@link DEFAULT_MAX_ASK_BYTES}.
   */
  readonly maxBytes?: number;
  /** Carries answers that reached another node; none: such answers are dropped. */
  readonly bus?: ServerReplyBus | null | undefined;
}

interface Entry {
  readonly scope: string;
  readonly waiter: ReplyWaiter;
}

/** `<node>.<secret>`: 11 then 22 base64url characters. */
const ID = /^([A-Za-z0-9_-]{11})\.[A-Za-z0-9_-]{22}$/;
/** Longest JSON-RPC error message kept from a client (the rest is cut). */
const MAX_MESSAGE = 1_024;

/**
 * The waiting server requests of one node.
 *
 * @example
 * ```ts
 * const table = new PendingServerRequests({ maxPerScope: 16, max: 10_000 });
 * const id = table.open("session:abc", { settle: (reply) => console.log(reply) });
 * if (typeof id === "string") await table.route("session:abc", id, { ok: true, result: {} });
 * ```
 */
export class PendingServerRequests {
  /** This node's tag, the first part of every id it mints. */
  readonly node: string;
  private readonly entries = new Map<string, Entry>();
  private readonly limiter: ScopeLimiter;
  /** Bytes of the waiting requests per paying bucket, then in all (ids as entries). */
  private readonly ledger: ByteLedger<string>;
  /** The bus answers for other nodes go through (tasks/update answers use it too), or null. */
  readonly bus: ServerReplyBus | null;
  private detach: (() => void) | null;

  constructor(options: PendingServerRequestsOptions) {
    this.node = randomBytes(8).toString("base64url");
    this.limiter = new ScopeLimiter(options.maxPerScope, options.max);
    this.ledger = new ByteLedger({
      maxBytesPerBucket: options.maxBytesPerScope ?? DEFAULT_MAX_ASK_BYTES_PER_SCOPE,
      maxBytes: options.maxBytes ?? DEFAULT_MAX_ASK_BYTES,
    });
    this.bus = options.bus ?? null;
    this.detach =
      this.bus === null
        ? null
        : this.bus.attach(this.node, (scope, id, reply) => {
            this.deliver(scope, id, reply);
          });
  }

  /** Requests waiting now. */
  get size(): number {
    return this.entries.size;
  }

  /** Scopes with at least one request waiting. */
  get scopes(): number {
    return this.limiter.scopes;
  }

  /** Bytes the waiting requests hold (their charges). */
  get bytes(): number {
    return this.ledger.bytes;
  }

  /**
   * Registers a waiter of `scope` under a new unguessable id, or says which bound refused it
   * (`SCOPE_LIMIT` too when the paying bucket's bytes are spent). With a `charge`, its bytes count
   * against its bucket, then globally: over the global byte budget the oldest requests of the
   * bucket holding the most bytes are withdrawn (their waiters' `evict`), never refused. The entry
   * stays until {@link close} or the answer.
   */
  open(
    scope: string,
    waiter: ReplyWaiter,
    charge?: AskCharge,
  ): string | Exclude<LimitOutcome, typeof ACQUIRED> {
    if (charge !== undefined && !this.ledger.fits(charge.bucket, charge.bytes)) return SCOPE_LIMIT;
    const outcome = this.limiter.tryAcquire(scope);
    if (outcome !== ACQUIRED) return outcome;
    const id = `${this.node}.${randomBytes(16).toString("base64url")}`;
    this.entries.set(id, { scope, waiter });
    if (charge !== undefined) {
      const evicted = this.ledger.add(id, charge.bucket, charge.bytes);
      if (typeof evicted !== "string") for (const gone of evicted) this.evict(gone);
    }
    return id;
  }

  /** Forgets a request (answered, timed out, withdrawn); harmless when already gone. */
  close(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.ledger.remove(id);
    this.limiter.release(entry.scope);
  }

  /** Withdraws a request dropped by the global byte budget. */
  private evict(id: string): void {
    const waiter = this.entries.get(id)?.waiter;
    if (waiter?.evict === undefined) {
      this.close(id);
      return;
    }
    try {
      waiter.evict();
    } finally {
      this.close(id);
    }
  }

  /**
   * An answer that arrived on this node from `scope`: delivered here when this node waits for
   * it, sent on to the node named by the id otherwise. Resolves once delivered, forwarded or
   * dropped; never rejects.
   */
  async route(scope: string, id: unknown, reply: ClientReply): Promise<void> {
    if (typeof id !== "string") return;
    const match = ID.exec(id);
    if (match === null) return;
    const node = match[1] as string;
    if (node === this.node) {
      this.deliver(scope, id, reply);
      return;
    }
    await this.bus?.forward(node, scope, id, reply);
  }

  /** Stops listening on the bus; waiters are the asking calls' to end. Idempotent. */
  shutdown(): void {
    this.detach?.();
    this.detach = null;
  }

  /** Hands the answer to its waiter when `id` waits here for an answer of `scope`. */
  private deliver(scope: string, id: string, reply: ClientReply): void {
    const entry = this.entries.get(id);
    if (entry === undefined || entry.scope !== scope) return;
    this.close(id);
    entry.waiter.settle(reply);
  }
}

/**
 * The answer a JSON-RPC response carries: its `result`, or its `error`'s code and message (the
 * message cut to 1 024 characters); null when it is neither (a malformed response is ignored).
 *
 * @example
 * ```ts
 * replyOf({ jsonrpc: "2.0", id: "x", result: { roots: [] } }); // { ok: true, result: { roots: [] } }
 * ```
 */
export function replyOf(message: Readonly<Record<string, unknown>>): ClientReply | null {
  if ("result" in message) {
    return "error" in message ? null : { ok: true, result: message.result };
  }
  const error = message.error;
  if (!isPlainObject(error) || typeof error.code !== "number" || !Number.isInteger(error.code)) {
    return null;
  }
  const text = typeof error.message === "string" ? error.message.slice(0, MAX_MESSAGE) : "";
  return { ok: false, code: error.code, message: text };
}
