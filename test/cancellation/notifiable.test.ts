import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryCancellationStore } from "../../src/cancellation/memory-store.js";
import { CancellationRegistry } from "../../src/cancellation/registry.js";
import type { RemoteCancellation } from "../../src/cancellation/types.js";
import { RequestCancelledError } from "../../src/errors.js";

/**
 * `track(id, scope, { notifiable: false })`: a handle that `notifications/cancelled` must never
 * reach (a 2026-07-28 request, cancelled only by closing its stream), while every other cause
 * still aborts it.
 */
describe("CancellationRegistry: handles tracked with notifiable: false", () => {
  it("a notification-sourced cancel skips them and still aborts its notifiable namesakes", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const modern = await registry.track(1, "ip:127.0.0.1", { notifiable: false });
    const legacy = await registry.track(1, "ip:127.0.0.1");
    const result = await registry.cancel(1, "sweep", "ip:127.0.0.1", "notification");
    assert.equal(result.ok, true);
    assert.equal(modern.signal.aborted, false, "the modern request keeps running");
    assert.equal(legacy.signal.aborted, true, "the 2025 request is cancelled as before");
    await registry.close();
  });

  it("a lone non-notifiable handle is untouched by a notification sweep of ids", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const handles = await Promise.all(
      [1, 2, 3, 4, 5].map((id) => registry.track(id, "ip:127.0.0.1", { notifiable: false })),
    );
    for (let id = 1; id <= 20; id++) {
      await registry.cancel(id, null, "ip:127.0.0.1", "notification");
    }
    assert.ok(handles.every((handle) => !handle.signal.aborted));
    await registry.close();
  });

  it("other sources still reach them: a library cancel, cancelHandle, abortAll", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const a = await registry.track(7, "s", { notifiable: false });
    await registry.cancel(7, null, "s", "library");
    assert.equal(a.signal.aborted, true);
    const b = await registry.track(8, "s", { notifiable: false });
    await registry.cancelHandle(b, "client disconnected", "disconnect");
    assert.equal(b.signal.aborted, true);
    const c = await registry.track(9, "s", { notifiable: false });
    registry.abortAll(new RequestCancelledError("shutdown"));
    assert.equal(c.signal.aborted, true);
    await registry.close();
  });

  it("a notification-sourced cancel from another node skips them too", async () => {
    // A store whose remote-cancellation listener the test drives, as a pub/sub message would.
    const store = new MemoryCancellationStore();
    let deliver: ((event: RemoteCancellation) => void) | null = null;
    store.onRemoteCancellation = (listener) => {
      deliver = listener;
      return () => {
        deliver = null;
      };
    };
    const registry = new CancellationRegistry({ janitor: false, store });
    const modern = await registry.track(3, "s", { notifiable: false });
    const legacy = await registry.track(3, "s");
    const event: RemoteCancellation = {
      scope: "s",
      requestId: "3",
      reason: null,
      source: "notification",
    };
    assert.ok(deliver !== null);
    (deliver as (event: RemoteCancellation) => void)(event);
    assert.equal(modern.signal.aborted, false);
    assert.equal(legacy.signal.aborted, true);
    await registry.close();
    await store.close();
  });
});
