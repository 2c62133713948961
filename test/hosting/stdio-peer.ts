/**
 * Test helper: a raw stdio peer of `serveStdio` over in-memory streams. It writes lines as a
 * client would and collects every line the server writes, so tests can assert on the exact
 * messages (and on their absence). Not a test file itself.
 */
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

import type { McpServer } from "../../src/server/index.js";
import { type StdioServing, serveStdio } from "../../src/server/index.js";

/** One message the server wrote, parsed. */
// biome-ignore lint/suspicious/noExplicitAny: test convenience
export type Line = any;

/** A connected raw peer. */
export interface StdioPeer {
  readonly serving: StdioServing;
  readonly stdin: PassThrough;
  readonly stdout: PassThrough;
  /** Every line written so far, parsed, in order. */
  readonly lines: Line[];
  /** Writes one message (an object, serialised on one line, or raw text sent as is). */
  send(message: unknown): void;
  /** Waits (at most `timeoutMs`) for a line matching `match`, and returns it. */
  next(match: (line: Line) => boolean, timeoutMs?: number): Promise<Line>;
  /** The response with this id, when it arrives. */
  response(id: unknown, timeoutMs?: number): Promise<Line>;
}

/**
 * Connects a peer to `server` through `serveStdio`.
 *
 * @example
 * ```ts
 * const peer = connectPeer(server);
 * peer.send({ jsonrpc: "2.0", id: 1, method: "ping" });
 * await peer.response(1);
 * ```
 */
export function connectPeer(server: McpServer): StdioPeer {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const serving = serveStdio(server, { stdin, stdout });
  const lines: Line[] = [];
  let pending = "";
  stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    for (let newline = pending.indexOf("\n"); newline !== -1; newline = pending.indexOf("\n")) {
      lines.push(JSON.parse(pending.slice(0, newline)));
      pending = pending.slice(newline + 1);
    }
  });
  const next = async (match: (line: Line) => boolean, timeoutMs = 5_000): Promise<Line> => {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = lines.find(match);
      if (found !== undefined) return found;
      if (performance.now() > deadline) {
        throw new Error(`no matching line within ${timeoutMs} ms; got ${JSON.stringify(lines)}`);
      }
      await sleep(2);
    }
  };
  return {
    serving,
    stdin,
    stdout,
    lines,
    send(message) {
      stdin.write(typeof message === "string" ? message : `${JSON.stringify(message)}\n`);
    },
    next,
    response: (id, timeoutMs) =>
      next((line) => line.id === id && ("result" in line || "error" in line), timeoutMs),
  };
}
