/**
 * Raw-socket helpers for the abuse tests: what a hostile client does below `fetch` (trickling
 * bytes, streaming a body past the limit). Not a test file itself.
 */
import { connect, type Socket } from "node:net";

/** What a raw exchange ended with. */
export interface RawOutcome {
  /** Everything the server sent, as latin1 text. */
  readonly received: string;
  /** Whether the server closed (or reset) the connection. */
  readonly closedByServer: boolean;
  /** Bytes this client managed to write before the connection ended. */
  readonly bytesWritten: number;
  /** How long the exchange lasted, ms. */
  readonly elapsedMs: number;
}

/**
 * Writes `head` at once, then `trickle` one byte every `intervalMs` (at most `maxMs` in all),
 * until the server closes the connection. Resolves what the server sent.
 */
export function trickle(
  port: number,
  head: string,
  trickleText: string,
  intervalMs: number,
  maxMs: number,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let index = 0;
    let finished = false;
    const finish = (closedByServer: boolean): void => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      clearTimeout(deadline);
      const bytesWritten = socket.bytesWritten;
      socket.destroy();
      resolve({ received, closedByServer, bytesWritten, elapsedMs: performance.now() - started });
    };
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    if (head.length > 0) socket.write(head);
    const timer = setInterval(() => {
      if (index < trickleText.length && socket.writable) socket.write(trickleText[index++] ?? "");
    }, intervalMs);
    const deadline = setTimeout(() => finish(false), maxMs);
  });
}

/**
 * Sends a chunked POST and streams `totalBytes` of body in `chunkBytes` chunks (honouring
 * backpressure) until done or the server closes. Resolves what the server sent.
 */
export function streamChunked(
  port: number,
  path: string,
  totalBytes: number,
  chunkBytes: number,
  maxMs: number,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket: Socket = connect(port, "127.0.0.1");
    let received = "";
    let sent = 0;
    let finished = false;
    const finish = (closedByServer: boolean): void => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      const bytesWritten = socket.bytesWritten;
      socket.destroy();
      resolve({ received, closedByServer, bytesWritten, elapsedMs: performance.now() - started });
    };
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    const chunk = `${chunkBytes.toString(16)}\r\n${" ".repeat(chunkBytes)}\r\n`;
    const pump = (): void => {
      while (!finished && sent < totalBytes) {
        sent += chunkBytes;
        if (!socket.write(chunk)) {
          socket.once("drain", pump);
          return;
        }
      }
      if (!finished && sent >= totalBytes) socket.write("0\r\n\r\n");
    };
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        "Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    pump();
    const deadline = setTimeout(() => finish(false), maxMs);
  });
}
