/**
 * The Skills extension (io.modelcontextprotocol/skills, ext-skills specification/stable/skills.mdx)
 * over a real listening server: the official 2.x client's SkillsClient sees the declaration,
 * lists the skills, gets one by URI, reads and verifies SKILL.md (size, digest, frontmatter) and
 * a supporting file; an unknown skill is -32602; the demo server (`conduit-mcp serve`'s set)
 * serves its skill and declares the extension; definitions are checked at once.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";
import { serveOptions } from "../../src/cli/serve.js";
import { InvalidOptionError } from "../../src/errors.js";
import { defineSkill, SKILLS_EXTENSION, skillsExtension } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { rpc } from "../server/fixtures.js";

const V2026 = "2026-07-28";

const review = defineSkill({
  path: "acme/eng/code-review",
  frontmatter: {
    name: "code-review",
    description: "Review a change the team's way",
    license: "Apache-2.0",
    metadata: { version: "1.2.0", "io.example/tag": "x: y" },
  },
  body: "# Code review\n\nRead references/CHECKLIST.md first.\n",
  files: {
    "references/CHECKLIST.md": "- tests\n- names — and “quotes”\n",
    "assets/logo.bin": new Uint8Array([0, 1, 2, 255]),
  },
});
const plain = defineSkill({
  frontmatter: { name: "plain", description: "A skill with no prefix" },
  body: "Plain.\n",
});

describe("Skills extension (io.modelcontextprotocol/skills)", () => {
  let server: McpServer;
  let url: string;
  let client: Client;

  before(async () => {
    const skills = skillsExtension([review, plain], { pageSize: 1 });
    server = createMcpServer({
      name: "skills",
      version: "1.0.0",
      extensions: [skills.extension],
      resources: skills.resources,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
    client = new Client(
      { name: "skills-host", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: V2026 } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  });

  after(async () => {
    await client.close();
    await server.close();
  });

  test("definitions are checked at once", () => {
    const base = { frontmatter: { name: "ok", description: "d" }, body: "" };
    assert.throws(
      () => defineSkill({ ...base, frontmatter: { name: "Bad--Name", description: "d" } }),
      InvalidOptionError,
    );
    assert.throws(
      () => defineSkill({ ...base, frontmatter: { name: "ok", description: "" } }),
      InvalidOptionError,
    );
    // The final path segment must be the name ("Resource Mapping").
    assert.throws(() => defineSkill({ ...base, path: "acme/other" }), InvalidOptionError);
    assert.throws(() => defineSkill({ ...base, files: { "../x": "no" } }), InvalidOptionError);
    assert.throws(
      () => defineSkill({ ...base, files: { "big.bin": new Uint8Array(16 * 1024 * 1024 + 1) } }),
      InvalidOptionError,
    );
    assert.throws(() => skillsExtension([review, review]), InvalidOptionError);
  });

  test("the official SkillsClient lists (paged), gets and reads with verification", async () => {
    const capabilities = client.getServerCapabilities() as Record<string, unknown>;
    assert.deepEqual((capabilities.extensions as Record<string, unknown>)[SKILLS_EXTENSION], {});
    assert.ok(capabilities.resources !== undefined, "the resources capability is declared too");
    const skills = new SkillsClient(client);
    assert.equal(skills.supported, true);
    assert.equal(skills.directoryRead, false);
    const listing = await skills.list();
    assert.deepEqual(
      listing.skills.map((skill) => skill.uri),
      ["skill://acme/eng/code-review/SKILL.md", "skill://plain/SKILL.md"],
    );
    const entry = listing.skills[0];
    assert.ok(entry !== undefined);
    assert.deepEqual(entry.frontmatter, {
      name: "code-review",
      description: "Review a change the team's way",
      license: "Apache-2.0",
      metadata: { version: "1.2.0", "io.example/tag": "x: y" },
    });
    const got = await skills.get("skill://acme/eng/code-review/SKILL.md");
    assert.deepEqual(got.skill, entry);
    assert.equal(got.cacheScope, "public");
    const skillMd = await skills.read(entry);
    assert.equal(skillMd.verified, true);
    assert.deepEqual(skillMd.frontmatter, entry.frontmatter);
    assert.match(skillMd.body ?? "", /# Code review/);
    const checklist = await skills.read(entry, "references/CHECKLIST.md");
    assert.equal(checklist.verified, true);
    assert.equal(checklist.text, "- tests\n- names — and “quotes”\n");
    const logo = await skills.read(entry, "assets/logo.bin");
    assert.deepEqual([...logo.bytes], [0, 1, 2, 255]);
  });

  test("entries carry sha256 digests and sizes of the raw bytes", async () => {
    const skills = new SkillsClient(client);
    const { skill } = await skills.get("skill://acme/eng/code-review/SKILL.md");
    assert.ok(Array.isArray(skill.resources));
    const checklist = skill.resources.find((r) => r.uri.endsWith("CHECKLIST.md"));
    const bytes = Buffer.from("- tests\n- names — and “quotes”\n", "utf8");
    assert.equal(checklist?.size, bytes.byteLength);
    assert.equal(checklist?.digest, `sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    assert.equal(skill.resources.length, 3);
  });

  test("skills/get of an unknown skill is -32602; a forged cursor is refused", async () => {
    const headers = { "mcp-protocol-version": V2026, "mcp-method": "skills/get" };
    const meta = {
      "io.modelcontextprotocol/protocolVersion": V2026,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const unknown = await rpc(
      url,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "skills/get",
        params: { uri: "skill://nope/SKILL.md", _meta: meta },
      },
      headers,
    );
    assert.equal((unknown.json as { error: { code: number } }).error.code, -32602);
    assert.doesNotMatch(unknown.text, /nope/, "the client's URI is not reflected");
    const forged = await rpc(
      url,
      { jsonrpc: "2.0", id: 2, method: "skills/list", params: { cursor: "o:999999", _meta: meta } },
      { ...headers, "mcp-method": "skills/list" },
    );
    assert.equal((forged.json as { error: { code: number } }).error.code, -32602);
  });

  test("the demo server serves its skill and declares the extension", async () => {
    const parsed = parseCli(["serve", "--port", "0"], {});
    assert.ok(parsed.ok && parsed.command.kind === "serve");
    const demo = createMcpServer(serveOptions(parsed.command as ServeCommand));
    const address = await demo.listen({ host: "127.0.0.1", port: 0 });
    const host = new Client(
      { name: "demo-host", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: V2026 } } },
    );
    try {
      await host.connect(new StreamableHTTPClientTransport(new URL(address.url)));
      const skills = new SkillsClient(host);
      assert.equal(skills.supported, true);
      const { skills: entries } = await skills.list();
      const dice = entries.find((skill) => skill.frontmatter.name === "roll-dice");
      assert.ok(dice !== undefined, "the demo lists roll-dice");
      const file = await skills.read(dice);
      assert.equal(file.verified, true);
      assert.match(file.body ?? "", /roll_dice/);
      const notation = await skills.read(dice, "references/NOTATION.md");
      assert.equal(notation.verified, true);
    } finally {
      await host.close();
      await demo.close();
    }
  });
});
