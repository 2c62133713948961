import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  type CliParse,
  DEFAULT_HOST,
  DEFAULT_PORT,
  parseCli,
  type ServeCommand,
} from "../../src/cli/args.js";

function serve(argv: readonly string[]): ServeCommand {
  const parsed = parseCli(argv);
  assert.ok(parsed.ok, `expected ${JSON.stringify(argv)} to parse: ${JSON.stringify(parsed)}`);
  assert.equal(parsed.command.kind, "serve");
  return parsed.command as ServeCommand;
}

function problem(argv: readonly string[]): string {
  const parsed: CliParse = parseCli(argv);
  assert.equal(parsed.ok, false, `expected ${JSON.stringify(argv)} to be refused`);
  return (parsed as { message: string }).message;
}

describe("parseCli", () => {
  it("gives the documented defaults for a bare serve", () => {
    assert.deepEqual(serve(["serve"]), {
      kind: "serve",
      host: DEFAULT_HOST,
      port: DEFAULT_PORT,
      sessions: false,
      requireSession: false,
      tokens: {},
      metrics: false,
      stdio: false,
    });
    assert.equal(DEFAULT_HOST, "127.0.0.1");
    assert.equal(DEFAULT_PORT, 3000);
  });

  it("reads every flag", () => {
    const command = serve([
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--sessions",
      "--token",
      "alice=s3cret-0123456789",
      "--token",
      "bob=hunter2=x-0123456789",
      "--trust-proxy",
      "10.0.0.0/8,192.168.0.0/16",
      "--max-rows",
      "500",
      "--max-rows-per-scope",
      "infinity",
      "--stream-cancel-timeout",
      "200",
      "--close-grace",
      "0",
      "--metrics",
    ]);
    assert.deepEqual(command, {
      kind: "serve",
      host: "0.0.0.0",
      port: 0,
      sessions: true,
      requireSession: false,
      // The first "=" splits ID from SECRET; the secret may itself contain "=".
      tokens: { "s3cret-0123456789": "alice", "hunter2=x-0123456789": "bob" },
      trustProxy: "10.0.0.0/8,192.168.0.0/16",
      maxRows: 500,
      maxRowsPerScope: Number.POSITIVE_INFINITY,
      streamCancelTimeoutMs: 200,
      closeGraceMs: 0,
      metrics: true,
      stdio: false,
    });
  });

  it("passes a hop count as a number and accepts INFINITY in any case", () => {
    const command = serve(["serve", "--trust-proxy", "2", "--max-rows", "Infinity"]);
    assert.equal(command.trustProxy, 2);
    assert.equal(command.maxRows, Number.POSITIVE_INFINITY);
  });

  it("makes --require-session imply --sessions", () => {
    const command = serve(["serve", "--require-session"]);
    assert.equal(command.requireSession, true);
    assert.equal(command.sessions, true);
  });

  it("unbrackets an IPv6 host", () => {
    assert.equal(serve(["serve", "--host", "[::1]"]).host, "::1");
    assert.equal(serve(["serve", "--host", "::1"]).host, "::1");
  });

  it("recognises --help and --version anywhere", () => {
    assert.deepEqual(parseCli(["--help"]), { ok: true, command: { kind: "help" } });
    assert.deepEqual(parseCli(["serve", "-h"]), { ok: true, command: { kind: "help" } });
    assert.deepEqual(parseCli(["-v"]), { ok: true, command: { kind: "version" } });
  });

  it("refuses a missing, unknown or extra command", () => {
    assert.match(problem([]), /missing command/);
    assert.match(problem(["start"]), /unknown command "start"/);
    assert.match(problem(["serve", "mod.js", "now"]), /unexpected argument "now"/);
  });

  it("refuses unknown flags and flags without their value", () => {
    assert.match(problem(["serve", "--prot", "3000"]), /--prot/);
    assert.match(problem(["serve", "--port"]), /--port/);
    assert.match(problem(["serve", "--metrics=yes"]), /--metrics/);
  });

  it("refuses ports that are not integers from 0 to 65535", () => {
    for (const bad of ["65536", "3e3", "0x10", " 80", "", "80.5", "abc"]) {
      assert.match(
        problem(["serve", "--port", bad]),
        /--port must be an integer from 0 to 65535/,
        bad,
      );
    }
    assert.equal(serve(["serve", "--port", "65535"]).port, 65_535);
  });

  it("refuses row limits that are not positive integers or infinity", () => {
    for (const bad of ["0", "1.5", "inf", "many", ""]) {
      assert.match(
        problem(["serve", "--max-rows", bad]),
        /--max-rows must be a positive integer/,
        bad,
      );
      assert.match(
        problem(["serve", "--max-rows-per-scope", bad]),
        /--max-rows-per-scope must be a positive integer/,
        bad,
      );
    }
  });

  it("refuses timeouts that are not positive integers a timer can hold", () => {
    assert.match(problem(["serve", "--stream-cancel-timeout", "0"]), /--stream-cancel-timeout/);
    assert.match(
      problem(["serve", "--stream-cancel-timeout", "2147483648"]),
      /--stream-cancel-timeout/,
    );
    assert.match(problem(["serve", "--stream-cancel-timeout", "1s"]), /--stream-cancel-timeout/);
    assert.match(problem(["serve", "--close-grace=-1"]), /--close-grace must be an integer/);
  });

  it("refuses malformed tokens and a secret shared by two principals", () => {
    for (const bad of ["alice", "=secret", "alice=", ""]) {
      assert.match(problem(["serve", "--token", bad]), /--token must be ID=SECRET/, bad);
    }
    assert.match(problem(["serve", "--token", "alice=has space 0123456789"]), /visible ASCII/);
    assert.match(
      problem(["serve", "--token", "alice=same-0123456789ab", "--token", "bob=same-0123456789ab"]),
      /same SECRET is given for "alice" and "bob"/,
    );
    // A guessable secret is refused before anything listens (16 bytes at least).
    for (const short of ["eve=__proto__", "a=s", "a=fifteen-bytes"]) {
      assert.match(problem(["serve", "--token", short]), /at least 16 bytes/, short);
    }
    // Repeating the very same pair is harmless.
    assert.deepEqual(
      serve(["serve", "--token", "a=s-0123456789abcd", "--token", "a=s-0123456789abcd"]).tokens,
      { "s-0123456789abcd": "a" },
    );
  });

  it("refuses trust-proxy values the identity layer rejects", () => {
    for (const bad of ["yes", "10.0.0.0/33", "300.1.1.1", "true"]) {
      assert.match(problem(["serve", "--trust-proxy", bad]), /--trust-proxy must be/, bad);
    }
    assert.equal(serve(["serve", "--trust-proxy", "loopback"]).trustProxy, "loopback");
  });

  it("refuses an empty or malformed host", () => {
    for (const bad of ["", "[]", "a b", "http://x", "user@host"]) {
      assert.match(problem(["serve", "--host", bad]), /--host must be/, bad);
    }
  });

  it("bounds the user's value quoted back in a message", () => {
    const message = problem(["serve", "--port", "9".repeat(10_000)]);
    assert.ok(message.length < 200, message);
  });
});
