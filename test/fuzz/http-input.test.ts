/**
 * Fuzz: hostile bodies and header values against a real server on 127.0.0.1 over
 * keep-alive — never a crash, never an undocumented status or a 5xx, always a well-formed
 * JSON-RPC answer (or an empty 202/204, or a documented non-JSON-RPC status), no stored row.
 * About 7 500 cases here; `npm run fuzz` (scripts/fuzz.ts) runs the same properties longer.
 */
import { after, before, describe, test } from "node:test";

import {
  type FuzzTarget,
  fuzzHeaders,
  fuzzJsonBodies,
  fuzzRawBodies,
  fuzzRawHeaders,
  startFuzzTarget,
} from "../helpers/fuzz-properties.js";

describe("fuzz: HTTP input", () => {
  let target: FuzzTarget;

  before(async () => {
    target = await startFuzzTarget();
  });

  after(async () => {
    await target.close();
  });

  test("arbitrary JSON and JSON-RPC-shaped bodies, both eras (3 000 cases)", async () => {
    await fuzzJsonBodies(target, 3_000);
  });

  test("raw bytes, near-JSON and invalid UTF-8 bodies (1 500 cases)", async () => {
    await fuzzRawBodies(target, 1_500);
  });

  test("arbitrary legal values of the nine headers the endpoint reads (2 000 cases)", async () => {
    await fuzzHeaders(target, 2_000);
  });

  test("control characters, CR/LF and invalid UTF-8 in headers over raw sockets (1 000 cases)", async () => {
    await fuzzRawHeaders(target, 1_000);
  });
});
