/**
 * The asking half of a `ToolContext` for hand-made contexts in unit tests: every ask rejects as on
 * a request that cannot ask the client (a 2025-11-25 one), and no state is saved.
 */
import { CannotAskClientError } from "../../src/errors.js";
import type { ToolContext } from "../../src/protocol/calls/tool-context.js";

type Asking = Pick<
  ToolContext,
  "elicit" | "elicitUrl" | "sample" | "roots" | "savedState" | "saveState"
>;

const refuse = (): Promise<never> => Promise.reject(new CannotAskClientError());

export const noAsking: Asking = {
  elicit: refuse as ToolContext["elicit"],
  elicitUrl: refuse,
  sample: refuse,
  roots: refuse,
  savedState: undefined,
  saveState: () => {},
};
