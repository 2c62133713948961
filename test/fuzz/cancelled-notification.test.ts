/**
 * Fuzz: arbitrary `notifications/cancelled` params and reasons while a call is in
 * flight in the fuzzer's own scope. Only an id naming that call may cancel it and leave a row;
 * every other input (objects, arrays, huge strings, unsafe integers, floats, control characters,
 * lone surrogates, invalid UTF-8) leaves the store empty and the call running. 2 500 cases.
 */
import { after, before, describe, test } from "node:test";

import { type FuzzTarget, fuzzCancelled, startFuzzTarget } from "../helpers/fuzz-properties.js";

describe("fuzz: notifications/cancelled", () => {
  let target: FuzzTarget;

  before(async () => {
    target = await startFuzzTarget();
  });

  after(async () => {
    await target.close();
  });

  test("no row for an id that is not the caller's in-flight call (2 500 cases)", async () => {
    await fuzzCancelled(target, 2_500);
  });
});
