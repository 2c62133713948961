/**
 * The node:http door of the request core: adapts `IncomingMessage` and `ServerResponse` to the
 * transport-neutral {@link RequestInput} and {@link ResponseTarget} (transport.ts) and hands
 * each request to the core. One small object per side per request.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

import type { RequestCore } from "./endpoint.js";
import { readBody } from "./read-body.js";
import type {
  BodyOutcome,
  BodySource,
  CloseSignal,
  RequestHeaders,
  RequestInput,
  ResponseHeaders,
  ResponseTarget,
} from "./transport.js";
import { failResponse } from "./write-response.js";

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
type TaggedResponse = ServerResponse & { [TARGET]?: NodeResponse };

/** A `ServerResponse` as a {@link ResponseTarget} and the {@link CloseSignal} of its request. */
class NodeResponse implements ResponseTarget, CloseSignal {
  closed = false;
  private readonly res: ServerResponse;
  private listeners: (() => void) | Array<() => void> | null = null;

  constructor(res: ServerResponse) {
    this.res = res;
    (res as TaggedResponse)[TARGET] = this;
    // A module-level listener (its `this` is the response): no closure per request.
    res.once("close", onResponseClose);
    if (res.destroyed) this.closed = true;
  }

  onClose(listener: () => void): void {
    if (this.closed) {
      listener();
      return;
    }
    const current = this.listeners;
    if (current === null) this.listeners = listener;
    else if (typeof current === "function") this.listeners = [current, listener];
    else current.push(listener);
  }

  /** The response closed (module listener). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (typeof listeners === "function") listeners();
    else if (listeners !== null) for (const listener of listeners) listener();
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get ended(): boolean {
    return this.res.writableEnded;
  }

  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  writeHead(status: number, headers: ResponseHeaders): void {
    this.res.writeHead(status, headers as Record<string, string | number>);
  }

  flushHeaders(): void {
    this.res.flushHeaders();
  }

  write(chunk: string): boolean {
    return this.res.write(chunk);
  }

  end(chunk?: string): void {
    if (chunk === undefined) this.res.end();
    else this.res.end(chunk);
  }

  onDrain(listener: () => void): void {
    this.res.once("drain", listener);
  }

  closeAfterAnswer(): void {
    if (!this.res.headersSent) this.res.setHeader("connection", "close");
  }

  destroy(): void {
    this.res.destroy();
  }

  /** `100 Continue` for a client that sent `Expect: 100-continue`. */
  writeContinue(): void {
    if (!this.res.headersSent && !this.res.destroyed) this.res.writeContinue();
  }
}

function onResponseClose(this: ServerResponse): void {
  (this as TaggedResponse)[TARGET]?.close();
}

/** An `IncomingMessage` as a {@link RequestInput} and its {@link BodySource}. */
class NodeRequest implements RequestInput, BodySource {
  readonly method: string;
  readonly path: string;
  readonly headers: RequestHeaders;
  readonly remoteAddress: string | undefined;
  readonly closed: CloseSignal;
  readonly connection: object;
  readonly native: IncomingMessage;
  private readonly response: NodeResponse;
  private continuePending: boolean;

  constructor(req: IncomingMessage, response: NodeResponse, continuePending: boolean) {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    this.method = req.method ?? "GET";
    this.path = query === -1 ? url : url.slice(0, query);
    this.headers = req.headers;
    this.remoteAddress = req.socket.remoteAddress;
    this.closed = response;
    this.connection = req.socket;
    this.native = req;
    this.response = response;
    this.continuePending = continuePending;
  }

  get body(): BodySource {
    return this;
  }

  /** Built by node on first use only (a `tools/call` with `Mcp-Param-*` headers asks). */
  get headersDistinct(): Readonly<Record<string, readonly string[] | undefined>> {
    return this.native.headersDistinct;
  }

  read(limit: number, timeoutMs: number): Promise<BodyOutcome> {
    if (this.continuePending) {
      this.continuePending = false;
      this.response.writeContinue();
    }
    return readBody(this.native, limit, timeoutMs);
  }

  skip(): void {
    // Node would read and discard what is left of the body to keep the connection; a refused
    // client's body is never read: the connection closes after the answer instead.
    if (!this.native.complete) this.response.closeAfterAnswer();
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
export function createNodeListener(core: RequestCore): NodeRequestListener {
  const serve = (req: IncomingMessage, res: ServerResponse, continuePending: boolean): void => {
    const target = new NodeResponse(res);
    try {
      core
        .handle(new NodeRequest(req, target, continuePending), target)
        .catch(() => failResponse(target));
    } catch {
      failResponse(target);
    }
  };
  const listener = (req: IncomingMessage, res: ServerResponse): void => serve(req, res, false);
  return Object.assign(listener, {
    checkContinue: (req: IncomingMessage, res: ServerResponse): void => serve(req, res, true),
  });
}
