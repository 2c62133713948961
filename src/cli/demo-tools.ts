/**
 * The demo tools served by `conduit-mcp serve` (README, "Try it"). Each one shows one side of
 * cooperative cancellation, so a user can watch it work with any MCP client:
 *
 * - `echo {text}` — the trivial round trip (also what `npm run bench:http` measures);
 * - `sleep {ms}` — async work that honours `ctx.signal` and stops at once when cancelled;
 * - `count {to, intervalMs}` — one `notifications/progress` per step (sent when the client gave a
 *   progress token), stops between steps when cancelled;
 * - `crunch {ms}` — CPU-bound work in short slices, checking `ctx.cancelled()` between slices and
 *   yielding to the event loop so the cancel (a separate POST) can arrive at all;
 * - `stubborn {ms}` — ignores cancellation on purpose, to show the stream cancel timeout abandoning
 *   it (Node cannot kill a promise: the request is released and its result discarded; see
 *   README, "Try it");
 * - `stats {numbers}` — structured output: its `outputSchema` is published and the result's
 *   `structuredContent` is checked against it before it leaves;
 * - `confirm {action}` — asks the user yes/no (`ctx.elicit`) before it "acts";
 * - `ask-model {question}` — asks the client's model (`ctx.sample`) and returns its answer.
 *   Both ask through 2026-07-28 input-required results, or on a 2025-11-25 call through a
 *   request on the call's stream (docs/asking-the-client.md).
 * - `roll_dice {count, sides}` — an MCP App: its results render in the `ui://demo/dice.html`
 *   view, which rolls again by calling the tool back through the host (demo-app.ts).
 *
 * The demo's resources and prompt are in demo-resources.ts and demo-prompts.ts.
 *
 * Every argument is bounded by its zod schema, so a demo server cannot be asked to sleep for a year.
 */
import { setTimeout as delay, setImmediate as yieldToLoop } from "node:timers/promises";

import { z } from "zod";

import { CannotAskClientError } from "../errors.js";
import { defineTool, type Tool } from "../protocol/tools/index.js";
import { rollDiceTool } from "./demo-app.js";

/** Longest a demo tool (or `demo://sleep/{ms}`) may be asked to run: 10 minutes. */
export const MAX_DEMO_MS = 600_000;
/** Longest text `echo` accepts (the body limit would refuse far larger anyway). */
export const MAX_ECHO_CHARS = 100_000;
/** Most steps `count` accepts. */
export const MAX_COUNT_STEPS = 10_000;
/** Most numbers `stats` accepts. */
export const MAX_STATS_NUMBERS = 100_000;
/** Length of one `crunch` slice: short enough that a cancel is seen within a few milliseconds. */
export const CRUNCH_SLICE_MS = 5;

const duration = z.number().int().min(0).max(MAX_DEMO_MS).describe("milliseconds");

/**
 * `echo {text}` returns its text.
 *
 * @example
 * ```ts
 * createMcpServer({ tools: [echoTool] });
 * ```
 */
export const echoTool: Tool = defineTool({
  name: "echo",
  description: "Returns the text it is given.",
  input: z.object({ text: z.string().max(MAX_ECHO_CHARS) }),
  handler: ({ text }) => text,
});

/**
 * `sleep {ms}` waits `ms` milliseconds, returns `slept N ms`; cancellation ends the wait at once.
 *
 * @example
 * ```ts
 * // tools/call {"name":"sleep","arguments":{"ms":5000}} → "slept 5000 ms"
 * ```
 */
export const sleepTool: Tool = defineTool({
  name: "sleep",
  description: `Sleeps for ms milliseconds (at most ${MAX_DEMO_MS}); stops at once when cancelled.`,
  input: z.object({ ms: duration }),
  // May run as a task (docs/tasks.md): created, polled and cancelled without holding a request.
  task: "optional",
  handler: async ({ ms }, ctx) => {
    // Rejects with an AbortError as soon as the signal aborts, so nothing after it runs.
    await delay(ms, undefined, { signal: ctx.signal });
    return `slept ${ms} ms`;
  },
});

/**
 * `count {to, intervalMs}` counts from 1 to `to`, one step every `intervalMs`, reporting each step
 * as progress (`step/to`). The whole run is bounded like `sleep` (`to × intervalMs ≤ 10 min`).
 *
 * @example
 * ```ts
 * // tools/call {"name":"count","arguments":{"to":5,"intervalMs":100},"_meta":{"progressToken":1}}
 * // → 5 notifications/progress, then "counted to 5"
 * ```
 */
export const countTool: Tool = defineTool({
  name: "count",
  description:
    "Counts to `to`, one step every `intervalMs` ms, sending one progress notification per step.",
  input: z
    .object({
      to: z.number().int().min(1).max(MAX_COUNT_STEPS),
      intervalMs: duration.default(100),
    })
    .refine(({ to, intervalMs }) => to * intervalMs <= MAX_DEMO_MS, {
      message: `to × intervalMs must be at most ${MAX_DEMO_MS} ms`,
    }),
  // As a task, each step's progress becomes the task's status message.
  task: "optional",
  handler: async ({ to, intervalMs }, ctx) => {
    for (let step = 1; step <= to; step++) {
      await delay(intervalMs, undefined, { signal: ctx.signal });
      await ctx.progress(step, to, `step ${step} of ${to}`);
    }
    return `counted to ${to}`;
  },
});

/**
 * `crunch {ms}` keeps a CPU busy for `ms` milliseconds in {@link CRUNCH_SLICE_MS} slices. Between
 * slices it checks `ctx.cancelled()` and yields to the event loop: a synchronous loop would never
 * see a cancel, because the `notifications/cancelled` POST could not even be read.
 *
 * @example
 * ```ts
 * // tools/call {"name":"crunch","arguments":{"ms":2000}} → "crunched 2000 ms in 400 slices"
 * ```
 */
export const crunchTool: Tool = defineTool({
  name: "crunch",
  description: `Burns CPU for ms milliseconds (at most ${MAX_DEMO_MS}) in short slices, checking for cancellation between slices.`,
  input: z.object({ ms: duration }),
  // May run as a task (docs/tasks.md): created, polled and cancelled without holding a request.
  task: "optional",
  handler: async ({ ms }, ctx) => {
    const end = performance.now() + ms;
    let slices = 0;
    let accumulator = 0;
    while (performance.now() < end) {
      if (ctx.cancelled()) ctx.signal.throwIfAborted();
      const sliceEnd = Math.min(end, performance.now() + CRUNCH_SLICE_MS);
      while (performance.now() < sliceEnd) {
        for (let i = 0; i < 1_000; i++) accumulator = (Math.imul(accumulator, 31) + i) | 0;
      }
      slices++;
      await yieldToLoop();
    }
    // `accumulator` is reported only so the busy loop cannot be optimised away.
    return `crunched ${ms} ms in ${slices} slices (checksum ${accumulator >>> 0})`;
  },
});

/**
 * `stubborn {ms}` sleeps `ms` milliseconds and ignores cancellation entirely. Once cancelled, the
 * server waits `streamCancelTimeoutMs` and then abandons it (its result is never sent).
 *
 * @example
 * ```ts
 * // conduit-mcp serve --stream-cancel-timeout 200, then cancel a stubborn {ms: 5000} call
 * ```
 */
export const stubbornTool: Tool = defineTool({
  name: "stubborn",
  description: `Sleeps for ms milliseconds (at most ${MAX_DEMO_MS}) and ignores cancellation, to show the stream cancel timeout.`,
  input: z.object({ ms: duration }),
  handler: async ({ ms }) => {
    // Deliberately no signal: this is the badly behaved tool the timeout exists for.
    await delay(ms);
    return `stubbornly slept ${ms} ms`;
  },
});

/**
 * `stats {numbers}` returns count, sum, mean, median, min and max of its numbers, as
 * `structuredContent` matching its published `outputSchema` (and, for clients that only read
 * `content`, as JSON text). A sum that overflows to infinity fails the output schema and becomes
 * an `isError` result instead of invalid data.
 *
 * @example
 * ```ts
 * // tools/call {"name":"stats","arguments":{"numbers":[3,1,2]}}
 * // → structuredContent { count: 3, sum: 6, mean: 2, median: 2, min: 1, max: 3 }
 * ```
 */
export const statsTool: Tool = defineTool({
  name: "stats",
  title: "Statistics",
  description: "Count, sum, mean, median, min and max of a list of numbers.",
  input: z.object({ numbers: z.array(z.number()).min(1).max(MAX_STATS_NUMBERS) }),
  output: z.object({
    count: z.number().int().describe("how many numbers"),
    sum: z.number(),
    mean: z.number(),
    median: z.number(),
    min: z.number(),
    max: z.number(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ numbers }) => {
    const sorted = [...numbers].sort((a, b) => a - b);
    const count = sorted.length;
    const sum = sorted.reduce((total, n) => total + n, 0);
    const middle = Math.floor(count / 2);
    const median =
      count % 2 === 1
        ? (sorted[middle] as number)
        : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    return {
      count,
      sum,
      mean: sum / count,
      median,
      min: sorted[0] as number,
      max: sorted[count - 1] as number,
    };
  },
});

/** The yes/no form `confirm` shows (an elicitation's `requestedSchema`). */
const CONFIRM_FORM = {
  type: "object",
  properties: {
    confirm: { type: "boolean", title: "Confirm", description: "Yes to go ahead" },
  },
  required: ["confirm"],
} as const;

/**
 * `confirm {action}` asks the user "Do you want to <action>?" and only "acts" on a yes: a
 * 2026-07-28 call first answers `input_required` with the question, the client's retry carries
 * the answer; a 2025-11-25 call sends `elicitation/create` on its stream and waits for the
 * client's answer. Where the client cannot be asked, nothing is done and the result says why.
 *
 * @example
 * ```ts
 * // tools/call {"name":"confirm","arguments":{"action":"delete the draft"}}
 * // → input_required { inputRequests: { confirm: elicitation/create … }, requestState }
 * // retry with inputResponses { confirm: { action: "accept", content: { confirm: true } } }
 * // → "Done: delete the draft"
 * ```
 */
export const confirmTool: Tool = defineTool({
  name: "confirm",
  title: "Confirm, then act",
  description:
    "Asks the user to confirm an action (yes/no) before doing it; does nothing without a yes.",
  input: z.object({
    action: z.string().min(1).max(500).describe("what to do, e.g. 'delete the draft'"),
  }),
  handler: async ({ action }, ctx) => {
    try {
      const answer = await ctx.elicit(`Do you want to ${action}?`, CONFIRM_FORM, {
        key: "confirm",
      });
      if (answer.action === "accept" && answer.content.confirm === true) return `Done: ${action}`;
      return `Not done: ${action} (${answer.action === "accept" ? "the user said no" : `the user chose ${answer.action}`})`;
    } catch (error) {
      if (!(error instanceof CannotAskClientError)) throw error;
      return `Not done: ${action} (${error.message})`;
    }
  },
});

/** Longest question `ask-model` accepts. */
export const MAX_QUESTION_CHARS = 10_000;

/**
 * `ask-model {question}` asks the client's model (sampling) and returns its answer with the
 * model's name. Where the client cannot be asked, the result says so.
 *
 * @example
 * ```ts
 * // tools/call {"name":"ask-model","arguments":{"question":"Capital of France?"}}
 * // → input_required { inputRequests: { answer: sampling/createMessage … }, requestState }
 * ```
 */
export const askModelTool: Tool = defineTool({
  name: "ask-model",
  title: "Ask the client's model",
  description: "Asks the client's language model a question (MCP sampling) and returns the answer.",
  input: z.object({ question: z.string().min(1).max(MAX_QUESTION_CHARS) }),
  handler: async ({ question }, ctx) => {
    try {
      const answer = await ctx.sample(
        {
          messages: [{ role: "user", content: { type: "text", text: question } }],
          systemPrompt: "Answer briefly.",
          maxTokens: 500,
        },
        { key: "answer" },
      );
      const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
      const text = blocks
        .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
        .join("");
      return `${text} (model: ${answer.model})`;
    } catch (error) {
      if (!(error instanceof CannotAskClientError)) throw error;
      return `Cannot ask the model: ${error.message}`;
    }
  },
});

/**
 * The eight demo tools, in the order `tools/list` shows them.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ tools: demoTools });
 * ```
 */
export const demoTools: readonly Tool[] = Object.freeze([
  echoTool,
  sleepTool,
  countTool,
  crunchTool,
  stubbornTool,
  statsTool,
  confirmTool,
  askModelTool,
  rollDiceTool,
]);
