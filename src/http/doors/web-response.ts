/**
 * A {@link ResponseTarget} that builds a web-standard `Response`
 * (https://fetch.spec.whatwg.org/#response-class): a whole answer becomes a `Response` with a
 * string body; a stream becomes a `Response` whose body is a `ReadableStream` the exchange
 * writes to, with the stream's queue as the buffer a slow client fills (so the exchange's
 * backpressure and `maxStreamBufferBytes` cut work as on node:http). The host (a fetch runtime,
 * a framework's reply) cancelling the stream is the client going away.
 */
import type { ResponseHeaders, ResponseTarget } from "../transport.js";

/**
 * Bytes queued in the stream before a write reports backpressure; node's default
 * `highWaterMark` for a writable stream, so a door behaves like the node:http one.
 */
const HIGH_WATER_MARK = 16 * 1024;
const encoder = new TextEncoder();

/** An answer as its parts: what a `Response` is made of. */
export interface WebAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The whole body, the stream, or none (202, 204). */
  readonly body: string | ReadableStream<Uint8Array> | null;
}

/**
 * The web `Response` side of one request.
 *
 * @example
 * ```ts
 * const target = new WebResponse(() => latch.close());
 * void core.handle(input, target).finally(() => target.settle());
 * return target.response();
 * ```
 */
export class WebResponse implements ResponseTarget {
  /** Resolves once the status and headers are decided (a whole answer, or a stream's start). */
  readonly answer: Promise<WebAnswer>;
  headersSent = false;
  ended = false;
  private status = 200;
  private headers: Record<string, string> = {};
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  /** The stream can take no more (closed, errored, or cancelled by its reader). */
  private streamDone = false;
  private drains: Array<() => void> = [];
  private resolve!: (answer: WebAnswer) => void;
  private readonly onCancel: () => void;

  /** `onCancel`: called once if the host cancels the stream (the client went away). */
  constructor(onCancel: () => void) {
    this.onCancel = onCancel;
    this.answer = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** The answer as a web `Response`. */
  async response(): Promise<Response> {
    const { status, headers, body } = await this.answer;
    return new Response(body, { status, headers });
  }

  get bufferedBytes(): number {
    const desired = this.controller?.desiredSize;
    return desired === null || desired === undefined ? 0 : Math.max(0, HIGH_WATER_MARK - desired);
  }

  writeHead(status: number, headers: ResponseHeaders): void {
    this.status = status;
    const copy: Record<string, string> = {};
    for (const name of Object.keys(headers)) copy[name] = String(headers[name]);
    this.headers = copy;
  }

  flushHeaders(): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.controller = controller;
        },
        // The reader took bytes and wants more: a waiting writer may go on.
        pull: () => this.wakeDrains(),
        cancel: () => {
          this.streamDone = true;
          this.wakeDrains();
          this.onCancel();
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_MARK }),
    );
    this.resolve({ status: this.status, headers: this.headers, body: stream });
  }

  write(chunk: string): boolean {
    if (!this.headersSent) this.flushHeaders();
    const controller = this.controller;
    if (controller === null || this.streamDone) return true;
    controller.enqueue(encoder.encode(chunk));
    return (controller.desiredSize ?? 0) > 0;
  }

  end(chunk?: string): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.headersSent) {
      this.headersSent = true;
      // 202/204 answers have no body (a Response with one would throw for 204).
      this.resolve({ status: this.status, headers: this.headers, body: chunk ?? null });
      return;
    }
    if (this.streamDone) return;
    if (chunk !== undefined) this.controller?.enqueue(encoder.encode(chunk));
    this.closeStream();
  }

  onDrain(listener: () => void): void {
    if (this.streamDone) listener();
    else this.drains.push(listener);
  }

  /** The host owns the connection: nothing to ask of it here. */
  closeAfterAnswer(): void {}

  destroy(): void {
    this.ended = true;
    if (!this.headersSent) {
      this.headersSent = true;
      this.resolve({ status: 500, headers: { "cache-control": "no-store" }, body: null });
      return;
    }
    if (this.streamDone) return;
    this.streamDone = true;
    // An errored stream makes the host drop the connection: the client sees a cut, not an end.
    this.controller?.error(new Error("conduit-mcp: stream cut"));
    this.wakeDrains();
  }

  /**
   * The request is over on the server's side (its exchange ended, or it was never answered
   * because the client left): a stream still open is closed, and a response never decided
   * resolves, so no caller of the fetch handler waits forever.
   */
  settle(): void {
    if (!this.headersSent) {
      this.destroy();
      return;
    }
    if (!this.streamDone) this.closeStream();
  }

  private closeStream(): void {
    this.streamDone = true;
    this.ended = true;
    try {
      this.controller?.close();
    } catch {
      // Already closed or errored by its reader.
    }
    this.wakeDrains();
  }

  private wakeDrains(): void {
    const drains = this.drains;
    if (drains.length === 0) return;
    this.drains = [];
    for (const drain of drains) drain();
  }
}
