/**
 * The documentation imports only what the package exports: every `import { … } from
 * "conduit-mcp"` (or `"conduit-mcp/redis"`) in the README, docs/ and the `@example` blocks of
 * src/ names something the entry's API report (etc/*.api.md, written by `npm run api`) lists.
 * And the root entry keeps its internals to itself (no option defaults tables, no settings
 * after validation, no codecs, no channel objects).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const ROOT = join(import.meta.dirname, "..", "..");

/** The names an API report exports (`export function x`, `export interface X`, …). */
function reportedNames(report: string): Set<string> {
  const text = readFileSync(join(ROOT, "etc", report), "utf8");
  const names = new Set<string>();
  const declaration =
    /^export (?:declare )?(?:abstract )?(?:const|function|class|interface|type|enum|namespace) (\w+)/gm;
  for (const match of text.matchAll(declaration)) names.add(match[1] as string);
  for (const match of text.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of (match[1] as string).split(",")) {
      const name = part
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  return names;
}

function filesUnder(dir: string, extension: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(extension))
    .map((file) => join(dir, file));
}

interface PackageImport {
  readonly file: string;
  readonly line: number;
  readonly entry: string;
  readonly name: string;
}

/** Named imports from the package's entries in a file's text. */
function packageImports(file: string): PackageImport[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const found: PackageImport[] = [];
  const statement = /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"(conduit-mcp(?:\/redis)?)"/g;
  for (const match of text.matchAll(statement)) {
    const line = text.slice(0, match.index).split("\n").length;
    for (const part of (match[1] as string).split(",")) {
      const name = part
        .replace(/^\s*(?:\*\s*)?type\s+/, "")
        .replace(/\*/g, "")
        .trim()
        .split(/\s+as\s+/)[0];
      if (name) found.push({ file, line, entry: match[2] as string, name });
    }
  }
  return found;
}

describe("documentation imports", () => {
  const exported: Record<string, Set<string>> = {
    "conduit-mcp": reportedNames("conduit-mcp.api.md"),
    "conduit-mcp/redis": reportedNames("conduit-mcp-redis.api.md"),
  };

  it("reads both API reports", () => {
    assert.ok(exported["conduit-mcp"]?.has("createMcpServer"));
    assert.ok(exported["conduit-mcp/redis"]?.has("RedisCancellationStore"));
  });

  it("the README, docs/ and src/ examples import only exported names", () => {
    const files = [
      "README.md",
      "CONTRIBUTING.md",
      ...filesUnder("docs", ".md"),
      ...filesUnder("src", ".ts"),
    ];
    const imports = files.flatMap(packageImports);
    assert.ok(imports.length > 20, `found ${imports.length} imports of the package`);
    const missing = imports
      .filter((i) => !exported[i.entry]?.has(i.name))
      .map((i) => `${i.file}:${i.line}: ${i.name} is not exported by ${i.entry}`);
    assert.deepEqual(missing, []);
  });

  it("the root entry exports no internals", () => {
    const internal = [...(exported["conduit-mcp"] ?? [])].filter((name) =>
      /Settings$|Codec|^DEFAULTS$|_DEFAULTS$|^DEFAULT_|^channels$|^Resolved/.test(name),
    );
    assert.deepEqual(internal, []);
  });
});
