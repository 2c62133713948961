import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

/**
 * Every .ts file under `dir` (declaration files left out), as paths relative to it with `/`
 * separators, in name order. The source walk of scripts/check-layers.ts and scripts/check-params.ts.
 */
export function sourceFiles(dir: string, base = dir): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) files.push(...sourceFiles(full, base));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) {
      files.push(relative(base, full).split(sep).join("/"));
    }
  }
  return files;
}
