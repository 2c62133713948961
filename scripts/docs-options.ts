/**
 * `npm run docs:options`: writes docs/reference/options.md and docs/reference/cli.md from the
 * declared option schemas and the CLI's flag table (scripts/lib/option-reference.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import {
  CLI_PAGE,
  OPTIONS_PAGE,
  renderCliPage,
  renderOptionsPage,
} from "./lib/option-reference.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const [page, text] of [
  [OPTIONS_PAGE, renderOptionsPage()],
  [CLI_PAGE, renderCliPage()],
] as const) {
  mkdirSync(dirname(join(root, page)), { recursive: true });
  writeFileSync(join(root, page), text);
  console.log(`wrote ${page}`);
}
