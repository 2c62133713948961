/**
 * MCP logging levels (RFC 5424 severities, MCP 2025-11-25 `server/utilities/logging`), in
 * increasing severity, so that a level's index is its rank for `logging/setLevel` filtering.
 *
 * @example
 * ```ts
 * import { isLoggingLevel, loggingLevelRank } from "./logging-levels.js";
 * isLoggingLevel("warning"); // true
 * loggingLevelRank("error") > loggingLevelRank("info"); // true
 * ```
 */
export const LOGGING_LEVELS = Object.freeze([
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const);

/** One MCP logging level. */
export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/**
 * Whether a value is one of the eight MCP logging levels.
 *
 * @example
 * ```ts
 * isLoggingLevel("info"); // true
 * isLoggingLevel("verbose"); // false
 * ```
 */
export function isLoggingLevel(value: unknown): value is LoggingLevel {
  return typeof value === "string" && (LOGGING_LEVELS as readonly string[]).includes(value);
}

/**
 * The rank of a level (0 = debug … 7 = emergency); a message is sent when its rank is at least
 * the rank of the level the client set.
 *
 * @example
 * ```ts
 * loggingLevelRank("debug"); // 0
 * ```
 */
export function loggingLevelRank(level: LoggingLevel): number {
  return (LOGGING_LEVELS as readonly string[]).indexOf(level);
}
