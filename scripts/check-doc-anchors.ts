/**
 * Every `#fragment` link of the built documentation site names an element that exists on its
 * page, and every relative link of README.md (which the site does not include) names a file of
 * the repository, and for a docs/ page with a fragment, a heading of that page. linkinator (the CI step's link checker) checks that every page and asset a link names
 * exists, and checks fragments only on links it meets before it has fetched their page; this
 * check covers all of them, by reading the built HTML.
 *
 *   node --import tsx scripts/check-doc-anchors.ts [docs/.vitepress/dist]
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const site = process.argv[2] ?? join(ROOT, "docs/.vitepress/dist");

const pages = readdirSync(site, { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".html"))
  .map((file) => file.split("\\").join("/"));

/** The ids of each page's elements, by the page's path in the site. */
const ids = new Map<string, Set<string>>();
const html = new Map<string, string>();
for (const page of pages) {
  const text = readFileSync(join(site, page), "utf8");
  html.set(page, text);
  ids.set(page, new Set([...text.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1] as string)));
}

const broken: string[] = [];
let checked = 0;
for (const [page, text] of html) {
  for (const match of text.matchAll(/\shref="([^"]*#[^"]*)"/g)) {
    const href = (match[1] as string).replaceAll("&amp;", "&");
    if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // another site
    const [path = "", fragment = ""] = href.split("#", 2);
    const target =
      path === ""
        ? page
        : path.startsWith("/")
          ? path.slice(1)
          : posix.normalize(posix.join(posix.dirname(page), path));
    const targetPage = target === "" ? "index.html" : target;
    const known = ids.get(targetPage);
    checked += 1;
    if (known === undefined) broken.push(`${page}: ${href} (no page ${targetPage})`);
    else if (fragment !== "" && !known.has(decodeURIComponent(fragment))) {
      broken.push(`${page}: ${href} (no #${fragment} on ${targetPage})`);
    }
  }
}
// README.md: links into the repository (`docs/x.md#y`, `CONTRIBUTING.md`, `examples/…`).
const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/```[\s\S]*?```/g, "");
for (const match of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
  const href = match[1] as string;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue;
  const [path = "", fragment = ""] = href.split("#", 2);
  checked += 1;
  if (path === "") {
    const slugs = [...readme.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1] as string));
    if (!slugs.includes(fragment)) broken.push(`README.md: ${href} (no such heading)`);
  } else if (!existsSync(join(ROOT, path))) broken.push(`README.md: ${href} (no file ${path})`);
  else if (fragment !== "" && path.startsWith("docs/") && path.endsWith(".md")) {
    const page = `${path.slice("docs/".length, -".md".length)}.html`;
    if (!ids.get(page)?.has(fragment))
      broken.push(`README.md: ${href} (no #${fragment} on ${page})`);
  }
}

if (broken.length > 0) {
  console.error(broken.join("\n"));
  console.error(`doc links: ${broken.length} of ${checked} links name nothing`);
  process.exit(1);
}
console.log(
  `doc links: ${checked} fragment links of the site and README links, on ${pages.length} pages, all name something`,
);

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
}
