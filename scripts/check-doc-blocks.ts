/**
 * Type-checks every TypeScript code block of README.md and docs/ against the built package
 * (`dist/`: run `npm run build` first), so an example cannot drift from the API it shows.
 *
 * Each ```ts block becomes a module of its own in a temporary project whose `conduit-mcp` and
 * `conduit-mcp/redis` resolve to dist/ (every other package to this repository's node_modules),
 * checked by tsc in strict mode. A block may show only the lines that matter:
 *
 * - names the package exports (listed by the API reports etc/*.api.md) and `z` from zod that the
 *   block uses without importing them are imported for it;
 * - the reader's own things a fragment leaves undefined (`tools`, `runStep`, …) are declared,
 *   with their types, in scripts/doc-blocks/placeholders.d.ts.
 *
 * A block that cannot be checked opts out with a first line the reader sees:
 * `// not type-checked: <reason>`. Errors are reported at their line in the Markdown file.
 *
 *   node --import tsx scripts/check-doc-blocks.ts      (npm run docs:check)
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";

const ROOT = join(import.meta.dirname, "..");
const OPT_OUT = /^\/\/ not type-checked: \S/;

interface Block {
  /** The Markdown file, relative to the repository. */
  readonly file: string;
  /** Line of the block's first code line in that file (1-based). */
  readonly line: number;
  readonly code: string;
}

/** README.md and every Markdown page of docs/ (not the built site). */
function markdownFiles(): string[] {
  const pages = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md") && !file.startsWith(".vitepress"))
    .map((file) => join("docs", file))
    .sort();
  return ["README.md", ...pages];
}

/** The ```ts / ```typescript blocks of one file. */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(join(ROOT, file), "utf8").split("\n");
  const blocks: Block[] = [];
  let start = -1;
  let fence = "";
  for (const [index, line] of lines.entries()) {
    if (start < 0) {
      const open = /^(\s*)(```+)\s*(ts|typescript)\b/.exec(line);
      if (open !== null) {
        start = index + 1;
        fence = open[2] as string;
      } else if (/^\s*```/.test(line)) {
        // Another language's block: skip to its end so its content is never read as a fence.
        const other = /^(\s*)(```+)/.exec(line)?.[2] as string;
        const end = lines.findIndex((l, i) => i > index && l.trim() === other);
        if (end > index) lines.fill("", index + 1, end + 1);
      }
    } else if (line.trim() === fence) {
      blocks.push({ file, line: start + 1, code: lines.slice(start, index).join("\n") });
      start = -1;
    }
  }
  return blocks;
}

/** The names an API report exports. */
function exportedNames(report: string): Set<string> {
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

/** Names a block declares or imports itself. */
function ownNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(
    /\b(?:const|let|var|function|class|interface|type|enum)\s+(\w+)/g,
  )) {
    names.add(match[1] as string);
  }
  for (const match of code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of (match[1] as string).split(",")) {
      const name = part
        .replace(/^\s*type\s+/, "")
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  for (const match of code.matchAll(/import\s+(?:\*\s+as\s+)?(\w+)\s+from/g))
    names.add(match[1] as string);
  return names;
}

/** The import lines a block needs for the package's names (and zod's `z`) it uses but does not import. */
function missingImports(code: string, entries: ReadonlyMap<string, Set<string>>): string[] {
  const own = ownNames(code);
  // Identifiers outside strings and comments.
  const bare = code
    .replace(/\/\/.*$/gm, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(["'`])(?:\\.|(?!\1)[^\\])*\1/g, '""');
  const used = new Set(bare.match(/(?<![\w$.])[A-Za-z_$][\w$]*/g) ?? []);
  const lines: string[] = [];
  for (const [entry, names] of entries) {
    const wanted = [...names].filter((name) => used.has(name) && !own.has(name)).sort();
    if (wanted.length > 0) lines.push(`import { ${wanted.join(", ")} } from "${entry}";`);
  }
  if (used.has("z") && !own.has("z")) lines.push(`import { z } from "zod";`);
  return lines;
}

async function main(): Promise<void> {
  for (const built of ["dist/index.d.ts", "dist/redis/index.d.ts"]) {
    if (!existsSync(join(ROOT, built))) {
      console.error(`${built} is missing: run npm run build first`);
      process.exit(2);
    }
  }
  const entries = new Map([
    ["conduit-mcp", exportedNames("conduit-mcp.api.md")],
    ["conduit-mcp/redis", exportedNames("conduit-mcp-redis.api.md")],
  ]);
  const blocks = markdownFiles().flatMap(blocksOf);
  const checked = blocks.filter((block) => !OPT_OUT.test(block.code));
  const project = mkdtempSync(join(tmpdir(), "conduit-doc-blocks-"));
  try {
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"), "dir");
    /** Per generated file: its block and how many lines were put before the block's code. */
    const sources = new Map<string, { block: Block; offset: number }>();
    for (const [index, block] of checked.entries()) {
      const name = `block-${String(index).padStart(3, "0")}.ts`;
      const header = missingImports(block.code, entries);
      writeFileSync(join(project, name), `${[...header, block.code].join("\n")}\nexport {};\n`);
      sources.set(name, { block, offset: header.length });
    }
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          lib: ["ES2023", "DOM"],
          module: "ESNext",
          moduleResolution: "Bundler",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
          paths: {
            "conduit-mcp": [join(ROOT, "dist/index.d.ts")],
            "conduit-mcp/redis": [join(ROOT, "dist/redis/index.d.ts")],
          },
        },
        files: [join(ROOT, "scripts/doc-blocks/placeholders.d.ts"), ...sources.keys()],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const result = await promisify(execFile)(
      process.execPath,
      [tsc, "-p", project, "--pretty", "false"],
      {
        cwd: project,
        maxBuffer: 16 * 1024 * 1024,
      },
    ).then(
      () => ({ stdout: "", failed: false }),
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error), failed: true }),
    );
    // Each diagnostic at its Markdown line: `block-007.ts(12,5): error TS2304: …`.
    const report = result.stdout.replace(
      /^(block-\d+\.ts)\((\d+),(\d+)\)/gm,
      (whole, name: string, line: string) => {
        const source = sources.get(name);
        if (source === undefined) return whole;
        const at = source.block.line + Number(line) - 1 - source.offset;
        return `${source.block.file}:${at}`;
      },
    );
    const skipped = blocks.length - checked.length;
    if (result.failed) {
      console.error(report.trim());
      console.error(
        `doc blocks: tsc failed (${checked.length} blocks checked, ${skipped} opted out)`,
      );
      process.exit(1);
    }
    console.log(
      `doc blocks: ${checked.length} TypeScript blocks type-check against dist/ (${skipped} opted out)`,
    );
    for (const block of blocks.filter((b) => OPT_OUT.test(b.code))) {
      console.log(
        `  opted out: ${relative(ROOT, join(ROOT, block.file))}:${block.line} ${block.code.split("\n")[0]}`,
      );
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

await main();
