/**
 * Splits a byte stream into newline-delimited messages, each bounded in size. The stdio transport
 * carries one JSON-RPC message per line, with no embedded newlines
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio). A line
 * longer than the bound is never buffered whole: its bytes are dropped as they arrive and the
 * caller is told once, so a peer that never sends a newline cannot grow memory without limit.
 */

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** What a {@link LineSplitter} reports. */
export interface LineHandler {
  /** One complete line (UTF-8 decoded, without its `\n` or a trailing `\r`). */
  line(text: string): void;
  /** A line exceeded the bound; its bytes up to the next newline are discarded. */
  oversized(): void;
}

/**
 * Newline framing with a per-line byte bound.
 *
 * @example
 * ```ts
 * const splitter = new LineSplitter(1_048_576, { line: console.log, oversized: () => {} });
 * process.stdin.on("data", (chunk: Buffer) => splitter.push(chunk));
 * ```
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly handler: LineHandler;
  /** Chunks of the line being received (bytes: a UTF-8 character may span two chunks). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Inside an oversized line: drop bytes until its newline. */
  private discarding = false;

  constructor(maxLineBytes: number, handler: LineHandler) {
    this.maxLineBytes = maxLineBytes;
    this.handler = handler;
  }

  /** Feeds one chunk; complete lines are reported synchronously, in order. */
  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.discarding) {
        if (this.pendingBytes + (end - start) > this.maxLineBytes) {
          this.pending = [];
          this.pendingBytes = 0;
          this.discarding = true;
          this.handler.oversized();
        } else if (end > start) {
          this.pending.push(chunk.subarray(start, end));
          this.pendingBytes += end - start;
        }
      }
      if (newline === -1) return;
      if (this.discarding) this.discarding = false;
      else this.emit();
      start = newline + 1;
    }
  }

  /** The input ended: a last line without its newline still counts. */
  end(): void {
    if (!this.discarding && this.pendingBytes > 0) this.emit();
    this.pending = [];
    this.pendingBytes = 0;
    this.discarding = false;
  }

  private emit(): void {
    const bytes =
      this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    const length =
      bytes.length > 0 && bytes[bytes.length - 1] === CARRIAGE_RETURN
        ? bytes.length - 1
        : bytes.length;
    this.handler.line(bytes.toString("utf8", 0, length));
  }
}
