/**
 * The CLI's production-auth flags: `--oauth-*` parsed and checked before anything listens
 * (exit 2 on a bad value), `--token-file` (secrets out of the process list), `--metrics-auth`;
 * then a real `conduit-mcp serve` process with all of them against a local authorization server.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";
import { serveOptions } from "../../src/cli/serve.js";
import { MCP_HEADERS, runCli, startCli } from "../cli/cli-process.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
const IDP = [
  "--oauth-issuer",
  "https://idp.example.com/",
  "--oauth-jwks-url",
  "https://idp.example.com/jwks",
];

function serve(argv: string[]): ServeCommand {
  const parsed = parseCli(argv);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.message);
  assert.equal(parsed.command.kind, "serve");
  return parsed.command as ServeCommand;
}

function problem(argv: string[]): string {
  const parsed = parseCli(argv);
  assert.ok(!parsed.ok, `expected a usage problem for ${argv.join(" ")}`);
  return parsed.message;
}

describe("CLI: --oauth-*, --token-file and --metrics-auth parsing", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "conduit-oauth-cli-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("reads the oauth flags into auth.oauth; the audience defaults to the endpoint URL", () => {
    const command = serve([
      "serve",
      "--port",
      "8080",
      ...IDP,
      "--oauth-scopes",
      "mcp, files:read",
      "--oauth-authorization-server",
      "https://idp.example.com/",
      "--oauth-authorization-server",
      "https://backup-idp.example.com/",
    ]);
    assert.deepEqual(command.oauth, {
      issuer: "https://idp.example.com/",
      jwksUrl: "https://idp.example.com/jwks",
      scopes: ["mcp", "files:read"],
      authorizationServers: ["https://idp.example.com/", "https://backup-idp.example.com/"],
    });
    const options = serveOptions(command);
    assert.deepEqual(options.auth?.oauth, {
      issuer: "https://idp.example.com/",
      jwksUrl: "https://idp.example.com/jwks",
      scopes: ["mcp", "files:read"],
      resource: "http://127.0.0.1:8080/mcp",
      authorizationServers: ["https://idp.example.com/", "https://backup-idp.example.com/"],
    });
    const explicit = serveOptions(
      serve([
        "serve",
        "--host",
        "0.0.0.0",
        ...IDP,
        "--oauth-audience",
        "https://mcp.example.com/mcp",
      ]),
    );
    assert.equal(explicit.auth?.oauth?.resource, "https://mcp.example.com/mcp");
  });

  test("refuses bad oauth values before anything listens, without leaking secrets", () => {
    assert.match(problem(["serve", "--oauth-issuer", "https://idp.example.com/"]), /go together/);
    assert.match(problem(["serve", "--oauth-scopes", "mcp"]), /needs --oauth-issuer/);
    assert.match(
      problem(["serve", "--oauth-audience", "https://x.example/mcp"]),
      /needs --oauth-issuer/,
    );
    assert.match(
      problem([
        "serve",
        "--oauth-issuer",
        "http://idp.example.com/",
        "--oauth-jwks-url",
        "https://idp.example.com/jwks",
      ]),
      /--oauth-issuer must be an https URL/,
    );
    assert.match(
      problem(["serve", ...IDP.slice(0, 2), "--oauth-jwks-url", "http://idp.example.com/jwks"]),
      /--oauth-jwks-url must be an https URL/,
    );
    assert.match(
      problem(["serve", ...IDP, "--oauth-audience", "mcp.example.com"]),
      /--oauth-audience/,
    );
    assert.match(
      problem(["serve", ...IDP, "--oauth-audience", "https://m.example/mcp#f"]),
      /--oauth-audience/,
    );
    assert.match(problem(["serve", ...IDP, "--oauth-scopes", "a b"]), /--oauth-scopes/);
    assert.match(problem(["serve", ...IDP, "--oauth-scopes", ","]), /--oauth-scopes/);
    assert.match(
      problem(["serve", ...IDP, "--oauth-authorization-server", "http://10.0.0.1/"]),
      /--oauth-authorization-server/,
    );
    assert.match(problem(["serve", "--stdio", ...IDP]), /applies to HTTP only/);
    assert.match(problem(["serve", "--metrics-auth", ...IDP]), /needs --metrics/);
    assert.match(problem(["serve", "--metrics", "--metrics-auth"]), /needs --token/);
    assert.deepEqual(serve(["serve", "--metrics", "--metrics-auth", ...IDP]).metricsAuth, true);
  });

  test("--token-file: ID=SECRET lines, comments skipped, merged with --token; problems name the line only", async () => {
    const file = join(dir, "tokens");
    await writeFile(
      file,
      "# operators\nalice=alice-secret-0123456789\r\n\n  bob=bob-secret-0123456789  \n",
    );
    const command = serve([
      "serve",
      "--token-file",
      file,
      "--token",
      "carol=carol-secret-0123456789",
    ]);
    assert.deepEqual(command.tokens, {
      "alice-secret-0123456789": "alice",
      "bob-secret-0123456789": "bob",
      "carol-secret-0123456789": "carol",
    });
    const short = join(dir, "short");
    await writeFile(short, "alice=tooshort\n");
    const message = problem(["serve", "--token-file", short]);
    assert.match(message, /at least 16 bytes/);
    assert.doesNotMatch(message, /tooshort/);
    const broken = join(dir, "broken");
    await writeFile(broken, "alice=alice-secret-0123456789\nno-equals-sign-here-secret\n");
    const brokenMessage = problem(["serve", "--token-file", broken]);
    assert.match(brokenMessage, /line 2: expected ID=SECRET/);
    assert.doesNotMatch(brokenMessage, /no-equals/);
    assert.match(
      problem(["serve", "--token-file", join(dir, "absent")]),
      /cannot be read \(ENOENT\)/,
    );
    const empty = join(dir, "empty");
    await writeFile(empty, "# nothing\n");
    assert.match(problem(["serve", "--token-file", empty]), /no ID=SECRET line/);
  });
});

describe("CLI: conduit-mcp serve with OAuth, a token file and --metrics-auth", () => {
  let idp: TestIssuer;
  let dir: string;

  before(async () => {
    idp = await startIssuer();
    dir = await mkdtemp(join(tmpdir(), "conduit-oauth-serve-"));
  });
  after(async () => {
    await idp.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("serves metadata, challenges, JWT and file tokens; /metrics needs credentials", async () => {
    const file = join(dir, "tokens");
    await writeFile(file, "ops=ops-secret-0123456789abcdef\n");
    const cli = await startCli([
      "serve",
      "--port",
      "0",
      "--oauth-issuer",
      idp.issuer,
      "--oauth-jwks-url",
      idp.jwksUrl,
      "--oauth-scopes",
      "mcp",
      "--token-file",
      file,
      "--metrics",
      "--metrics-auth",
    ]);
    try {
      assert.ok(!cli.child.spawnargs.join(" ").includes("ops-secret"), "the secret is not in argv");
      const { url } = cli;
      const origin = new URL(url).origin;
      const post = (headers: Record<string, string> = {}) =>
        fetch(url, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: LIST });

      const anonymous = await post();
      assert.equal(anonymous.status, 401);
      assert.equal(
        anonymous.headers.get("www-authenticate"),
        `Bearer scope="mcp", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      );
      const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`);
      assert.deepEqual(await metadata.json(), {
        resource: url,
        authorization_servers: [idp.issuer],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
      });

      const jwt = await idp.sign({ sub: "alice", aud: url, scope: "mcp" });
      assert.equal((await post({ authorization: `Bearer ${jwt}` })).status, 200);
      assert.equal(
        (await post({ authorization: "Bearer ops-secret-0123456789abcdef" })).status,
        200,
      );

      const metricsUrl = `${origin}/metrics`;
      const noAuth = await fetch(metricsUrl);
      assert.equal(noAuth.status, 401);
      await noAuth.body?.cancel();
      const withAuth = await fetch(metricsUrl, { headers: { authorization: `Bearer ${jwt}` } });
      assert.equal(withAuth.status, 200);
      assert.match(await withAuth.text(), /conduit_mcp_in_flight_requests/);
    } finally {
      await cli.kill();
    }
  });

  test("a public --host without --oauth-audience exits 2 (the audience is never guessed)", async () => {
    const { exit, stderr } = await runCli([
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--oauth-issuer",
      idp.issuer,
      "--oauth-jwks-url",
      idp.jwksUrl,
    ]);
    assert.equal(exit.code, 2, stderr);
    assert.match(stderr, /auth\.oauth\.resource/);
  });
});
