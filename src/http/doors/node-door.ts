/**
 * The node:http door of the request core: adapts `IncomingMessage` and `ServerResponse` to the
 * transport-neutral {@link RequestInput} and {@link ResponseTarget} (transport.ts) and hands
 * each request to the core. One small object per side per request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

import type { RequestCore } from "../endpoint.js";
import { bufferedBody, readBody } from "../read-body.js";
import {
  type BodyOutcome,
  type BodySource,
  type CloseListener,
  type CloseSignal,
  notifyClosed,
  type ParsedBody,
  type RequestHeaders,
  type RequestInput,
  type ResponseHeaders,
  type ResponseTarget,
} from "../transport.js";
import { failResponse, JSON_LENGTH_AT, jsonHeaderList } from "../write-response.js";
import { dropHeld, type HeldAnswer, holdAnswer, isHeld } from "./answer-batch.js";
import {
  type ConnectionBounds,
  requestEnded,
  type TrackedConnection,
} from "./connection-bounds.js";

/**
 * The node:http listener of a server, plus its `checkContinue` listener: registered on the
 * server's `'checkContinue'` event, it keeps node from answering `100 Continue` before the
 * request passed its checks (https://nodejs.org/api/http.html#event-checkcontinue).
 */
export interface NodeRequestListener {
  (req: IncomingMessage, res: ServerResponse): void;
  /** For `server.on("checkContinue", …)`: `100 Continue` is sent only when the body is read. */
  readonly checkContinue: (req: IncomingMessage, res: ServerResponse) => void;
}

const TARGET = Symbol("conduit-mcp.target");

/** The headers of a JSON answer as node's flat list (writeJsonHead sets its length). */
const JSON_HEAD = jsonHeaderList();
type TaggedResponse = ServerResponse & { [TARGET]?: NodeResponse };

type Listener = CloseListener | (() => void);
/** A {@link NodeResponse}'s listeners once it closed. */
const CLOSED = Object.freeze({ closed: true });

/**
 * A `ServerResponse` as a {@link ResponseTarget} and the {@link CloseSignal} of its request. An
 * answer's last write (`end` with a chunk: a whole answer, or a stream's last event) waits for the
 * end of the event loop's I/O phase, with the other answers of that turn (answer-batch.ts).
 */
class NodeResponse implements ResponseTarget, CloseSignal, HeldAnswer {
  private readonly res: ServerResponse;
  /** The connection the server's bounds count this request on, or null (none: not listen()'s). */
  private readonly connection: TrackedConnection | null;
  /** One listener, or several (an array), or none; {@link CLOSED} once closed. */
  private listeners: Listener | Listener[] | null | typeof CLOSED = null;

  constructor(res: ServerResponse, connection: TrackedConnection | null) {
    this.res = res;
    this.connection = connection;
    (res as TaggedResponse)[TARGET] = this;
    // A module-level listener (its `this` is the response): no closure per request. `on`, not
    // `once`: a response closes once, and `once` would wrap the listener per request.
    res.on("close", onResponseClose);
    if (res.destroyed) this.listeners = CLOSED;
  }

  /** True once the response closed (a flag in the listeners' field: no field of its own). */
  get closed(): boolean {
    return this.listeners === CLOSED;
  }

  onClose(listener: Listener): void {
    const current = this.listeners;
    if (current === CLOSED) notifyClosed(listener);
    else if (current === null) this.listeners = listener;
    else if (Array.isArray(current)) current.push(listener);
    else this.listeners = [current as Listener, listener];
  }

  /** The response closed (module listener). */
  close(): void {
    const listeners = this.listeners;
    if (listeners === CLOSED) return;
    this.listeners = CLOSED;
    if (this.connection !== null) requestEnded(this.connection);
    if (Array.isArray(listeners)) for (const listener of listeners) notifyClosed(listener);
    else if (listeners !== null) notifyClosed(listeners as Listener);
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  /** True from {@link end} on, while the answer waits in the batch too. */
  get ended(): boolean {
    return this.res.writableEnded || isHeld(this);
  }

  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  writeHead(status: number, headers: ResponseHeaders): void {
    this.res.writeHead(status, headers as Record<string, string | number>);
  }

  writeJsonHead(status: number, contentLength: number): void {
    // One list for every answer: node reads it during this call and keeps nothing of it.
    JSON_HEAD[JSON_LENGTH_AT] = contentLength;
    this.res.writeHead(status, JSON_HEAD);
  }

  flushHeaders(): void {
    this.res.flushHeaders();
  }

  write(chunk: string): boolean {
    return this.res.write(chunk);
  }

  end(chunk?: string): void {
    if (chunk === undefined) {
      this.res.end();
      return;
    }
    if (!holdAnswer(this, chunk)) this.release(chunk);
  }

  /**
   * Writes the answer's last chunk: called by the batch when its turn ends (answer-batch.ts), or
   * by {@link end} for an answer too long to be held. Never throws: it runs from `setImmediate`.
   */
  release(chunk: string): void {
    // A client gone meanwhile closed the response: nothing to write.
    if (this.res.destroyed) return;
    try {
      this.res.end(chunk);
    } catch {
      // As failResponse would after the headers: never a half-written answer.
      this.res.destroy();
    }
  }

  onDrain(listener: () => void): void {
    this.res.once("drain", listener);
  }

  closeAfterAnswer(): void {
    if (!this.res.headersSent) this.res.setHeader("connection", "close");
  }

  destroy(): void {
    dropHeld(this);
    this.res.destroy();
  }

  /**
   * Node's timers are the process's: keep-alives of every stream may share one clock (a getter
   * on the prototype, nothing per response).
   */
  get sharedTimers(): boolean {
    return true;
  }

  /**
   * The door keeps only a `.catch` on the core's promise, for a bug: node itself tells the client
   * when the answer ends, so the core's promise need not follow a running call (a getter on the
   * prototype, nothing per response).
   */
  get awaitsAnswer(): boolean {
    return false;
  }

  /** `100 Continue` for a client that sent `Expect: 100-continue`. */
  writeContinue(): void {
    if (!this.res.headersSent && !this.res.destroyed) this.res.writeContinue();
  }
}

function onResponseClose(this: ServerResponse): void {
  (this as TaggedResponse)[TARGET]?.close();
}

/**
 * How a framework adapter hands a node request to the core, beyond the request itself.
 *
 * @example
 * ```ts
 * const options: NodeServeOptions = { endpoint: true, body: { parsed: req.body } };
 * ```
 */
export interface NodeServeOptions {
  /** The framework routed the request to the endpoint (see {@link RequestInput.endpoint}). */
  readonly endpoint?: boolean;
  /**
   * The body as the framework already read it (its stream is consumed): parsed JSON, or the
   * bytes. Unset: the core reads the stream itself, bounded and timed.
   */
  readonly body?: Buffer | ParsedBody;
}

/**
 * The body a framework left on a request, if it read one: a parsed value (`express.json()`,
 * Fastify's JSON parser), a string or bytes (`express.text()`, `express.raw()`); an empty body
 * when the stream was consumed without leaving one; undefined when nobody read it.
 *
 * @example
 * ```ts
 * const body = frameworkBody(req, req.body); // { parsed: { jsonrpc: "2.0", … } }
 * ```
 */
export function frameworkBody(
  req: IncomingMessage,
  body: unknown,
): Buffer | ParsedBody | undefined {
  if (body === undefined) return req.readableEnded ? Buffer.alloc(0) : undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === "string") return Buffer.from(body, "utf8");
  return { parsed: body };
}

/** What the door itself adds to a framework's {@link NodeServeOptions}. */
interface DoorOptions extends NodeServeOptions {
  /** The client sent `Expect: 100-continue` (node's `checkContinue` event) and waits for it. */
  readonly continuePending?: boolean;
  /** The server's connection bounds, told when each request starts and ends; absent: none. */
  readonly connections?: ConnectionBounds | null;
}

/**
 * An `IncomingMessage` as a {@link RequestInput} and its {@link BodySource}. What node's request
 * already holds is read from it (getters on the prototype), not copied: a running call keeps its
 * request for `ctx.request`, so each field would be 8 bytes per call held (docs/profile.md,
 * "Held calls at 10 000").
 */
class NodeRequest implements RequestInput, BodySource {
  readonly native: IncomingMessage;
  readonly closed: CloseSignal;
  /**
   * Read while the socket is open: node's `socket.remoteAddress` may be undefined once it is
   * destroyed (https://nodejs.org/api/net.html#socketremoteaddress), and `ctx.request` may be
   * made later.
   */
  readonly remoteAddress: string | undefined;
  private readonly options: DoorOptions | undefined;
  private continuePending: boolean;

  /** `closed` is the request's {@link NodeResponse} when the door answers through node's own. */
  constructor(req: IncomingMessage, closed: CloseSignal, options: DoorOptions | undefined) {
    this.native = req;
    this.closed = closed;
    this.remoteAddress = req.socket.remoteAddress;
    this.options = options;
    this.continuePending = options?.continuePending === true;
  }

  get method(): string {
    return this.native.method ?? "GET";
  }

  /** The request target without its query string. */
  get path(): string {
    const url = this.native.url ?? "/";
    const query = url.indexOf("?");
    return query === -1 ? url : url.slice(0, query);
  }

  /** Node builds them on first use and keeps them. */
  get headers(): RequestHeaders {
    return this.native.headers;
  }

  get connection(): object {
    return this.native.socket;
  }

  get endpoint(): boolean {
    return this.options?.endpoint === true;
  }

  /** The framework's body, if it read one. */
  private get preRead(): Buffer | ParsedBody | undefined {
    return this.options?.body;
  }

  /** The response to send `100 Continue` on: null for a framework's door (it answers itself). */
  private get response(): NodeResponse | null {
    return this.closed instanceof NodeResponse ? this.closed : null;
  }

  get body(): BodySource {
    return this;
  }

  /** Built by node on first use only (a `tools/call` with `Mcp-Param-*` headers asks). */
  get headersDistinct(): Readonly<Record<string, readonly string[] | undefined>> {
    return this.native.headersDistinct;
  }

  read(limit: number, timeoutMs: number): Promise<BodyOutcome> {
    // Read by the framework already: used as it is, never waited for.
    if (this.preRead !== undefined) return Promise.resolve(this.preRead);
    if (this.continuePending) {
      this.continuePending = false;
      this.response?.writeContinue();
    }
    return readBody(this.native, limit, timeoutMs);
  }

  readNow(limit: number, declaredLength: string | undefined): BodyOutcome | undefined {
    if (this.preRead !== undefined) return this.preRead;
    // A client waiting for `100 Continue` has sent no body yet: read() tells it to go on.
    if (this.continuePending) return undefined;
    return bufferedBody(this.native, limit, declaredLength);
  }

  skip(): void {
    // Node would read and discard what is left of the body to keep the connection; a refused
    // client's body is never read: the connection closes after the answer instead.
    if (!this.native.complete) this.response?.closeAfterAnswer();
  }
}

/**
 * A node request as the core's {@link RequestInput}, for a door that answers some other way
 * than through the `ServerResponse` (a framework's reply): `closed` is its close signal.
 *
 * @example
 * ```ts
 * const input = nodeRequestInput(request.raw, latch, { endpoint: true, body: { parsed: request.body } });
 * ```
 */
export function nodeRequestInput(
  req: IncomingMessage,
  closed: CloseSignal,
  options?: NodeServeOptions,
): RequestInput {
  return new NodeRequest(req, closed, options);
}

/**
 * Serves one request through the core on node's own objects, with what a framework adapter
 * knows ({@link NodeServeOptions}).
 *
 * @example
 * ```ts
 * serveNode(core, req, res, { endpoint: req.route !== undefined, body: frameworkBody(req, req.body) });
 * ```
 */
export function serveNode(
  core: RequestCore,
  req: IncomingMessage,
  res: ServerResponse,
  options?: NodeServeOptions,
): void {
  serve(core, req, res, options);
}

function serve(
  core: RequestCore,
  req: IncomingMessage,
  res: ServerResponse,
  options: DoorOptions | undefined,
): void {
  const bounds = options?.connections ?? null;
  const target = new NodeResponse(res, bounds === null ? null : bounds.requestStarted(req.socket));
  try {
    core.handle(new NodeRequest(req, target, options), target).catch(() => failResponse(target));
  } catch {
    failResponse(target);
  }
}

/**
 * The node:http listener over `core`.
 *
 * @example
 * ```ts
 * const listener = createNodeListener(createRequestCore(config));
 * const server = http.createServer(listener);
 * server.on("checkContinue", listener.checkContinue);
 * ```
 */
export function createNodeListener(
  core: RequestCore,
  connections: ConnectionBounds | null = null,
): NodeRequestListener {
  const plain: DoorOptions = Object.freeze({ connections });
  // The options of a request whose client waits for `100 Continue` before it sends its body.
  const expectsContinue: DoorOptions = Object.freeze({ continuePending: true, connections });
  const listener = (req: IncomingMessage, res: ServerResponse): void =>
    serve(core, req, res, plain);
  return Object.assign(listener, {
    checkContinue: (req: IncomingMessage, res: ServerResponse): void =>
      serve(core, req, res, expectsContinue),
  });
}
