/**
 * A check the library may answer with a promise (a schema library that validates asynchronously)
 * taken as the synchronous answer a test expects: a zod schema validates synchronously, so the
 * common path costs no promise (src/protocol/wire/schema-adapter.ts). Fails the test otherwise.
 */
import assert from "node:assert/strict";

export function sync<T>(value: T | Promise<T>): T {
  assert.ok(!(value instanceof Promise), "expected a synchronous answer");
  return value as T;
}
