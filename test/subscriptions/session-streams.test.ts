/**
 * SessionStreams bounds, with a scripted ResponseTarget: a client that stops reading is cut once
 * more than `maxBufferedBytes` wait (the stream is freed and the connection dropped); a hang-up
 * frees the stream; one stream per session (a new one ends the old).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { SessionStreams } from "../../src/http/session-streams.js";
import type { CloseSignal, ResponseTarget } from "../../src/http/transport.js";

class FakeTarget implements ResponseTarget {
  headersSent = false;
  ended = false;
  destroyed = false;
  bufferedBytes = 0;
  /** Bytes the fake client takes at once; beyond, writes buffer. */
  reading = true;
  readonly chunks: string[] = [];
  writeHead(): void {
    this.headersSent = true;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    if (this.reading) return true;
    this.bufferedBytes += Buffer.byteLength(chunk);
    return false;
  }
  end(): void {
    this.ended = true;
  }
  onDrain(): void {}
  closeAfterAnswer(): void {}
  destroy(): void {
    this.destroyed = true;
  }
}

class FakeClose implements CloseSignal {
  closed = false;
  private readonly listeners: (() => void)[] = [];
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }
  hangUp(): void {
    this.closed = true;
    for (const listener of this.listeners) listener();
  }
}

test("a client that does not read is cut beyond maxBufferedBytes", () => {
  const streams = new SessionStreams({ keepAliveMs: 0, maxBufferedBytes: 120 });
  const target = new FakeTarget();
  streams.open("s", target, new FakeClose());
  target.reading = false;
  const message = JSON.stringify({ jsonrpc: "2.0", method: "x", params: { pad: "y".repeat(20) } });
  assert.equal(streams.send("s", message), true); // buffered, under the bound
  assert.equal(target.destroyed, false);
  assert.equal(streams.send("s", message), false); // over the bound: cut
  assert.equal(target.destroyed, true);
  assert.equal(streams.has("s"), false);
  assert.equal(streams.send("s", message), false);
});

test("a hang-up frees the stream; a new stream ends the previous one", () => {
  const streams = new SessionStreams({ keepAliveMs: 60_000, maxBufferedBytes: 1_000 });
  let ends = 0;
  const first = new FakeTarget();
  const firstClose = new FakeClose();
  streams.open("s", first, firstClose, () => ends++);
  const second = new FakeTarget();
  const secondClose = new FakeClose();
  streams.open("s", second, secondClose, () => ends++);
  assert.equal(ends, 1, "the replaced stream gave back its unit");
  assert.equal(first.ended, true);
  assert.equal(streams.size, 1);
  // The first one's late close does not drop the second.
  firstClose.hangUp();
  assert.equal(streams.has("s"), true);
  assert.equal(streams.send("s", "{}"), true);
  assert.ok(second.chunks.includes("event: message\ndata: {}\n\n"));
  secondClose.hangUp();
  assert.equal(streams.size, 0);
  assert.equal(ends, 2, "each stream's onEnd runs exactly once");
  assert.equal(streams.send("s", "{}"), false);
});

test("a stream whose client already left is never registered", () => {
  const streams = new SessionStreams({ keepAliveMs: 0, maxBufferedBytes: 1_000 });
  const close = new FakeClose();
  close.hangUp();
  streams.open("s", new FakeTarget(), close);
  assert.equal(streams.size, 0);
});
