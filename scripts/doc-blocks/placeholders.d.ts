/**
 * What the documentation's fragments leave to the reader: their own tools, helpers and data,
 * declared with the types the examples need, so that scripts/check-doc-blocks.ts can type-check
 * a fragment without the page spelling them out. Global declarations (this file is a script):
 * a block that defines one of these names itself shadows it.
 */

/** The tools of the reader's server (`createMcpServer({ tools })`). */
declare const tools: import("conduit-mcp").Tool[];
/** A server already made (fragments that change what it serves). */
declare const server: import("conduit-mcp").McpServer;
/** A tool handler (fragments about a definition's other fields). */
declare const handler: () => string;
/** A resource served by the reader's server. */
declare const config: import("conduit-mcp").Resource;
/** The reader's own code that changes that resource. */
declare function writeConfig(): Promise<void>;
/** The reader's file listing and reading, for a resource template. */
declare function listFiles(project: string | undefined, prefix: string): Promise<string[]>;
declare function readFile(project: string, name: string, signal: AbortSignal): Promise<string>;
/** What a client does when a list changed. */
declare function refreshTools(): void;
/** One step of a long build, for a task. */
declare function runStep(
  target: string,
  step: number,
  options: { signal: AbortSignal },
): Promise<void>;
/** An elicitation form asking who approves, and the deployment it approves. */
declare const APPROVAL_FORM: import("zod").ZodObject<{ approver: import("zod").ZodString }>;
declare function runDeploy(target: string, approver: string, signal: AbortSignal): Promise<string>;
/** A search the reader's tool runs, cancelled by the tool's signal. */
declare function fetchResults(query: string, options: { signal: AbortSignal }): Promise<string>;
