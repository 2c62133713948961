/**
 * Test helpers for `subscriptions/listen` over raw HTTP: open a listen stream from a chosen local
 * address (127.0.0.2 is another client IP bucket, so another scope), read its SSE events as they
 * come, and hang up; and the headers of a raw 2025-era request.
 */
import { type ClientRequest, request as httpRequest, type IncomingMessage } from "node:http";

export const V = "2026-07-28";
let nextId = 1000;

/** One open (or refused) listen stream. */
export interface RawListen {
  readonly id: number;
  readonly status: number;
  readonly contentType: string;
  /** Parsed `data:` payloads so far, in order. */
  readonly messages: Record<string, unknown>[];
  /** Raw text so far (comments included). */
  text: string;
  /** Resolves when the server ended the response. */
  readonly ended: Promise<void>;
  /** The first message matching `match`, waiting at most `ms`. */
  next(
    match: (m: Record<string, unknown>) => boolean,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  /** Stops reading (the socket's buffers fill up: a slow client). */
  pause(): void;
  /** Hangs up. */
  close(): void;
  readonly response: IncomingMessage;
  readonly request: ClientRequest;
}

/** Opens `subscriptions/listen` with `notifications`; resolves once the response head arrived. */
export function openListen(
  url: string,
  notifications: unknown,
  options: {
    localAddress?: string;
    accept?: string;
    id?: number;
    /** Client capabilities in `_meta` (default none). */
    capabilities?: Record<string, unknown>;
    /** Extra request headers (credentials). */
    headers?: Record<string, string>;
  } = {},
): Promise<RawListen> {
  const id = options.id ?? nextId++;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "subscriptions/listen",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
      },
      notifications,
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        localAddress: options.localAddress,
        headers: {
          "content-type": "application/json",
          accept: options.accept ?? "application/json, text/event-stream",
          "mcp-protocol-version": V,
          "mcp-method": "subscriptions/listen",
          ...options.headers,
        },
      },
      (res) => {
        res.setEncoding("utf8");
        const waiters = new Set<() => void>();
        let buffer = "";
        const listen: RawListen = {
          id,
          status: res.statusCode ?? 0,
          contentType: String(res.headers["content-type"] ?? ""),
          messages: [],
          text: "",
          response: res,
          request: req,
          ended: new Promise<void>((done) => {
            res.on("end", () => done());
            res.on("close", () => done());
            res.on("error", () => done());
          }),
          async next(match, ms = 2_000) {
            const deadline = Date.now() + ms;
            for (;;) {
              const found = listen.messages.find(match);
              if (found !== undefined) return found;
              const left = deadline - Date.now();
              if (left <= 0) throw new Error(`no matching message within ${ms} ms: ${listen.text}`);
              await new Promise<void>((wake) => {
                const timer = setTimeout(wake, Math.min(left, 50));
                waiters.add(() => {
                  clearTimeout(timer);
                  wake();
                });
              });
            }
          },
          pause() {
            res.pause();
          },
          close() {
            req.destroy();
          },
        };
        res.on("data", (chunk: string) => {
          listen.text += chunk;
          buffer += chunk;
          if (listen.contentType.startsWith("application/json")) return;
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            for (const line of event.split("\n")) {
              if (line.startsWith("data: ")) listen.messages.push(JSON.parse(line.slice(6)));
            }
          }
          for (const wake of [...waiters]) wake();
          waiters.clear();
        });
        res.on("end", () => {
          if (listen.contentType.startsWith("application/json") && buffer.length > 0) {
            listen.messages.push(JSON.parse(buffer));
          }
        });
        resolve(listen);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The headers of a raw 2025-11-25 request, with the session's id when given. */
export function legacyHeaders(session?: string): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
  };
  if (session !== undefined) h["mcp-session-id"] = session;
  return h;
}

/** Polls `check` every 10 ms for at most `ms`. */
export async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
}
