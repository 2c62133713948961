/**
 * Fuzz oracle: what counts as a well-formed answer of the conduit-mcp endpoint to hostile input,
 * and two ways to send input — node:http over a keep-alive agent (for header
 * values Node's client may legally send) and a raw TCP socket (for everything else: control
 * characters, non-Latin-1 bytes, broken UTF-8 in headers).
 *
 * Documented answers (src/http/endpoint.ts, write-response.ts):
 * - 200 `application/json` (one JSON-RPC response object) or `text/event-stream` (notifications
 *   related to the request, then exactly one response, then the end of the stream);
 * - 202 / 204 with an empty body (accepted notification or response / session deleted);
 * - 400, 401, 403, 404, 405, 406, 408, 413, 415, 429 with a JSON-RPC error object (id null or the
 *   request's);
 * - 404 `text/plain` "Not found" for a path that is not the endpoint;
 * - 503 with a JSON-RPC error while shutting down or past the global bound on running requests;
 * - from Node's own HTTP parser: 431 for a head over the header size limit, and 400 for bytes
 *   that are not HTTP at all (raw sockets only), with an empty body and `Connection: close`.
 *
 * @example
 * ```ts
 * const answer = await rawExchange(port, Buffer.from("POST /mcp HTTP/1.1\r\n..."));
 * assert.equal(checkAnswer(answer, { raw: true }), null);
 * ```
 */
import { type Agent, request } from "node:http";
import net from "node:net";

/** One HTTP answer as received. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

const JSON_RPC_ERROR_STATUSES = new Set([400, 401, 403, 404, 405, 406, 408, 413, 415, 429, 503]);

/**
 * Returns why `answer` is not a documented answer of the endpoint, or null when it is one.
 *
 * @example
 * ```ts
 * checkAnswer({ status: 202, headers: {}, body: Buffer.alloc(0) }); // null
 * ```
 */
export function checkAnswer(answer: Answer, options: { raw?: boolean } = {}): string | null {
  const { status, body } = answer;
  const type = String(answer.headers["content-type"] ?? "");
  // 503 is documented for shutdown and for the global bound on running requests (with a
  // JSON-RPC body, checked below); every other 5xx is a failure.
  if (status >= 500 && status !== 503) return `status ${status} (5xx) body ${preview(body)}`;
  if (status === 202 || status === 204) {
    return body.length === 0 ? null : `status ${status} with a body ${preview(body)}`;
  }
  // Node's own parser refusing the head (never our listener): 431 for headers over
  // --max-http-header-size (16 KiB), and, for bytes that are not HTTP at all (raw sockets), 400.
  if (status === 431 && type === "" && body.length === 0) return null;
  if (options.raw === true && status === 400 && type === "" && body.length === 0) return null;
  if (status === 404 && type.startsWith("text/plain")) {
    return body.toString("latin1") === "Not found" ? null : `404 text body ${preview(body)}`;
  }
  if (status === 200 && type.startsWith("text/event-stream")) return checkEventStream(body);
  if (status !== 200 && !JSON_RPC_ERROR_STATUSES.has(status))
    return `undocumented status ${status}`;
  if (!type.startsWith("application/json")) return `status ${status} with content-type "${type}"`;
  const text = body.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(body)) return "answer is not valid UTF-8";
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return `unparsable JSON ${preview(body)}`;
  }
  const problem = checkResponse(message);
  if (problem !== null) return `${problem}: ${preview(body)}`;
  if (status !== 200 && !("error" in (message as object))) return `status ${status} with a result`;
  return null;
}

/**
 * Why `message` is not a single JSON-RPC 2.0 response object, or null.
 *
 * @example
 * ```ts
 * checkResponse({ jsonrpc: "2.0", id: 1, result: {} }); // null
 * ```
 */
export function checkResponse(message: unknown): string | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return "not a single object";
  }
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return "jsonrpc is not 2.0";
  if (!("id" in m)) return "no id";
  const id = m.id;
  // The MCP schema types RequestId as `string | number`; the endpoint echoes what it parsed
  // (floats and rounded unsafe integers included), so any finite number is accepted here.
  if (id !== null && typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) {
    return `bad id ${JSON.stringify(id)}`;
  }
  if ("result" in m === "error" in m) return "not exactly one of result/error";
  if ("error" in m) {
    const error = m.error as { code?: unknown; message?: unknown } | null;
    if (typeof error !== "object" || error === null) return "error is not an object";
    if (!Number.isInteger(error.code)) return "error.code is not an integer";
    if (typeof error.message !== "string") return "error.message is not a string";
  } else if (typeof m.result !== "object" || m.result === null) {
    return "result is not an object";
  }
  return null;
}

/** A request-scoped stream: notifications, then exactly one response, then nothing. */
function checkEventStream(body: Buffer): string | null {
  const text = body.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(body)) return "stream is not valid UTF-8";
  const blocks = text.split("\n\n");
  if (blocks.pop() !== "") return "stream does not end with a blank line";
  let responses = 0;
  for (const block of blocks) {
    const data = block
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data === "") continue; // comment (keep-alive) or a priming event
    if (responses > 0) return "an event after the response";
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      return `unparsable event ${data.slice(0, 80)}`;
    }
    if (
      typeof message === "object" &&
      message !== null &&
      "method" in message &&
      !("id" in message)
    ) {
      continue; // a notification related to the request
    }
    const problem = checkResponse(message);
    if (problem !== null) return `stream response: ${problem}`;
    responses++;
  }
  return responses === 1 ? null : `stream with ${responses} responses`;
}

function preview(body: Buffer): string {
  return JSON.stringify(body.subarray(0, 160).toString("latin1"));
}

/**
 * POSTs (or sends `method`) over a keep-alive agent; resolves the whole answer. Header values
 * must be ones Node's client accepts.
 *
 * @example
 * ```ts
 * const answer = await httpExchange(agent, url, { method: "POST", headers, body: "{}" });
 * ```
 */
export function httpExchange(
  agent: Agent,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    // Framed explicitly: node's client sends a GET/DELETE/OPTIONS body unframed otherwise, and
    // the server would rightly read those bytes as the next request.
    if (options.body !== undefined) headers["content-length"] = Buffer.byteLength(options.body);
    const req = request(url, { method: options.method ?? "POST", agent, headers });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/**
 * Sends raw bytes on a fresh TCP connection and reads the answer until the server closes it
 * (the bytes should carry `Connection: close`). Chunked bodies are decoded.
 *
 * @example
 * ```ts
 * const answer = await rawExchange(port, Buffer.from("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
 * ```
 */
export function rawExchange(port: number, bytes: Buffer, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`raw exchange: no end within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", () => {}); // a reset after the answer is fine; parsing decides
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseRawAnswer(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
    socket.end(bytes);
  });
}

/** Parses one HTTP/1.1 answer (status line, headers, a content-length or chunked body). */
export function parseRawAnswer(data: Buffer): Answer {
  const headEnd = data.indexOf("\r\n\r\n");
  if (headEnd === -1) throw new Error(`no complete answer head: ${preview(data)}`);
  const lines = data.subarray(0, headEnd).toString("latin1").split("\r\n");
  const statusLine = lines.shift() ?? "";
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (match === null) throw new Error(`bad status line ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(headEnd + 4);
  if (headers["transfer-encoding"] === "chunked") body = dechunk(body);
  else if (headers["content-length"] !== undefined)
    body = body.subarray(0, Number(headers["content-length"]));
  return { status: Number(match[1]), headers, body };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset);
    if (lineEnd === -1) throw new Error("truncated chunked body");
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size)) throw new Error("bad chunk size");
    if (size === 0) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * Builds raw request bytes: `POST <path>` with the given header lines (raw bytes allowed),
 * `Host`, `Content-Length` and `Connection: close`.
 *
 * @example
 * ```ts
 * rawRequest("/mcp", [Buffer.from("content-type: application/json")], Buffer.from("{}"));
 * ```
 */
export function rawRequest(path: string, headerLines: readonly Buffer[], body: Buffer): Buffer {
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-length: ${body.length}\r\n`,
    "latin1",
  );
  const parts: Buffer[] = [head];
  for (const line of headerLines) parts.push(line, Buffer.from("\r\n"));
  parts.push(Buffer.from("\r\n"), body);
  return Buffer.concat(parts);
}
