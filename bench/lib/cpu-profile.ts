/**
 * Reads a V8 `.cpuprofile` (what `node --cpu-prof` writes) into the two views docs/profile.md
 * shows: the frames with the most self time, and a flame graph (SVG, drawn here from the
 * profile's call tree: one box per call-tree node, width proportional to its total time, callers
 * below callees).
 *
 * @example
 * ```ts
 * const profile = readCpuProfile("/tmp/prof/CPU.x.cpuprofile");
 * console.log(topSelfFrames(profile, 20));
 * writeFileSync("docs/profile.svg", flameGraph(profile, "tools/call"));
 * ```
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

/** A parsed profile: nodes by id, self time per node (µs), the root. */
export interface CpuProfile {
  readonly nodes: ReadonlyMap<number, ProfileNode>;
  readonly selfUs: ReadonlyMap<number, number>;
  readonly rootId: number;
  /** Total sampled time, µs. */
  readonly totalUs: number;
}

/**
 * Parses a `.cpuprofile`; self time comes from the samples and their time deltas.
 *
 * @example
 * ```ts
 * readCpuProfile(path).totalUs; // 10_000_000
 * ```
 */
export function readCpuProfile(path: string): CpuProfile {
  const raw = JSON.parse(readFileSync(path, "utf8")) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const nodes = new Map(raw.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  for (let i = 0; i < raw.samples.length; i++) {
    // The delta before sample i+1 is the time sample i stood for.
    const dt = Math.max(0, raw.timeDeltas[i + 1] ?? 0);
    const id = raw.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
    totalUs += dt;
  }
  return { nodes, selfUs, rootId: raw.nodes[0]?.id ?? 1, totalUs };
}

/** `name (file:line)`, with paths shortened to the project or the package. */
export function frameName(frame: CallFrame): string {
  const name = frame.functionName === "" ? "(anonymous)" : frame.functionName;
  if (frame.url === "") return name;
  let file = frame.url.replace(/^file:\/\//, "");
  const modules = file.lastIndexOf("node_modules/");
  if (modules >= 0) file = file.slice(modules + "node_modules/".length);
  else {
    const src = file.search(/\/(src|bench|test)\//);
    if (src >= 0) file = file.slice(src + 1);
  }
  return `${name} (${file}:${frame.lineNumber + 1})`;
}

/** Where a frame's code lives, for the table and the graph's colours. */
export function frameKind(frame: CallFrame): "conduit" | "node" | "package" | "vm" {
  // GC, (program), (idle) and V8 builtins such as JSON.parse carry no URL.
  if (frame.url === "") return "vm";
  if (frame.url.includes("/node_modules/")) return "package";
  if (frame.url.startsWith("node:")) return "node";
  return "conduit";
}

/** One row of the self-time table. */
export interface FrameRow {
  readonly name: string;
  readonly kind: ReturnType<typeof frameKind>;
  /** Share of all sampled time, 0–1. */
  readonly self: number;
}

/**
 * The `count` frames with the most self time, summed over every call-tree node of the same
 * function (name, file and line).
 *
 * @example
 * ```ts
 * topSelfFrames(profile, 25)[0]; // { name: "writev (node:internal/...)", kind: "node", self: 0.08 }
 * ```
 */
export function topSelfFrames(profile: CpuProfile, count: number): FrameRow[] {
  const byName = new Map<string, { kind: FrameRow["kind"]; us: number }>();
  for (const [id, us] of profile.selfUs) {
    const frame = profile.nodes.get(id)?.callFrame;
    if (frame === undefined) continue;
    const name = frameName(frame);
    const entry = byName.get(name) ?? { kind: frameKind(frame), us: 0 };
    entry.us += us;
    byName.set(name, entry);
  }
  return [...byName.entries()]
    .map(([name, e]) => ({ name, kind: e.kind, self: e.us / profile.totalUs }))
    .sort((a, b) => b.self - a.self)
    .slice(0, count);
}

/**
 * Share of sampled time spent under frames whose name matches, counted once per sample even
 * when the frame recurses (total, not self, time).
 *
 * @example
 * ```ts
 * totalShare(profile, (name) => name.includes("src/http/")); // 0.21
 * ```
 */
export function totalShare(profile: CpuProfile, match: (name: string) => boolean): number {
  let us = 0;
  const walk = (id: number, inside: boolean): void => {
    const node = profile.nodes.get(id);
    if (node === undefined) return;
    const here = inside || match(frameName(node.callFrame));
    if (here) us += profile.selfUs.get(id) ?? 0;
    for (const child of node.children ?? []) walk(child, here);
  };
  walk(profile.rootId, false);
  return us / profile.totalUs;
}

const COLORS: Record<ReturnType<typeof frameKind>, string> = {
  conduit: "#4a86e8",
  node: "#e69138",
  package: "#6aa84f",
  vm: "#999999",
};

const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * A flame graph of the whole profile as SVG: the root at the bottom, each callee above its
 * caller, box width proportional to total time; boxes narrower than 0.2 % of the width are
 * left out; every box has a `<title>` with its name and share (hover in a browser).
 *
 * @example
 * ```ts
 * writeFileSync("docs/profile-after.svg", flameGraph(profile, "conduit-mcp tools/call"));
 * ```
 */
export function flameGraph(profile: CpuProfile, title: string): string {
  const totals = new Map<number, number>();
  const total = (id: number): number => {
    const cached = totals.get(id);
    if (cached !== undefined) return cached;
    const node = profile.nodes.get(id);
    let us = profile.selfUs.get(id) ?? 0;
    for (const child of node?.children ?? []) us += total(child);
    totals.set(id, us);
    return us;
  };
  const width = 1200;
  const row = 16;
  const boxes: { x: number; depth: number; w: number; id: number }[] = [];
  let maxDepth = 0;
  const place = (id: number, x: number, depth: number): void => {
    const w = (total(id) / profile.totalUs) * width;
    if (w < width * 0.002) return;
    boxes.push({ x, depth, w, id });
    maxDepth = Math.max(maxDepth, depth);
    let cx = x;
    const children = [...(profile.nodes.get(id)?.children ?? [])].sort(
      (a, b) => total(b) - total(a),
    );
    for (const child of children) {
      place(child, cx, depth + 1);
      cx += (total(child) / profile.totalUs) * width;
    }
  };
  place(profile.rootId, 0, 0);
  const top = 40;
  const height = top + (maxDepth + 1) * row + 30;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="monospace" font-size="10">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="6" y="18" font-size="14" font-family="sans-serif" fill="#222">${escapeXml(title)}</text>`,
    `<text x="6" y="32" font-size="11" font-family="sans-serif" fill="#555">width = share of sampled CPU time; blue: conduit-mcp (src/), orange: Node.js internals, green: packages, grey: V8 (GC, program, idle)</text>`,
  ];
  for (const b of boxes) {
    const node = profile.nodes.get(b.id);
    if (node === undefined) continue;
    const name = frameName(node.callFrame);
    const share = ((total(b.id) / profile.totalUs) * 100).toFixed(1);
    const y = height - 20 - (b.depth + 1) * row;
    const chars = Math.floor((b.w - 4) / 6);
    const label = chars >= 4 ? (name.length > chars ? `${name.slice(0, chars - 1)}…` : name) : "";
    out.push(
      `<g><title>${escapeXml(`${name} — ${share} %`)}</title><rect x="${b.x.toFixed(1)}" y="${y}" width="${Math.max(0.5, b.w - 0.5).toFixed(1)}" height="${row - 1}" fill="${COLORS[frameKind(node.callFrame)]}" rx="1"/>${label === "" ? "" : `<text x="${(b.x + 2).toFixed(1)}" y="${y + row - 5}" fill="#111">${escapeXml(label)}</text>`}</g>`,
    );
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
