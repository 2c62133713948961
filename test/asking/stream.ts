/**
 * Test helper for raw 2025-11-25 asks over HTTP: a call whose request-scoped SSE stream is read
 * message by message (the server's requests and notifications, then the response), a session
 * opener, and the POST of a client's response.
 */
import { rpc } from "../server/fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON-RPC messages as parsed
export type Message = any;

/** One call's stream: its messages as they arrive. */
export interface OpenCall {
  /** The next message matching `match`, or a rejection after `timeoutMs`. */
  next(match: (message: Message) => boolean, timeoutMs?: number): Promise<Message>;
  /** Every message seen so far. */
  readonly seen: Message[];
  /** Resolves once the stream ended (the server closed it, or the client aborted). */
  readonly ended: Promise<void>;
  /** Hangs up (the client goes away). */
  abort(): void;
}

/**
 * POSTs a request and reads its answer as a stream of JSON-RPC messages; with `body` null, opens
 * the session's GET stream instead (pass its session headers).
 */
export async function openCall(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<OpenCall> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: body === null ? "GET" : "POST",
    signal: controller.signal,
    headers: {
      ...(body === null ? {} : { "content-type": "application/json" }),
      accept: body === null ? "text/event-stream" : "application/json, text/event-stream",
      ...headers,
    },
    ...(body === null ? {} : { body: JSON.stringify(body) }),
  });
  const seen: Message[] = [];
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  let done = false;
  const ended = (async () => {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (let i = 0; i < 100_000; i++) {
        const { value, done: finished } = await reader.read();
        if (finished) break;
        buffer += decoder.decode(value, { stream: true });
        if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) continue;
        for (let cut = buffer.indexOf("\n\n"); cut !== -1; cut = buffer.indexOf("\n\n")) {
          const event = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          if (data !== "") seen.push(JSON.parse(data));
        }
        wake();
      }
      if ((response.headers.get("content-type") ?? "").startsWith("application/json")) {
        seen.push(JSON.parse(buffer));
      }
    } catch {
      // aborted
    } finally {
      done = true;
      wake();
    }
  })();
  return {
    seen,
    ended,
    abort: () => controller.abort(),
    next(match, timeoutMs = 5_000) {
      let from = 0;
      return new Promise((resolve, reject) => {
        const check = (): void => {
          for (; from < seen.length; from++) {
            if (match(seen[from])) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(seen[from]);
              return;
            }
          }
          if (done) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`stream ended without the message; seen ${JSON.stringify(seen)}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such message within ${timeoutMs} ms; seen ${JSON.stringify(seen)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

/** `initialize` with `capabilities`, then `notifications/initialized`; resolves the session id. */
export async function openSession(
  url: string,
  capabilities: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<string> {
  const init = await rpc(
    url,
    {
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities,
        clientInfo: { name: "t", version: "1" },
      },
    },
    headers,
  );
  const id = init.headers.get("mcp-session-id");
  if (id === null) throw new Error(`no session: ${init.status} ${init.text}`);
  await rpc(
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    sessionHeaders(id, headers),
  );
  return id;
}

/** The headers of a request in session `id`. */
export function sessionHeaders(
  id: string,
  headers: Record<string, string> = {},
): Record<string, string> {
  return { "mcp-session-id": id, "mcp-protocol-version": "2025-11-25", ...headers };
}

/** POSTs a client's JSON-RPC response; resolves the HTTP status and body text. */
export async function answer(
  url: string,
  id: unknown,
  payload: { result: unknown } | { error: unknown },
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const answered = await rpc(url, { jsonrpc: "2.0", id, ...payload }, headers);
  return { status: answered.status, text: answered.text };
}

/** Whether a message is a server request of `method`. */
export function isRequest(method: string): (message: Message) => boolean {
  return (message) => message?.method === method && message.id !== undefined;
}

/** Whether a message is the response to `id`. */
export function isResponseTo(id: unknown): (message: Message) => boolean {
  return (message) => message?.id === id && message.method === undefined;
}
