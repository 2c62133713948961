/**
 * The silent-connection check (src/http/doors/silent-connections.ts): one timer for every
 * connection, each checked at its own deadline; a connection that sent nothing by then is closed,
 * one that spoke is left alone, and one the bounds report closed first is forgotten at once
 * (the connection bounds' one `close` listener tells it: test/abuse/connection-bounds.test.ts).
 */
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { test } from "node:test";

import { silentConnectionCheck } from "../../src/http/doors/silent-connections.js";

/** Just what the check reads of a socket. */
function fakeSocket(bytesRead: number): Socket & { destroyed: boolean } {
  const socket = {
    bytesRead,
    destroyed: false,
    destroy() {
      socket.destroyed = true;
    },
  };
  return socket as unknown as Socket & { destroyed: boolean };
}

test("a silent connection is closed at its deadline, one that spoke is not, a closed one is forgotten", async () => {
  const check = silentConnectionCheck(30);
  const silent = fakeSocket(0);
  const spoke = fakeSocket(120);
  const closed = fakeSocket(0);
  check.add(silent);
  check.add(spoke);
  check.add(closed);
  check.remove(closed); // its `close`, reported by the bounds
  assert.equal(check.size, 2, "forgotten at once, not at its deadline");
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(silent.destroyed, true);
  assert.equal(spoke.destroyed, false);
  assert.equal(closed.destroyed, false);
  assert.equal(check.size, 0);
});
