/**
 * 2025-11-25 asks over raw HTTP on one node: the server's request goes out on the call's SSE
 * stream, the client's answer is a separate POST (202). Security: an answer from another scope,
 * a guessed id, a malformed id or a second answer is ignored; a flood of unanswered asks from one
 * scope is bounded while another scope is still served. Cancellation by notification and by
 * disconnect withdraws the waiting ask (the client is told with `notifications/cancelled` while
 * its stream is open), and nothing stays in any table. Spec:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server,
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { CannotAskClientError, ClientRequestFailedError } from "../../src/errors.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";
import { transportCore } from "../../src/server/transport-core.js";
import { callBody, cancelBody, rpc, until } from "../server/fixtures.js";
import {
  answer,
  isRequest,
  isResponseTo,
  type Message,
  openCall,
  openSession,
  sessionHeaders,
} from "./stream.js";

/** `ask {kind}`: asks once; the answer (or why it failed) as text. */
const askTool = defineTool({
  name: "ask",
  input: z.object({ kind: z.enum(["elicit", "sample", "roots"]) }),
  handler: async ({ kind }, ctx) => {
    try {
      const answered =
        kind === "elicit"
          ? await ctx.elicit("Proceed?", {
              type: "object",
              properties: { ok: { type: "boolean" } },
              required: ["ok"],
            })
          : kind === "sample"
            ? await ctx.sample({
                messages: [{ role: "user", content: { type: "text", text: "hi" } }],
                maxTokens: 5,
              })
            : await ctx.roots();
      return JSON.stringify(answered);
    } catch (error) {
      if (error instanceof ClientRequestFailedError) return `failed:${error.reason}`;
      if (error instanceof CannotAskClientError) return `cannot:${error.name}`;
      throw error;
    }
  },
});

const ELICIT_CAPS = { elicitation: {}, sampling: {}, roots: {} };

function textOf(message: Message): string {
  return message.result.content.map((block: { text: string }) => block.text).join("");
}

describe("2025-11-25 asks over HTTP, one node", () => {
  let server: McpServer;
  let url: string;
  const table = () => transportCore(server).dispatcher.serverRequests.table;

  before(async () => {
    server = createMcpServer({
      tools: [askTool],
      sessions: true,
      onError: false,
      serverRequests: { maxPerScope: 2, max: 3, timeoutMs: 60_000 },
    });
    url = (await server.listen()).url;
  });
  after(() => server.close());

  test("the request goes out on the call's stream with an unguessable id; the answer POST is 202 and reaches the handler", async () => {
    const session = await openSession(url, ELICIT_CAPS);
    const call = await openCall(
      url,
      callBody(1, "ask", { kind: "elicit" }),
      sessionHeaders(session),
    );
    const asked = await call.next(isRequest("elicitation/create"));
    assert.match(asked.id, /^[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{22}$/);
    assert.equal(asked.params.mode, "form");
    assert.equal(asked.params.message, "Proceed?");
    assert.deepEqual(asked.params.requestedSchema.required, ["ok"]);
    const posted = await answer(
      url,
      asked.id,
      { result: { action: "accept", content: { ok: true } } },
      sessionHeaders(session),
    );
    assert.equal(posted.status, 202);
    assert.equal(posted.text, "");
    const done = await call.next(isResponseTo(1));
    assert.deepEqual(JSON.parse(textOf(done)), { action: "accept", content: { ok: true } });
    assert.equal(table().size, 0);
  });

  test("sampling and roots answers are checked against the spec's result types", async () => {
    const session = await openSession(url, ELICIT_CAPS);
    const headers = sessionHeaders(session);
    const sample = await openCall(url, callBody(2, "ask", { kind: "sample" }), headers);
    const sampling = await sample.next(isRequest("sampling/createMessage"));
    assert.equal(sampling.params.maxTokens, 5);
    // No `model`: not a CreateMessageResult.
    await answer(
      url,
      sampling.id,
      { result: { role: "assistant", content: { type: "text" } } },
      headers,
    );
    assert.equal(textOf(await sample.next(isResponseTo(2))), "failed:invalid-response");

    const roots = await openCall(url, callBody(3, "ask", { kind: "roots" }), headers);
    const listing = await roots.next(isRequest("roots/list"));
    await answer(url, listing.id, { error: { code: -32601, message: "no roots here" } }, headers);
    assert.equal(textOf(await roots.next(isResponseTo(3))), "failed:error-response");

    const good = await openCall(url, callBody(4, "ask", { kind: "roots" }), headers);
    const again = await good.next(isRequest("roots/list"));
    await answer(url, again.id, { result: { roots: [{ uri: "file:///w", name: "w" }] } }, headers);
    assert.deepEqual(JSON.parse(textOf(await good.next(isResponseTo(4)))), {
      roots: [{ uri: "file:///w", name: "w" }],
    });
    assert.equal(table().size, 0);
  });

  test("an answer from another session, a guessed id, a malformed id: 202 and ignored; a second answer too", async () => {
    const alice = await openSession(url, ELICIT_CAPS);
    const mallory = await openSession(url, ELICIT_CAPS);
    const call = await openCall(url, callBody(5, "ask", { kind: "elicit" }), sessionHeaders(alice));
    const asked = await call.next(isRequest("elicitation/create"));
    const forged = { result: { action: "accept", content: { ok: false } } };
    // Another session (same client address) answering with the real id.
    assert.equal((await answer(url, asked.id, forged, sessionHeaders(mallory))).status, 202);
    // No session at all (the address's own scope).
    assert.equal((await answer(url, asked.id, forged)).status, 202);
    // Guessed ids: this node's tag with a random secret, another tag, garbage, a number.
    const [node] = asked.id.split(".");
    for (const id of [
      `${node}.${randomBytes(16).toString("base64url")}`,
      `${randomBytes(8).toString("base64url")}.${randomBytes(16).toString("base64url")}`,
      "x".repeat(5_000),
      42,
    ]) {
      assert.equal((await answer(url, id, forged, sessionHeaders(alice))).status, 202);
    }
    assert.equal(table().size, 1, "the ask still waits");
    assert.equal(call.seen.length, 1, "nothing reached the call");
    const real = { result: { action: "accept", content: { ok: true } } };
    assert.equal((await answer(url, asked.id, real, sessionHeaders(alice))).status, 202);
    const done = await call.next(isResponseTo(5));
    assert.deepEqual(JSON.parse(textOf(done)), { action: "accept", content: { ok: true } });
    // A second answer for a finished id changes nothing.
    assert.equal((await answer(url, asked.id, forged, sessionHeaders(alice))).status, 202);
    assert.equal(table().size, 0);
  });

  test("a flood of unanswered asks from one scope is bounded; another scope is still asked", async () => {
    const flooder = await openSession(url, ELICIT_CAPS);
    const headers = sessionHeaders(flooder);
    const open = [];
    for (let i = 0; i < 2; i++) {
      const call = await openCall(url, callBody(`f${i}`, "ask", { kind: "elicit" }), headers);
      await call.next(isRequest("elicitation/create"));
      open.push(call);
    }
    // The scope's third ask is refused at once; the handler can tell why.
    const third = await openCall(url, callBody("f2", "ask", { kind: "elicit" }), headers);
    assert.equal(textOf(await third.next(isResponseTo("f2"))), "failed:too-many");
    assert.equal(table().size, 2);
    // Another tenant still gets its question (the global bound is 3).
    const other = await openSession(url, ELICIT_CAPS);
    const served = await openCall(
      url,
      callBody("o", "ask", { kind: "elicit" }),
      sessionHeaders(other),
    );
    const asked = await served.next(isRequest("elicitation/create"));
    await answer(url, asked.id, { result: { action: "decline" } }, sessionHeaders(other));
    assert.deepEqual(JSON.parse(textOf(await served.next(isResponseTo("o")))), {
      action: "decline",
    });
    for (const call of open) call.abort();
    await until(() => table().size === 0, 5_000, "the flooder's asks withdrawn");
  });

  test("cancelled by notification while waiting: the client is told notifications/cancelled for the server's id; tables empty", async () => {
    const session = await openSession(url, ELICIT_CAPS);
    const headers = sessionHeaders(session);
    const call = await openCall(url, callBody("c1", "ask", { kind: "elicit" }), headers);
    const asked = await call.next(isRequest("elicitation/create"));
    assert.equal(table().size, 1);
    const cancelled = await rpc(url, cancelBody("c1", "changed my mind"), headers);
    assert.equal(cancelled.status, 202);
    const withdrawn = await call.next((m) => m.method === "notifications/cancelled");
    assert.equal(withdrawn.params.requestId, asked.id);
    await call.ended;
    assert.equal(
      call.seen.filter(isResponseTo("c1")).length,
      0,
      "a cancelled stream ends unanswered",
    );
    assert.equal(table().size, 0);
    await until(() => server.registry.inFlightCount === 0, 2_000, "the call untracked");
    // A late answer is ignored.
    assert.equal(
      (await answer(url, asked.id, { result: { action: "decline" } }, headers)).status,
      202,
    );
    assert.equal(table().size, 0);
    assert.equal(table().scopes, 0);
  });

  test("cancelled by disconnect while waiting: the ask is withdrawn, tables empty", async () => {
    const session = await openSession(url, ELICIT_CAPS);
    const call = await openCall(
      url,
      callBody("d1", "ask", { kind: "sample" }),
      sessionHeaders(session),
    );
    await call.next(isRequest("sampling/createMessage"));
    assert.equal(table().size, 1);
    call.abort();
    await until(() => table().size === 0, 5_000, "the ask withdrawn");
    await until(() => server.registry.inFlightCount === 0, 5_000, "the call untracked");
    assert.equal(table().scopes, 0);
  });

  test("a client that accepts only JSON cannot be asked", async () => {
    const session = await openSession(url, ELICIT_CAPS);
    const answered = await rpc(url, callBody("j", "ask", { kind: "elicit" }), {
      ...sessionHeaders(session),
      accept: "application/json",
    });
    assert.equal(textOf(answered.json), "cannot:CannotAskClientError");
  });
});

describe("2025-11-25 asks: timeout and the rule for unknown capabilities", () => {
  let assume: McpServer;
  let refuse: McpServer;
  let assumeUrl: string;
  let refuseUrl: string;

  before(async () => {
    assume = createMcpServer({
      tools: [askTool],
      onError: false,
      serverRequests: { unknownCapabilities: "assume", timeoutMs: 300 },
    });
    refuse = createMcpServer({ tools: [askTool], onError: false });
    assumeUrl = (await assume.listen()).url;
    refuseUrl = (await refuse.listen()).url;
  });
  after(async () => {
    await assume.close();
    await refuse.close();
  });

  test('stateless, rule "refuse" (default): never asked', async () => {
    const answered = await rpc(refuseUrl, callBody(1, "ask", { kind: "elicit" }));
    assert.equal(textOf(answered.json), "cannot:MissingClientCapabilityError");
  });

  test('stateless, rule "assume": asked; the answer from the same client address is accepted', async () => {
    const call = await openCall(assumeUrl, callBody(1, "ask", { kind: "roots" }));
    const asked = await call.next(isRequest("roots/list"));
    await answer(assumeUrl, asked.id, { result: { roots: [] } });
    assert.deepEqual(JSON.parse(textOf(await call.next(isResponseTo(1)))), { roots: [] });
  });

  test("an unanswered ask times out: withdrawn with notifications/cancelled, the handler told", async () => {
    const call = await openCall(assumeUrl, callBody(2, "ask", { kind: "elicit" }));
    const asked = await call.next(isRequest("elicitation/create"));
    const withdrawn = await call.next((m) => m.method === "notifications/cancelled");
    assert.equal(withdrawn.params.requestId, asked.id);
    assert.equal(withdrawn.params.reason, "timeout");
    assert.equal(textOf(await call.next(isResponseTo(2))), "failed:timeout");
    assert.equal(transportCore(assume).dispatcher.serverRequests.table.size, 0);
  });

  test("serverRequests options are checked at construction", () => {
    assert.throws(
      () => createMcpServer({ serverRequests: { timeoutMs: 2 ** 31 } }),
      /serverRequests\.timeoutMs/,
    );
    assert.throws(
      () => createMcpServer({ serverRequests: { maxPerScope: 0 } }),
      /serverRequests\.maxPerScope/,
    );
    assert.throws(
      () => createMcpServer({ serverRequests: { unknownCapabilities: "yes" as never } }),
      /serverRequests\.unknownCapabilities/,
    );
    assert.throws(
      () => createMcpServer({ serverRequests: { bus: {} as never } }),
      /serverRequests\.bus/,
    );
  });
});
