/**
 * What machine a benchmark ran on, and how busy it was: figures from a shared VM mean little
 * without the load average next to them.
 *
 * @example
 * ```ts
 * console.log(machineLine(), loadAverage());
 * ```
 */
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";

/**
 * `nproc × CPU model, platform arch, Node version`.
 *
 * @example
 * ```ts
 * machineLine(); // "2 × AMD EPYC 7B13, linux x64, Node v20.20.2"
 * ```
 */
export function machineLine(): string {
  let model: string | undefined;
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1];
  } catch {
    model = undefined;
  }
  return `${cpus().length} × ${model ?? cpus()[0]?.model ?? "unknown CPU"}, ${process.platform} ${process.arch}, Node ${process.version}`;
}

/**
 * The 1, 5 and 15-minute load averages, formatted.
 *
 * @example
 * ```ts
 * loadAverage(); // "1.92 / 1.50 / 1.20"
 * ```
 */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(" / ");
}
