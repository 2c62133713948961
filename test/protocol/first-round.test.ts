/**
 * A 2026-07-28 request that carries neither `requestState` nor `inputResponses` starts a first
 * round made on its first ask or `saveState` (FirstRound, protocol/asking/input-required.ts): the
 * round it makes is the one `openInputRound` opens, its expiry fixed when the request started;
 * a call that never asks makes none.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import {
  CallBinding,
  carriesAnswers,
  FirstRound,
  inputRequiredSettings,
  openInputRound,
} from "../../src/protocol/asking/index.js";
import { checkModernRequest, Dispatcher, defineTool } from "../../src/protocol/index.js";

const KEY = "k".repeat(32);
const FORM = { type: "object", properties: { name: { type: "string" } } } as const;
const CAPABILITIES = { elicitation: {} };

/** The sealed state's payload of a round's input_required verdict. */
function sealedPayload(
  settings: ReturnType<typeof inputRequiredSettings>,
  json: string | null,
  binding: CallBinding,
): Record<string, unknown> | null {
  const requestState = (JSON.parse(json ?? "{}") as { requestState?: string }).requestState;
  return requestState === undefined ? null : settings.sealer.open(requestState, binding);
}

describe("FirstRound", () => {
  test("made on the first ask: openInputRound's round, with the expiry of the request's start", async () => {
    let now = 10_000;
    const settings = inputRequiredSettings({ keys: [KEY], ttlMs: 1_000 }, () => now);
    const binding = new CallBinding("tools/call", "greet", "ip:1", { a: 1 });
    const first = new FirstRound(settings, CAPABILITIES, { a: 1 });
    const eager = openInputRound(undefined, settings, binding, CAPABILITIES);
    assert.ok(typeof eager !== "string");
    now = 10_600; // the handler ran a while before asking
    const lazy = first.open("tools/call", "greet", "ip:1");
    for (const round of [lazy, eager]) {
      round.saveState({ step: 2 });
      void round.elicit("Name?", FORM, { key: "name" }).catch(() => {});
      const verdict = round.verdict();
      assert.equal(verdict.kind, "input_required");
      const payload = sealedPayload(
        settings,
        verdict.kind === "input_required" ? verdict.json : null,
        binding,
      );
      assert.equal(payload?.exp, 11_000, "the flow's expiry counts from the request's start");
      assert.deepEqual(payload?.state, { step: 2 });
    }
    assert.equal(lazy.savedState, undefined);
  });

  test("only a request without requestState and inputResponses starts one", () => {
    assert.equal(carriesAnswers(undefined), false);
    assert.equal(carriesAnswers({ name: "greet", arguments: {} }), false);
    assert.equal(carriesAnswers({ inputResponses: {} }), true);
    assert.equal(carriesAnswers({ requestState: "x" }), true);
  });

  test("a 2026-07-28 call that never asks makes no round; one that saves state then asks does", async () => {
    const seen: { asker: unknown; pending: unknown }[] = [];
    const peek = (ctx: unknown) => {
      const fields = ctx as { asker: unknown; serverAsks: unknown };
      seen.push({ asker: fields.asker, pending: fields.serverAsks });
    };
    const registry = new CancellationRegistry({ janitor: false });
    const dispatcher = new Dispatcher({
      name: "t",
      version: "1",
      registry,
      streamCancelTimeoutMs: 50,
      cancelOnDisconnect: true,
      inputRequired: inputRequiredSettings({ keys: [KEY] }),
      tools: [
        defineTool({
          name: "quiet",
          handler: (_args, ctx) => {
            peek(ctx);
            return "ok";
          },
        }),
        defineTool({
          name: "asks",
          handler: async (_args, ctx) => {
            ctx.saveState({ kept: true });
            peek(ctx);
            await ctx.elicit("Name?", FORM);
            return "never";
          },
        }),
      ],
    });
    const answers: string[] = [];
    const sink = () => ({
      streamable: false,
      ended: false,
      lifetime: new AbortController().signal,
      notify: () => Promise.resolve(),
      respond: (json: string) => void answers.push(json),
      cancel: () => {},
      setSessionId: () => {},
      setListener: () => {},
    });
    for (const [id, name] of [
      [1, "quiet"],
      [2, "asks"],
    ] as const) {
      const message = {
        jsonrpc: "2.0" as const,
        id,
        method: "tools/call",
        params: {
          name,
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
          },
        },
      };
      const envelope = checkModernRequest(message, {
        protocolVersion: "2026-07-28",
        method: "tools/call",
        name,
      });
      assert.ok(envelope.ok);
      const meta = { scope: "ip:1", principal: null, sessionId: null, logLevel: null };
      await dispatcher.handleModernRequest(message, meta, sink(), envelope);
    }
    assert.equal(seen[0]?.asker, null, "no round made for a call that never asks");
    assert.ok(seen[0]?.pending instanceof FirstRound);
    assert.notEqual(seen[1]?.asker, null, "saveState made the round");
    assert.equal(seen[1]?.pending, undefined);
    const [quiet, asks] = answers.map((json) => JSON.parse(json).result);
    assert.equal(quiet.resultType, "complete");
    assert.equal(asks.resultType, "input_required");
    assert.equal(typeof asks.requestState, "string");
    await registry.close();
  });
});
