/**
 * Sealed requestState (src/protocol/asking/request-state.ts): opens only for the same method, name,
 * arguments and scope, before its expiry, under a known key; a tampered, truncated, oversized or
 * foreign token is refused with the same null; the token reveals nothing of its payload; keys
 * rotate (old states still open, new ones sealed under the new key).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";

import {
  argumentsDigest,
  RequestStateSealer,
  type StateBinding,
} from "../../src/protocol/asking/request-state.js";

const KEY_A = "a".repeat(32);
const KEY_B = randomBytes(32);
const BINDING: StateBinding = {
  method: "tools/call",
  name: "confirm",
  scope: "principal:alice",
  argumentsDigest: argumentsDigest({ action: "delete", target: "x" }),
};
const SECRET_ANSWER = "the-secret-answer-42";

function payload(exp: number) {
  return { exp, answers: { confirm: { action: "accept", content: { note: SECRET_ANSWER } } } };
}

describe("RequestStateSealer", () => {
  test("round trip under the same binding", () => {
    const sealer = new RequestStateSealer({ keys: [KEY_A] });
    const token = sealer.seal(payload(Date.now() + 60_000), BINDING);
    assert.ok(token !== null);
    const opened = sealer.open(token, BINDING);
    assert.ok(opened !== null);
    assert.deepEqual((opened.answers as Record<string, unknown>).confirm, {
      action: "accept",
      content: { note: SECRET_ANSWER },
    });
  });

  test("nothing of the payload is readable in the token (encrypted, not just signed)", () => {
    const sealer = new RequestStateSealer({ keys: [KEY_A] });
    const token = sealer.seal(payload(Date.now() + 60_000), BINDING) as string;
    const bytes = Buffer.from(token, "base64url").toString("latin1");
    assert.ok(!bytes.includes(SECRET_ANSWER));
    assert.ok(!bytes.includes("confirm"));
    assert.ok(!token.includes(BINDING.scope));
    // Two seals of the same payload differ (fresh IV).
    assert.notEqual(sealer.seal(payload(1e15), BINDING), sealer.seal(payload(1e15), BINDING));
  });

  test("refused when bound to anything else: other tenant, tool, method, arguments", () => {
    const sealer = new RequestStateSealer({ keys: [KEY_A] });
    const token = sealer.seal(payload(Date.now() + 60_000), BINDING) as string;
    assert.equal(sealer.open(token, { ...BINDING, scope: "principal:mallory" }), null);
    assert.equal(sealer.open(token, { ...BINDING, scope: "ip:127.0.0.1" }), null);
    assert.equal(sealer.open(token, { ...BINDING, name: "delete-everything" }), null);
    assert.equal(sealer.open(token, { ...BINDING, method: "prompts/get" }), null);
    assert.equal(
      sealer.open(token, {
        ...BINDING,
        argumentsDigest: argumentsDigest({ action: "delete", target: "y" }),
      }),
      null,
    );
    // Key order of the arguments does not matter.
    assert.ok(
      sealer.open(token, {
        ...BINDING,
        argumentsDigest: argumentsDigest({ target: "x", action: "delete" }),
      }),
    );
  });

  test("refused once expired (the clock decides, exp inside the ciphertext)", () => {
    let now = 1_000_000;
    const sealer = new RequestStateSealer({ keys: [KEY_A], now: () => now });
    const token = sealer.seal(payload(now + 5_000), BINDING) as string;
    now += 4_999;
    assert.ok(sealer.open(token, BINDING));
    now += 1;
    assert.equal(sealer.open(token, BINDING), null);
  });

  test("every single-bit flip, truncation or extension is refused", () => {
    const sealer = new RequestStateSealer({ keys: [KEY_A] });
    const token = sealer.seal(payload(Date.now() + 60_000), BINDING) as string;
    const bytes = Buffer.from(token, "base64url");
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0x01, 0x80]) {
        const flipped = Buffer.from(bytes);
        flipped[i] = (flipped[i] as number) ^ bit;
        assert.equal(sealer.open(flipped.toString("base64url"), BINDING), null, `byte ${i}`);
      }
    }
    assert.equal(sealer.open(token.slice(0, -1), BINDING), null);
    assert.equal(sealer.open(`${token}-TAMPERED`, BINDING), null);
    assert.equal(sealer.open(`${token}AA`, BINDING), null);
    // A last character differing only in base64's spare bits decodes to the same bytes: refused.
    // (Three payload sizes, so that the token's length leaves spare bits in two of them.)
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (const pad of ["", "x", "xx"]) {
      const padded = sealer.seal({ ...payload(Date.now() + 60_000), pad }, BINDING) as string;
      assert.ok(sealer.open(padded, BINDING));
      const last = alphabet.indexOf(padded.at(-1) as string);
      for (let other = 0; other < 64; other++) {
        if (other === last) continue;
        const variant = padded.slice(0, -1) + alphabet[other];
        assert.equal(
          sealer.open(variant, BINDING),
          null,
          `pad ${pad.length}, last ${alphabet[other]}`,
        );
      }
    }
    for (const junk of ["", "x", 42, null, {}, "!!!!", "AQ"]) {
      assert.equal(sealer.open(junk, BINDING), null);
    }
  });

  test("another server's key (no shared key) cannot open it", () => {
    const mine = new RequestStateSealer();
    const theirs = new RequestStateSealer();
    const token = mine.seal(payload(Date.now() + 60_000), BINDING) as string;
    assert.ok(mine.open(token, BINDING));
    assert.equal(theirs.open(token, BINDING), null);
  });

  test("key rotation: the first key seals, every listed key opens", () => {
    const old = new RequestStateSealer({ keys: [KEY_A] });
    const rotated = new RequestStateSealer({ keys: [KEY_B, KEY_A] });
    const retired = new RequestStateSealer({ keys: [KEY_B] });
    const before = old.seal(payload(Date.now() + 60_000), BINDING) as string;
    assert.ok(rotated.open(before, BINDING), "a state sealed before the rotation still opens");
    const after = rotated.seal(payload(Date.now() + 60_000), BINDING) as string;
    assert.ok(retired.open(after, BINDING), "sealed under the new key");
    assert.equal(old.open(after, BINDING), null);
    assert.equal(
      retired.open(before, BINDING),
      null,
      "once the old key is dropped, its states die",
    );
  });

  test("bounded: too long to seal → null; too long to open → null before any work", () => {
    const sealer = new RequestStateSealer({ keys: [KEY_A], maxStateBytes: 200 });
    assert.equal(sealer.seal({ exp: Date.now() + 1000, big: "x".repeat(500) }, BINDING), null);
    assert.equal(sealer.open("A".repeat(201), BINDING), null);
  });

  test("short keys are refused at construction", () => {
    assert.throws(() => new RequestStateSealer({ keys: ["short"] }), /at least 32 bytes/);
    assert.throws(() => new RequestStateSealer({ keys: [] }), /at least one key/);
  });
});
