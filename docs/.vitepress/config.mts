/**
 * The documentation site (VitePress, https://vitepress.dev): `npm run docs:build` writes it to
 * docs/.vitepress/dist, `npm run docs:dev` serves it while editing. The pages are the Markdown
 * files of docs/, readable on their own; this file only adds navigation, search and the rule
 * below for links that leave docs/.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { type DefaultTheme, defineConfig, type MarkdownRenderer } from "vitepress";

const DOCS = dirname(dirname(fileURLToPath(import.meta.url)));

/** A sidebar entry for a page that may not exist yet (written by another step): left out until it does. */
function ifPage(text: string, page: string): DefaultTheme.SidebarItem[] {
  return existsSync(join(DOCS, `${page}.md`)) ? [{ text, link: `/${page}` }] : [];
}

/**
 * Links from a page to a file outside docs/ (`../src/…`, `../test/…`) work on a repository
 * browser but name nothing the site serves: on the site they become the path as plain text,
 * with the file named in a tooltip, rather than a link to a page that does not exist.
 */
function repositoryPaths(md: MarkdownRenderer): void {
  md.core.ruler.push("repository-paths", (state) => {
    const page = (state.env as { relativePath?: string }).relativePath ?? "";
    for (const block of state.tokens) {
      const children = block.type === "inline" ? block.children : null;
      if (children === null) continue;
      for (const [index, token] of children.entries()) {
        if (token.type !== "link_open") continue;
        const href = token.attrGet("href") ?? "";
        if (/^([a-z][a-z0-9+.-]*:|#|\/)/i.test(href)) continue;
        const target = posix.normalize(posix.join(posix.dirname(page), href));
        if (!target.startsWith("../")) continue;
        const close = children.slice(index + 1).find((t) => t.type === "link_close");
        if (close === undefined) continue;
        token.type = "html_inline";
        token.content = `<span class="repository-path" title="${md.utils.escapeHtml(target.slice(3))} in the repository">`;
        close.type = "html_inline";
        close.content = "</span>";
      }
    }
  });
}

const guide: DefaultTheme.SidebarItem[] = [
  { text: "Getting started", link: "/getting-started" },
  { text: "Tools", link: "/tools" },
  ...ifPage("Schemas: any library", "schemas"),
  { text: "Resources", link: "/resources" },
  { text: "Prompts", link: "/prompts" },
  { text: "Completions", link: "/completions" },
  { text: "Asking the client", link: "/asking-the-client" },
  { text: "Changing what is served", link: "/visibility" },
  { text: "Tasks", link: "/tasks" },
  { text: "Subscriptions", link: "/subscriptions" },
  ...ifPage("Extensions", "extensions"),
  ...ifPage("MCP Apps", "apps"),
  ...ifPage("Migrating from the official SDK", "migrating"),
];

const concepts: DefaultTheme.SidebarItem[] = [
  { text: "Cancellation and tenancy", link: "/cancellation" },
  { text: "What one client may hold", link: "/tenancy" },
  { text: "Two protocol eras", link: "/protocol-eras" },
  { text: "Errors and their codes", link: "/errors" },
];

const run: DefaultTheme.SidebarItem[] = [
  { text: "Hosting", link: "/hosting" },
  { text: "Runtimes", link: "/runtimes" },
  { text: "The CLI", link: "/cli" },
  { text: "Production auth", link: "/auth" },
  { text: "Limits", link: "/limits" },
  { text: "Many nodes on Redis", link: "/redis" },
  { text: "Deploy", link: "/deploy" },
  { text: "Load balancers", link: "/load-balancers" },
  { text: "Observability", link: "/observability" },
  { text: "OpenTelemetry tracing", link: "/tracing" },
];

const reference: DefaultTheme.SidebarItem[] = [
  { text: "Server options", link: "/server-options" },
  ...ifPage("Every option", "reference/options"),
  ...ifPage("Every CLI flag", "reference/cli"),
];

const inside: DefaultTheme.SidebarItem[] = [
  { text: "Architecture", link: "/architecture" },
  { text: "Benchmarks", link: "/benchmarks" },
  { text: "Profile", link: "/profile" },
  { text: "Soak", link: "/soak" },
  { text: "Tests and benchmarks", link: "/testing" },
];

/**
 * Pages of docs/ that no group above names yet (a page just added): listed under "More", so that
 * every page is reachable from the navigation until it gets its place.
 */
function unlisted(groups: DefaultTheme.SidebarItem[][]): DefaultTheme.SidebarItem[] {
  const listed = new Set(groups.flat().map((item) => item.link));
  return readdirSync(DOCS)
    .filter((file) => file.endsWith(".md") && file !== "index.md")
    .map((file) => `/${file.slice(0, -3)}`)
    .filter((link) => !listed.has(link))
    .sort()
    .map((link) => ({ text: titleOf(link), link }));
}

/** A page's first heading, for its sidebar entry. */
function titleOf(link: string): string {
  const text = readFileSync(join(DOCS, `${link}.md`), "utf8");
  return /^# (.+)$/m.exec(text)?.[1]?.replaceAll("`", "") ?? link.slice(1);
}

const more = unlisted([guide, concepts, run, reference, inside]);

// biome-ignore lint/style/noDefaultExport: VitePress reads its configuration from the default export.
export default defineConfig({
  title: "conduit-mcp",
  description:
    "MCP servers for Node.js with safe, tenant-scoped cancellation, on one process or many nodes.",
  cleanUrls: false,
  lastUpdated: false,
  markdown: {
    config: repositoryPaths,
    // HAProxy configuration has no grammar of its own in the highlighter: its INI-like one reads well.
    languageAlias: { haproxy: "ini" },
    // `{ … }` in prose (an options object's shape) is text, never markdown-it-attrs attributes.
    attrs: { disable: true },
  },
  head: [["link", { rel: "icon", href: "/logo.svg" }]],
  themeConfig: {
    logo: "/logo.svg",
    nav: [
      { text: "Guide", link: "/getting-started" },
      { text: "Run", link: "/hosting" },
      { text: "Reference", link: reference[1]?.link ?? "/server-options" },
      { text: "Benchmarks", link: "/benchmarks" },
    ],
    sidebar: [
      { text: "Guide", items: guide },
      { text: "Concepts", items: concepts },
      { text: "Run", items: run },
      { text: "Reference", items: reference },
      ...(more.length > 0 ? [{ text: "More", items: more }] : []),
      { text: "Inside", collapsed: true, items: inside },
    ],
    search: { provider: "local" },
    outline: { level: [2, 3] },
  },
});
