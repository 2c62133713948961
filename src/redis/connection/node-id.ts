/**
 * A node's id: the name under which a node holds its lease, owns its in-flight entries and tasks,
 * and signs what it publishes, so that it can tell its own messages from other nodes'.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

import { InvalidOptionError } from "../../errors.js";

/** What a node id may be: printable ASCII without spaces, 1 to 128 characters. */
export const NODE_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * A node id unique to this process: `<host>-<pid>-<random>`.
 *
 * @example
 * ```ts
 * defaultNodeId(); // "web-1-4242-1f0c9a2b"
 * ```
 */
export function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^\x21-\x7e]/g, "")
      .slice(0, 64) || "node";
  return `${host}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/**
 * The `nodeId` option of a store: the given id when it is a valid one, {@link defaultNodeId} when
 * it is absent; anything else throws {@link InvalidOptionError}.
 *
 * @example
 * ```ts
 * readNodeId(undefined); // "<host>-<pid>-<random>"
 * readNodeId("node a"); // throws: no spaces
 * ```
 */
export function readNodeId(value: unknown): string {
  const nodeId = value ?? defaultNodeId();
  if (typeof nodeId !== "string" || !NODE_ID.test(nodeId)) {
    throw new InvalidOptionError(
      "nodeId",
      "1 to 128 printable ASCII characters, no spaces",
      nodeId,
    );
  }
  return nodeId;
}
