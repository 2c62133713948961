/**
 * Asking the client on a 2025-11-25 request: `ctx.elicit`, `ctx.elicitUrl`, `ctx.sample` and
 * `ctx.roots` send `elicitation/create`, `sampling/createMessage` or `roots/list` as JSON-RPC
 * requests on the calling request's own SSE stream, and resolve with the client's answer, which
 * comes back as a separate POST (or a line on stdin) through {@link PendingServerRequests}
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server,
 * https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation,
 * .../client/sampling, .../client/roots).
 *
 * - **Capabilities.** A client is asked only for what it declared in `initialize` (its session's
 *   record, or the stdio connection's). Where nothing was declared to this server — a stateless
 *   POST without a session — the `unknownCapabilities` rule decides: `"refuse"` (default; the ask
 *   rejects with a `MissingClientCapabilityError`) or `"assume"` (ask anyway).
 * - **Bounds.** Each ask holds an entry of the node's table, bounded per scope then globally; an
 *   ask beyond either bound rejects with {@link ClientRequestFailedError} (`"too-many"`), and one
 *   that waits longer than `timeoutMs` with `"timeout"`.
 * - **Ending.** When the call ends — cancelled, its client gone, the handler settled with asks
 *   still open — every open ask is withdrawn: its entry removed, its wait rejected, and, while the
 *   stream is still open, the client told with `notifications/cancelled` for the server's request
 *   id (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation).
 */
import { z } from "zod";
import {
  CannotAskClientError,
  ClientRequestFailedError,
  InvalidOptionError,
} from "../../errors.js";
import {
  integerBetween,
  MAX_TIMER_MS,
  OPTION,
  optionKind,
  readOption,
} from "../../option-schema.js";
import type { ResponseSink } from "../wire/index.js";
import { isPlainObject, notificationJson } from "../wire/index.js";
import type { PreparedAsk } from "./client-asker.js";
import { ClientAskerBase } from "./client-asker-base.js";
import {
  ASK_OVERHEAD,
  type ClientReply,
  DEFAULT_MAX_ASK_BYTES,
  DEFAULT_MAX_ASK_BYTES_PER_SCOPE,
  PendingServerRequests,
  type ReplyWaiter,
  type ServerReplyBus,
} from "./pending-server-requests.js";
import { checkAnswer } from "./prepared-ask.js";
import { SCOPE_LIMIT } from "./scope-limiter.js";

/** How 2025-era asks behave, shared by every call of a server. */
export interface ServerRequestSettings {
  /** The node's table of waiting requests. */
  readonly table: PendingServerRequests;
  /** How long an ask waits for the client's answer, in ms. */
  readonly timeoutMs: number;
  /** Where the client's capabilities are unknown (no session): refuse every ask, or ask anyway. */
  readonly unknownCapabilities: "refuse" | "assume";
}

/** The `serverRequests` option of a server (every member optional). */
export interface ServerRequestOptions {
  /** How long an ask waits for the client's answer, in ms (1 to 2^31 − 1). Default 300 000 (5 min). */
  readonly timeoutMs?: number;
  /** Most asks one scope may have waiting on a node. Default 16. */
  readonly maxPerScope?: number;
  /** Most asks waiting on a node in all. Default 10 000. */
  readonly max?: number;
  /**
   * Most bytes of questions (the requests as sent, plus 512 each) one bucket (the principal, else
   * the client's IP bucket: all its sessions together) may have waiting on a node; an ask beyond
   * rejects with `ClientRequestFailedError` (`"too-many"`). Default 1 MiB.
   */
  readonly maxBytesPerScope?: number;
  /**
   * Most bytes of questions waiting on a node in all; beyond, the oldest asks of the bucket
   * holding the most bytes are withdrawn (they reject with `"too-many"`). Default 16 MiB.
   */
  readonly maxBytes?: number;
  /**
   * Where the client's capabilities are unknown (a 2025-era request without a session):
   * `"refuse"` (default: the ask rejects with `MissingClientCapabilityError`) or `"assume"`
   * (ask anyway; a client that cannot answer makes the ask fail or time out).
   */
  readonly unknownCapabilities?: "refuse" | "assume";
  /**
   * Carries a client's answer that reached another node to the node that asked (`RedisReplyBus`
   * of `conduit-mcp/redis`). Default none: an answer is accepted only by the node that asked.
   */
  readonly bus?: ServerReplyBus;
}

const RULE = optionKind(z.enum(["refuse", "assume"]), '"refuse" or "assume"');

/**
 * Settings from options, defaults filled in, each value checked.
 *
 * @throws InvalidOptionError naming the member (`serverRequests.timeoutMs`…).
 * @example
 * ```ts
 * const settings = serverRequestSettings({ timeoutMs: 60_000 });
 * ```
 */
export function serverRequestSettings(options: ServerRequestOptions = {}): ServerRequestSettings {
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptionError("serverRequests", "an object", options);
  }
  const bus = options.bus;
  if (
    bus !== undefined &&
    (typeof bus !== "object" ||
      bus === null ||
      typeof bus.attach !== "function" ||
      typeof bus.forward !== "function")
  ) {
    throw new InvalidOptionError("serverRequests.bus", "a ServerReplyBus", bus);
  }
  const timeoutMs = readOption(
    integerBetween(1, MAX_TIMER_MS),
    "serverRequests.timeoutMs",
    options.timeoutMs,
    300_000,
  );
  const maxPerScope = readOption(
    OPTION.positiveInteger,
    "serverRequests.maxPerScope",
    options.maxPerScope,
    16,
  );
  const max = readOption(OPTION.positiveInteger, "serverRequests.max", options.max, 10_000);
  const maxBytesPerScope = readOption(
    OPTION.positiveInteger,
    "serverRequests.maxBytesPerScope",
    options.maxBytesPerScope,
    DEFAULT_MAX_ASK_BYTES_PER_SCOPE,
  );
  const maxBytes = readOption(
    OPTION.positiveInteger,
    "serverRequests.maxBytes",
    options.maxBytes,
    DEFAULT_MAX_ASK_BYTES,
  );
  const unknownCapabilities = readOption(
    RULE,
    "serverRequests.unknownCapabilities",
    options.unknownCapabilities,
    "refuse",
  );
  return {
    table: new PendingServerRequests({ maxPerScope, max, maxBytesPerScope, maxBytes, bus }),
    timeoutMs,
    unknownCapabilities,
  };
}

/** What a client that is assumed to support everything declares (the `"assume"` rule). */
const EVERYTHING: Readonly<Record<string, unknown>> = Object.freeze({
  elicitation: { form: {}, url: {} },
  sampling: { tools: {}, context: {} },
  roots: {},
});
const NOTHING: Readonly<Record<string, unknown>> = Object.freeze({});
const NO_STREAM =
  "The client cannot be asked on this request: it does not accept text/event-stream (or has no stream left)";
const CALL_OVER = "The request already ended: the client can no longer be asked";

/**
 * The asks of one 2025-era call.
 *
 * @example
 * ```ts
 * const asker = new ServerRequestAsker(settings, sink, { scope: "session:abc", bucket: "ip:203.0.113.7" }, { elicitation: {} });
 * const answer = await asker.elicit("Deploy?", { type: "object", properties: { ok: { type: "boolean" } } });
 * ```
 */
export class ServerRequestAsker extends ClientAskerBase {
  /** Asks in flight; made on the first ask (most calls never ask). */
  private open: Set<OpenAsk> | null = null;
  private over = false;

  constructor(
    private readonly settings: ServerRequestSettings,
    private readonly sink: ResponseSink,
    /** The scope answers must come from, and the bucket that pays for the questions. */
    private readonly who: AskerScope,
    /** The client's capabilities from `initialize`, or null when this server was not told. */
    private readonly capabilities: Readonly<Record<string, unknown>> | null,
    /** Told of each ask's end and of the asker's close (a task's outbox keeps its record by them). */
    private readonly hooks: AskerHooks | null = null,
  ) {
    super();
  }

  /** Asks in flight now. */
  get pending(): number {
    return this.open?.size ?? 0;
  }

  /**
   * The call is over (`reason` says why): every open ask is withdrawn and rejects with `error()`;
   * the client is told of each while the stream is still open. Later asks are refused.
   */
  close(reason: string, error: () => unknown): void {
    this.over = true;
    const open = this.open;
    if (open !== null && open.size > 0) {
      const cause = error();
      for (const ask of [...open]) ask.withdraw(reason, cause);
    }
    this.hooks?.closed();
  }

  /** @internal An ask ended (answered, timed out or withdrawn): it leaves the call's set. */
  ended(ask: OpenAsk): void {
    this.open?.delete(ask);
    this.hooks?.ended(ask.requestId);
  }

  /** @internal Tells the client that its pending request `id` is withdrawn. */
  withdrawn(id: string, reason: string): void {
    if (this.sink.ended) return;
    void this.sink.notify(notificationJson("notifications/cancelled", { requestId: id, reason }));
  }

  /** Unknown capabilities under "refuse": every ask fails as for an undeclared capability. */
  protected declared(): Readonly<Record<string, unknown>> {
    if (this.capabilities !== null) return this.capabilities;
    return this.settings.unknownCapabilities === "assume" ? EVERYTHING : NOTHING;
  }

  /** A 2025-era ask resolves in place: no key names it (`options` is not used). */
  protected ask(prepared: PreparedAsk): Promise<unknown> {
    if (this.over || this.sink.ended) return Promise.reject(new CannotAskClientError(CALL_OVER));
    if (!this.sink.streamable) return Promise.reject(new CannotAskClientError(NO_STREAM));
    const { table, timeoutMs } = this.settings;
    const ask = new OpenAsk(this, table, prepared);
    let body: string;
    try {
      body = JSON.stringify(prepared.request);
    } catch (error) {
      return Promise.reject(error); // params that are not JSON (a cycle, a BigInt): the handler's bug
    }
    const bytes = ASK_OVERHEAD + Buffer.byteLength(body, "utf8");
    const id = table.open(this.who.scope, ask, { bucket: this.who.bucket, bytes });
    if (typeof id !== "string") {
      const where = id === SCOPE_LIMIT ? "for this client" : "on this server";
      return Promise.reject(
        new ClientRequestFailedError(
          "too-many",
          `Too many questions waiting ${where}; retry later`,
        ),
      );
    }
    // The request object always has a method, so its text is `{"method":…}`: the envelope goes first.
    const json = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${body.slice(1)}`;
    this.open ??= new Set();
    this.open.add(ask);
    const promise = ask.start(id, timeoutMs);
    // A handler that drops the promise must not crash the process when the ask is withdrawn.
    promise.catch(noop);
    void this.sink.notify(json);
    return promise;
  }
}

/** Who asks: the scope the answers must come from, and the bucket that pays for the questions. */
export interface AskerScope {
  /** The calling request's scope (`session:…` > `principal:…` > `ip:…`). */
  readonly scope: string;
  /** Its creator's bucket (principal, else IP bucket; never a session): docs/tenancy.md. */
  readonly bucket: string;
}

/** What a {@link ServerRequestAsker} tells whoever keeps its asks elsewhere (task-outbox.ts). */
export interface AskerHooks {
  /** The ask with request id `id` ended: answered, timed out or withdrawn. */
  ended(id: string): void;
  /** The asker was closed (its call is over); called after the open asks were withdrawn. */
  closed(): void;
}

/** One ask waiting for its answer: the table's waiter, with its timer. */
class OpenAsk implements ReplyWaiter {
  private id = "";
  private timer: NodeJS.Timeout | undefined;
  private resolve: (value: unknown) => void = noop;
  private reject: (error: unknown) => void = noop;
  private done = false;

  constructor(
    private readonly asker: ServerRequestAsker,
    private readonly table: PendingServerRequests,
    private readonly prepared: PreparedAsk,
  ) {}

  /** The request id the client was sent. */
  get requestId(): string {
    return this.id;
  }

  start(id: string, timeoutMs: number): Promise<unknown> {
    this.id = id;
    const promise = new Promise<unknown>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const timer = setTimeout(expire, timeoutMs, this);
    timer.unref();
    this.timer = timer;
    return promise;
  }

  /** The table found the answer (its entry is already gone). */
  settle(reply: ClientReply): void {
    if (!this.finish()) return;
    const method = this.prepared.request.method;
    if (!reply.ok) {
      this.reject(
        new ClientRequestFailedError(
          "error-response",
          `The client answered ${method} with error ${reply.code}`,
          reply.code,
        ),
      );
      return;
    }
    checkAnswer(this.prepared, reply.result, (checked) => {
      if (typeof checked === "string") {
        this.reject(
          new ClientRequestFailedError(
            "invalid-response",
            `The client's answer to ${method} is invalid: ${checked}`,
          ),
        );
        return;
      }
      this.resolve(checked);
    });
  }

  /** Dropped by the table's global byte budget: withdrawn, and the client told. */
  evict(): void {
    const method = this.prepared.request.method;
    this.withdraw(
      "evicted",
      new ClientRequestFailedError(
        "too-many",
        `Too many questions waiting on this server; ${method} was withdrawn, retry later`,
      ),
    );
  }

  /** No answer within the timeout: withdrawn, and the client told. */
  expire(): void {
    const method = this.prepared.request.method;
    this.withdraw(
      "timeout",
      new ClientRequestFailedError("timeout", `The client did not answer ${method} in time`),
    );
  }

  /** Withdraws the ask: entry removed, the client told (stream still open), the wait rejected. */
  withdraw(reason: string, error: unknown): void {
    if (!this.finish()) return;
    this.table.close(this.id);
    this.asker.withdrawn(this.id, reason);
    this.reject(error);
  }

  /** Marks the ask done once; false when it already was. */
  private finish(): boolean {
    if (this.done) return false;
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.asker.ended(this);
    return true;
  }
}

function expire(ask: OpenAsk): void {
  ask.expire();
}

function noop(): void {}

/**
 * The client capabilities a server may ask with, from an `initialize`'s `capabilities`, as a
 * short flag list (what a session record stores): `elicitation.form`, `elicitation.url`,
 * `sampling`, `sampling.tools`, `sampling.context`, `roots`, then `ext:<id>` for each extension
 * of `extensions` (the ids the server serves) the client declared in `capabilities.extensions`
 * (SEP-2133, "Client Capabilities"), space-separated; `""` when none. Only the declaration is
 * kept, not its settings, so a record stays bounded by what the server serves. An empty
 * `elicitation` object declares form mode (2025-11-25 elicitation, "Capabilities").
 *
 * @example
 * ```ts
 * askableCapabilities({ elicitation: {}, roots: { listChanged: true } }); // "elicitation.form roots"
 * ```
 */
export function askableCapabilities(
  declared: unknown,
  extensions: ReadonlySet<string> = NO_EXTENSIONS,
): string {
  if (!isPlainObject(declared)) return "";
  const flags: string[] = [];
  const { elicitation, sampling, roots } = declared;
  if (isPlainObject(elicitation)) {
    const url = isPlainObject(elicitation.url);
    if (isPlainObject(elicitation.form) || !url) flags.push("elicitation.form");
    if (url) flags.push("elicitation.url");
  }
  if (isPlainObject(sampling)) {
    flags.push("sampling");
    if (isPlainObject(sampling.tools)) flags.push("sampling.tools");
    if (isPlainObject(sampling.context)) flags.push("sampling.context");
  }
  if (isPlainObject(roots)) flags.push("roots");
  const declaredExtensions = declared.extensions;
  if (isPlainObject(declaredExtensions)) {
    for (const id of extensions) {
      if (Object.hasOwn(declaredExtensions, id) && isPlainObject(declaredExtensions[id])) {
        flags.push(`${EXTENSION_FLAG}${id}`);
      }
    }
  }
  return flags.join(" ");
}

const NO_EXTENSIONS: ReadonlySet<string> = new Set();
/** The flag of a declared extension: `ext:<id>` (an id has no space: calls/extension.ts). */
const EXTENSION_FLAG = "ext:";
/** Longest extension id a stored flag may carry (calls/extension.ts accepts at most 256). */
const MAX_EXTENSION_ID = 256;

const parsedFlags = new Map<string, Readonly<Record<string, unknown>>>();
const KNOWN_FLAGS: ReadonlySet<string> = new Set([
  "elicitation.form",
  "elicitation.url",
  "sampling",
  "sampling.tools",
  "sampling.context",
  "roots",
]);

/**
 * A flag list of {@link askableCapabilities} as a ClientCapabilities object (unknown flags are
 * ignored: a stored record is not trusted blindly; a declared extension reads as `{}`). The first
 * 64 combinations seen are cached.
 *
 * @example
 * ```ts
 * capabilitiesOf("elicitation.form roots"); // { elicitation: { form: {} }, roots: {} }
 * ```
 */
export function capabilitiesOf(flags: string): Readonly<Record<string, unknown>> {
  const cached = parsedFlags.get(flags);
  if (cached !== undefined) return cached;
  const capabilities: Record<string, Record<string, unknown>> = {};
  for (const flag of flags.split(" ")) {
    if (flag.startsWith(EXTENSION_FLAG)) {
      const id = flag.slice(EXTENSION_FLAG.length);
      if (id.length === 0 || id.length > MAX_EXTENSION_ID) continue;
      capabilities.extensions ??= {};
      (capabilities.extensions as Record<string, unknown>)[id] = {};
      continue;
    }
    if (!KNOWN_FLAGS.has(flag)) continue;
    const [name, member] = flag.split(".") as [string, string | undefined];
    capabilities[name] ??= {};
    if (member !== undefined) (capabilities[name] as Record<string, unknown>)[member] = {};
  }
  const frozen = Object.freeze(capabilities);
  if (parsedFlags.size < 64) parsedFlags.set(flags, frozen);
  return frozen;
}
