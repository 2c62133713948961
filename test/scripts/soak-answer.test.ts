/** SSE framing and answer fields as the soaks read them (scripts/soak/answer.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";

import { errorCode, resultText, takeSseEvents } from "../../scripts/soak/answer.js";

test("takeSseEvents: complete events' data, comment-only events as empty, the rest kept", () => {
  const { events, rest } = takeSseEvents(
    'event: message\ndata: {"a":1}\n\n: keepalive\n\ndata: x\ndata:y\n\ndata: {"unfinished"',
  );
  assert.deepEqual(events, ['{"a":1}', "", "x\ny"]);
  assert.equal(rest, 'data: {"unfinished"');
  assert.deepEqual(takeSseEvents("data: partial"), { events: [], rest: "data: partial" });
});

test("resultText and errorCode read only well-typed fields", () => {
  assert.equal(resultText({ result: { content: [{ type: "text", text: "hi" }] } }), "hi");
  assert.equal(resultText({ result: { content: [{ text: 3 }] } }), undefined);
  assert.equal(errorCode({ error: { code: -32800 } }), -32800);
  assert.equal(errorCode({ error: { code: "x" } }), undefined);
});
