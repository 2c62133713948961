/**
 * Fuzz: `inputResponses` and `requestState` are hostile network input (MCP 2026-07-28 MRTR,
 * "MUST treat requestState as an attacker-controlled input"). For arbitrary values of both, and
 * for every mutation of a genuine state, opening the round never throws, every ask settles
 * (answer, InputPending, or a refusal), the verdict never throws, and a forged or mutated state
 * never opens. 3 000 cases.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";

import {
  InputPending,
  type InputRound,
  inputRequiredSettings,
  openInputRound,
} from "../../src/protocol/asking/input-required.js";
import { argumentsDigest } from "../../src/protocol/asking/request-state.js";

const settings = inputRequiredSettings({ keys: ["fuzz key, at least thirty-two bytes"] });
const binding = {
  method: "tools/call",
  name: "fuzzed",
  scope: "ip:127.0.0.1",
  argumentsDigest: argumentsDigest({}),
};
const CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
const FORM = { type: "object", properties: { name: { type: "string" } } } as const;

/** Runs the asks a handler might make; resolves when all have settled. */
async function exercise(round: InputRound): Promise<void> {
  const asks = [
    round.elicit("name?", FORM, { key: "k1" }),
    round.elicit("name?", FORM),
    round.sample({
      messages: [{ role: "user", content: { type: "text", text: "?" } }],
      maxTokens: 5,
    }),
    round.roots({ key: "r" }),
    round.elicitUrl("open", "https://example.com/x"),
  ];
  const settled = await Promise.allSettled(asks);
  for (const outcome of settled) {
    if (outcome.status === "rejected") {
      assert.ok(outcome.reason instanceof Error, "an ask rejects with an Error");
    }
  }
  const verdict = round.verdict();
  assert.ok(["complete", "input_required", "invalid"].includes(verdict.kind));
}

describe("fuzz: inputResponses and requestState", () => {
  test("arbitrary values never throw; a state not sealed here never opens (2 000 cases)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.anything(),
          fc.dictionary(
            fc.oneof(fc.constantFrom("k1", "elicit-2", "sample-3", "r", "elicit-5"), fc.string()),
            fc.anything(),
          ),
        ),
        fc.oneof(fc.anything(), fc.string(), fc.base64String()),
        async (inputResponses, requestState) => {
          const params = { inputResponses, requestState };
          const round = openInputRound(params, settings, binding, CAPABILITIES);
          if (requestState !== undefined) {
            assert.equal(typeof round, "string", "a state that was not sealed here is refused");
            return;
          }
          if (typeof round !== "string") await exercise(round);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  test("every mutation of a genuine state is refused (1 000 cases)", async () => {
    const first = openInputRound({}, settings, binding, CAPABILITIES) as InputRound;
    await first.elicit("name?", FORM, { key: "k1" }).catch((error) => {
      assert.ok(error instanceof InputPending);
    });
    const verdict = first.verdict();
    assert.equal(verdict.kind, "input_required");
    const state = JSON.parse((verdict as { json: string }).json).requestState as string;
    assert.ok(
      typeof openInputRound({ requestState: state }, settings, binding, CAPABILITIES) !== "string",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: state.length - 1 }),
        fc.string({ minLength: 1, maxLength: 3 }),
        fc.constantFrom("replace", "insert", "delete"),
        async (at, text, how) => {
          const mutated =
            how === "replace"
              ? state.slice(0, at) + text + state.slice(at + text.length)
              : how === "insert"
                ? state.slice(0, at) + text + state.slice(at)
                : state.slice(0, at) + state.slice(at + text.length);
          fc.pre(mutated !== state);
          const round = openInputRound({ requestState: mutated }, settings, binding, CAPABILITIES);
          assert.equal(typeof round, "string", `mutation ${how} at ${at} opened`);
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
