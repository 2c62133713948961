/**
 * A dependency-free SVG grouped bar chart for docs/benchmarks.md: one panel per metric (e.g.
 * requests/s, p99 ms), one bar per target, every bar labelled with its value and unit so it reads
 * at a glance without a legend.
 *
 * @example
 * ```ts
 * const svg = barChart("tools/call echo", ["conduit", "bare"], [
 *   { title: "requests/s (higher is better)", unit: "req/s", values: [9000, 12000] },
 * ]);
 * ```
 */

/** One metric panel. */
export interface ChartPanel {
  readonly title: string;
  /** Appended to each value label. */
  readonly unit: string;
  /** One value per target, in the order of the labels; NaN draws "n/a". */
  readonly values: readonly number[];
  /** Digits after the point in value labels. */
  readonly digits?: number;
}

const COLORS = ["#2f6fdf", "#4aa3df", "#e07b39", "#c9a227", "#7f7f7f", "#5bb05b"];

const escapeXml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * Renders the chart: panels side by side, horizontal bars (long target names stay readable).
 *
 * @example
 * ```ts
 * writeFileSync("docs/benchmarks.svg", barChart(title, labels, panels));
 * ```
 */
export function barChart(
  title: string,
  labels: readonly string[],
  panels: readonly ChartPanel[],
  subtitle = "",
): string {
  const labelWidth = 300;
  const panelWidth = 320;
  const barHeight = 22;
  const gap = 10;
  const top = subtitle === "" ? 50 : 68;
  const panelTitle = 24;
  const bodyHeight = labels.length * (barHeight + gap);
  const width = labelWidth + panels.length * (panelWidth + 20) + 10;
  const height = top + panelTitle + bodyHeight + 16;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="13">`,
    // The accessible name of the picture (screen readers, and Biome's a11y rule for SVG).
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="26" font-size="17" font-weight="600" fill="#222">${escapeXml(title)}</text>`,
  ];
  if (subtitle !== "") {
    out.push(`<text x="10" y="46" font-size="12" fill="#555">${escapeXml(subtitle)}</text>`);
  }
  labels.forEach((label, i) => {
    const y = top + panelTitle + i * (barHeight + gap) + barHeight / 2 + 4;
    out.push(
      `<text x="${labelWidth - 10}" y="${y}" text-anchor="end" fill="#222">${escapeXml(label)}</text>`,
    );
  });
  panels.forEach((panel, p) => {
    const x0 = labelWidth + p * (panelWidth + 20);
    const finite = panel.values.filter((v) => Number.isFinite(v));
    const max = Math.max(1e-9, ...finite);
    const room = panelWidth - 110; // space for the value label after the longest bar
    out.push(
      `<text x="${x0}" y="${top + 14}" font-weight="600" fill="#222">${escapeXml(panel.title)}</text>`,
      `<line x1="${x0}" y1="${top + panelTitle - 4}" x2="${x0}" y2="${top + panelTitle + bodyHeight - gap + 4}" stroke="#999"/>`,
    );
    panel.values.forEach((value, i) => {
      const y = top + panelTitle + i * (barHeight + gap);
      const w = Number.isFinite(value) ? Math.max(1, (value / max) * room) : 0;
      const text = Number.isFinite(value)
        ? `${value.toLocaleString("en-US", { maximumFractionDigits: panel.digits ?? 0, minimumFractionDigits: panel.digits ?? 0 })} ${panel.unit}`
        : "n/a";
      out.push(
        `<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${COLORS[i % COLORS.length]}" rx="2"/>`,
        `<text x="${(x0 + w + 6).toFixed(1)}" y="${y + barHeight / 2 + 4}" fill="#222">${escapeXml(text)}</text>`,
      );
    });
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
