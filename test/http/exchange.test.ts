/**
 * HttpExchange over a recording ResponseTarget: extra headers on a JSON answer, a hang-up
 * remembered for a listener attached later, and a stream cut when its client stops reading.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { HttpExchange, type HttpExchangeOptions } from "../../src/http/exchange.js";
import {
  type CloseListener,
  type CloseSignal,
  notifyClosed,
  type ResponseHeaders,
  type ResponseTarget,
} from "../../src/http/transport.js";

/** A target that records what was written; `accept` = how many bytes the "client" takes. */
class RecordingTarget implements ResponseTarget, CloseSignal {
  status = 0;
  headers: ResponseHeaders = {};
  chunks: string[] = [];
  headersSent = false;
  ended = false;
  destroyed = false;
  closed = false;
  bufferedBytes = 0;
  /** While true, every write stays buffered (a client that does not read). */
  stalled = false;
  drainListeners = 0;
  private closeListeners: Array<CloseListener | (() => void)> = [];

  writeHead(status: number, headers: ResponseHeaders): void {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    if (!this.stalled) return true;
    this.bufferedBytes += Buffer.byteLength(chunk);
    return false;
  }
  end(chunk?: string): void {
    if (chunk !== undefined) this.chunks.push(chunk);
    this.ended = true;
  }
  onDrain(_listener: () => void): void {
    this.drainListeners++;
  }
  closeAfterAnswer(): void {}
  destroy(): void {
    this.destroyed = true;
    this.close();
  }
  onClose(listener: CloseListener | (() => void)): void {
    if (this.closed) notifyClosed(listener);
    else this.closeListeners.push(listener);
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) notifyClosed(listener);
  }
}

function exchange(target: RecordingTarget, options: Partial<HttpExchangeOptions> = {}) {
  return new HttpExchange({
    target,
    closed: target,
    jsonAccepted: true,
    sseAccepted: true,
    settings: { keepAliveMs: 0, maxBufferedBytes: 1_000, recorder: null },
    method: "tools/call",
    ...options,
  });
}

describe("HttpExchange", () => {
  test("respond(json, status, headers) sends the extra headers; they cannot replace the fixed ones", () => {
    const target = new RecordingTarget();
    exchange(target).respond('{"x":1}', 403, {
      "www-authenticate": 'Bearer error="insufficient_scope"',
      "content-type": "text/html",
      "x-content-type-options": "off",
    });
    assert.equal(target.status, 403);
    assert.equal(target.headers["www-authenticate"], 'Bearer error="insufficient_scope"');
    assert.equal(target.headers["content-type"], "application/json");
    assert.equal(target.headers["x-content-type-options"], "nosniff");
    assert.deepEqual(target.chunks, ['{"x":1}']);
  });

  test("a client gone before the listener was attached is reported to it at once", () => {
    const target = new RecordingTarget();
    const sink = exchange(target);
    target.close(); // the hang-up, while (say) the registry's track is still pending
    assert.equal(sink.ended, true);
    let told = 0;
    sink.setListener({ onDisconnect: () => told++ });
    assert.equal(told, 1, "the late listener hears of the hang-up");
  });

  test("a client gone before the exchange existed is remembered too", () => {
    const target = new RecordingTarget();
    target.close();
    const sink = exchange(target);
    let told = 0;
    sink.setListener({ onDisconnect: () => told++ });
    assert.equal(told, 1);
    sink.respond("{}");
    assert.deepEqual(target.chunks, [], "nothing is written after the hang-up");
  });

  test("an answered exchange is not a disconnect when the connection closes later", () => {
    const target = new RecordingTarget();
    const sink = exchange(target);
    let told = 0;
    sink.setListener({ onDisconnect: () => told++ });
    sink.respond("{}");
    target.close();
    sink.setListener({ onDisconnect: () => told++ });
    assert.equal(told, 0);
    assert.equal(sink.lifetime.aborted, true, "the lifetime is over once answered");
  });

  test("a stream whose client stops reading is cut once maxBufferedBytes wait, and the call hears a disconnect", async () => {
    const target = new RecordingTarget();
    const sink = exchange(target, {
      settings: { keepAliveMs: 0, maxBufferedBytes: 1_000, recorder: null },
    });
    let told = 0;
    sink.setListener({ onDisconnect: () => told++ });
    target.stalled = true;
    const waits: Promise<void>[] = [];
    const event = JSON.stringify({ method: "notifications/progress", pad: "x".repeat(200) });
    for (let i = 0; i < 20 && !target.destroyed; i++) waits.push(sink.notify(event));
    assert.equal(target.destroyed, true, "the stream was cut");
    assert.equal(told, 1, "the call was told, as for a hang-up");
    assert.ok(target.bufferedBytes < 1_000 + 400, `buffered ${target.bufferedBytes} bytes`);
    assert.equal(target.drainListeners, 1, "one drain waiter, whatever the number of writes");
    await Promise.all(waits); // every backpressured notify resolves once the stream is gone
    sink.respond("{}");
    assert.equal(target.ended, false, "nothing is written after the cut");
  });
});
