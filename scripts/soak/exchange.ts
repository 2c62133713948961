/**
 * One HTTP exchange with a node, read to its very end and described without judging it: every
 * JSON-RPC response it carried (one JSON body, or each response event of an SSE stream), events
 * after the first response, progress events, and how the connection ended (cleanly, refused,
 * reset or cut mid-answer, or destroyed by the driver itself). The driver judges it afterwards,
 * against the chaos timeline.
 */
import { Agent, request } from "node:http";

import { takeSseEvents } from "./answer.js";

/** How an exchange's transport ended. */
export type Ending =
  /** The answer was read to its end. */
  | "complete"
  /** Nothing was listening (ECONNREFUSED): the node was down. */
  | "refused"
  /** The connection broke before or during the answer (reset, hang-up, stream cut). */
  | "broken"
  /** The driver destroyed the request on purpose (a disconnect, or the hang bound). */
  | "destroyed";

export interface Exchange {
  status: number;
  /** JSON-RPC responses (objects with an id and no method), in order. */
  readonly responses: unknown[];
  /** Events after the first response (a second answer on one stream is a violation). */
  afterResponse: number;
  sse: boolean;
  ending: Ending;
  /** A transport or parse problem, for the report. */
  problem: string | null;
  /** The response headers that matter to the driver. */
  sessionId: string | null;
  readonly sentAt: number;
  endedAt: number;
}

/** A running exchange: its result, and a way to cut it. */
export interface Running {
  readonly done: Promise<Exchange>;
  /** Destroys the request (a client disconnect). */
  destroy(): void;
}

/** Connection per request: after a SIGKILL no pooled socket can carry a stale request. */
export const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/** What an exchange tells as SSE events arrive. */
export interface ExchangeHooks {
  /** Each `notifications/progress` event (the first says the call runs on the node). */
  readonly progress?: () => void;
  /** Each other message that is not a response (a server request, a notification). */
  readonly message?: (message: Record<string, unknown>) => void;
}

/**
 * Sends one request. `onProgress` is called for each `notifications/progress` event of an SSE
 * answer (the first one says the call is tracked and running on the node); hooks may also hear
 * the server's requests and other notifications.
 */
export function exchange(
  url: string,
  method: "POST" | "DELETE",
  headers: Record<string, string>,
  body: string | null,
  onProgress: (() => void) | ExchangeHooks = () => {},
): Running {
  const hooks: ExchangeHooks =
    typeof onProgress === "function" ? { progress: onProgress } : onProgress;
  const got: Exchange = {
    status: 0,
    responses: [],
    afterResponse: 0,
    sse: false,
    ending: "complete",
    problem: null,
    sessionId: null,
    sentAt: performance.now(),
    endedAt: 0,
  };
  let destroyed = false;
  let finish!: (value: Exchange) => void;
  const done = new Promise<Exchange>((resolve) => {
    finish = resolve;
  });
  let settled = false;
  const settle = (ending: Ending, problem: string | null): void => {
    if (settled) return;
    settled = true;
    got.ending = destroyed ? "destroyed" : ending;
    if (got.problem === null && !destroyed) got.problem = problem;
    got.endedAt = performance.now();
    finish(got);
  };
  const allHeaders: Record<string, string | number> = { ...headers };
  if (body !== null) allHeaders["content-length"] = Buffer.byteLength(body);
  const req = request(url, { method, agent, headers: allHeaders });
  req.on("response", (res) => {
    got.status = res.statusCode ?? 0;
    const session = res.headers["mcp-session-id"];
    if (typeof session === "string") got.sessionId = session;
    res.setEncoding("utf8");
    const sse = (res.headers["content-type"] ?? "").startsWith("text/event-stream");
    got.sse = sse;
    let buffer = "";
    res.on("data", (chunk: string) => {
      buffer += chunk;
      if (!sse) return;
      const taken = takeSseEvents(buffer);
      buffer = taken.rest;
      for (const data of taken.events) {
        if (data === "") continue; // a keep-alive comment
        let message: unknown;
        try {
          message = JSON.parse(data);
        } catch {
          got.problem = `unparsable SSE data ${data.slice(0, 80)}`;
          continue;
        }
        if (got.responses.length > 0) got.afterResponse++;
        const m = message as { id?: unknown; method?: unknown };
        if (typeof m === "object" && m !== null && "id" in m && !("method" in m)) {
          got.responses.push(message);
        } else if (m?.method === "notifications/progress") {
          hooks.progress?.();
        } else if (typeof m === "object" && m !== null) {
          hooks.message?.(m as Record<string, unknown>);
        }
      }
    });
    res.on("end", () => {
      if (sse) {
        if (buffer.trim() !== "") got.problem = "SSE stream ended mid-event";
      } else if (buffer !== "") {
        try {
          got.responses.push(JSON.parse(buffer));
        } catch {
          got.problem = `unparsable JSON body ${buffer.slice(0, 80)}`;
        }
      }
      settle("complete", null);
    });
    res.on("aborted", () => settle("broken", "response aborted"));
    res.on("error", (error) => settle("broken", `response error: ${error.message}`));
    res.on("close", () => settle("broken", "response closed before its end"));
  });
  req.on("error", (error) => {
    const code = (error as NodeJS.ErrnoException).code;
    settle(code === "ECONNREFUSED" ? "refused" : "broken", `${code ?? ""} ${error.message}`);
  });
  req.end(body ?? undefined);
  return {
    done,
    destroy() {
      if (settled) return;
      destroyed = true;
      req.destroy();
      settle("destroyed", null);
    },
  };
}
