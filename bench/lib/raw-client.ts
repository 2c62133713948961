/**
 * The lean load side of the scale benchmarks (bench/scale-*.ts): a child process (spawned pinned
 * with `taskset` to the CPU the server does not use) that speaks HTTP/1.1 over raw `node:net`
 * sockets, each bound to a chosen loopback source address (127.0.x.y: one tenant each, the
 * server's per-address buckets), with no HTTP client library in its path. Driven by its parent
 * over the IPC channel, one command at a time; every answer is `{ ok: true, ... }` or
 * `{ ok: false, error }`. Times are `performance.timeOrigin + performance.now()`, comparable
 * with the server process's.
 *
 * Commands: `hold` (open `count` calls and keep them open), `cancel` (cancel call `index`: a
 * 2025-era `notifications/cancelled` POST from the same address, or a 2026-07-28 disconnect),
 * `listen` (open `count` change streams: 2026-07-28 `subscriptions/listen`, or 2025 sessions with
 * a `resources/subscribe` and a GET stream), `arm` / `deliveries` (the time each stream received
 * `notifications/resources/updated`), `initialize` (`count` 2025 `initialize` POSTs over
 * `concurrency` keep-alive connections), `closeAll`.
 */
import net from "node:net";
import { performance } from "node:perf_hooks";

const now = (): number => performance.timeOrigin + performance.now();
const V2025 = "2025-11-25";
const V2026 = "2026-07-28";

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One keep-alive connection with a tiny response parser (Content-Length or SSE head only). */
class Conn {
  readonly socket: net.Socket;
  private buffer = "";
  private waiting: {
    resolve: (r: Reply) => void;
    reject: (e: Error) => void;
    head: boolean;
  } | null = null;
  /** Called with every chunk once the connection is a stream. */
  onStream: ((chunk: string) => void) | null = null;
  ended = false;

  constructor(
    port: number,
    readonly address: string,
  ) {
    this.socket = net.connect({ host: "127.0.0.1", port, localAddress: address });
    this.socket.setEncoding("latin1");
    this.socket.on("data", (chunk: string) => this.data(chunk));
    this.socket.on("error", () => {});
    this.socket.on("close", () => {
      this.ended = true;
      this.waiting?.reject(new Error(`connection from ${address} closed`));
      this.waiting = null;
    });
  }

  /** Sends a request; resolves with the answer (with `head`: once the head of a stream is in). */
  request(text: string, head = false): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, head };
      this.socket.write(text);
    });
  }

  private data(chunk: string): void {
    if (this.onStream !== null) {
      this.onStream(chunk);
      return;
    }
    if (this.waiting === null) return;
    this.buffer += chunk;
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end === -1) return;
    const lines = this.buffer.slice(0, end).split("\r\n");
    const status = Number((lines[0] ?? "").split(" ")[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const rest = this.buffer.slice(end + 4);
    const waiting = this.waiting;
    if (waiting.head || headers["content-type"]?.startsWith("text/event-stream")) {
      this.buffer = "";
      this.waiting = null;
      waiting.resolve({ status, headers, body: rest });
      return;
    }
    if (headers["transfer-encoding"] === "chunked") {
      // Small answers only: wait for the last chunk, then join the chunks.
      let at = 0;
      let text = "";
      for (;;) {
        const eol = rest.indexOf("\r\n", at);
        if (eol === -1) return;
        const size = Number.parseInt(rest.slice(at, eol), 16);
        if (rest.length < eol + 2 + size + 2) return;
        text += rest.slice(eol + 2, eol + 2 + size);
        at = eol + 2 + size + 2;
        if (size === 0) break;
      }
      this.buffer = rest.slice(at);
      this.waiting = null;
      waiting.resolve({ status, headers, body: text });
      return;
    }
    const length = Number(headers["content-length"] ?? "0");
    if (Buffer.byteLength(rest, "latin1") < length) return;
    this.buffer = rest.slice(length);
    this.waiting = null;
    waiting.resolve({ status, headers, body: rest.slice(0, length) });
  }
}

function post(port: number, body: string, headers: Record<string, string> = {}): string {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const meta2026 = {
  "io.modelcontextprotocol/protocolVersion": V2026,
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A call held open, and how to cancel it. */
interface Held {
  conn: Conn;
  id: number;
  era: "2025" | "2026";
}

let held: Held[] = [];
let streams: { conn: Conn; at: number | null }[] = [];
let port = 0;
let armed = false;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `task(i)` for i < count with at most `width` at a time. */
async function pool(count: number, width: number, task: (i: number) => Promise<void>) {
  let next = 0;
  let failure: Error | null = null;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count && failure === null) {
        const i = next++;
        try {
          await task(i);
        } catch (error) {
          failure = error as Error;
        }
      }
    }),
  );
  if (failure !== null) throw failure;
}

async function hold(msg: {
  count: number;
  era: "2025" | "2026";
  addresses: string[];
  sleepMs: number;
}): Promise<Record<string, unknown>> {
  const base = held.length;
  for (let i = 0; i < msg.count; i++) {
    const address = msg.addresses[i % msg.addresses.length] as string;
    const conn = new Conn(port, address);
    const id = base + i + 1;
    const args = { ms: msg.sleepMs, key: `k${id}` };
    const text =
      msg.era === "2025"
        ? post(
            port,
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name: "sleep", arguments: args, _meta: { progressToken: id } },
            }),
            { "MCP-Protocol-Version": V2025 },
          )
        : post(
            port,
            JSON.stringify({
              jsonrpc: "2.0",
              id,
              method: "tools/call",
              params: { name: "sleep", arguments: args, _meta: meta2026 },
            }),
            { "MCP-Protocol-Version": V2026, "Mcp-Method": "tools/call", "Mcp-Name": "sleep" },
          );
    conn.socket.write(text);
    held.push({ conn, id, era: msg.era });
    // Spread the connects so the listen backlog never overflows.
    if (i % 250 === 249) await pause(15);
  }
  return { opened: msg.count };
}

async function cancel(msg: { index: number }): Promise<Record<string, unknown>> {
  const call = held[msg.index];
  if (call === undefined) throw new Error(`no held call ${msg.index}`);
  const key = `k${call.id}`;
  if (call.era === "2026") {
    const at = now();
    call.conn.socket.destroy();
    return { at, key };
  }
  // From the call's own address (its scope), on a fresh connection as a client's second request.
  const conn = new Conn(port, call.conn.address);
  await new Promise((resolve) => conn.socket.once("connect", resolve));
  const text = post(
    port,
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: call.id, reason: "bench" },
    }),
    { "MCP-Protocol-Version": V2025, "x-bench-cancel": key },
  );
  const at = now();
  const reply = await conn.request(text);
  conn.socket.destroy();
  if (reply.status !== 202) throw new Error(`cancel answered ${reply.status} ${reply.body}`);
  return { at, key };
}

async function listen(msg: {
  count: number;
  era: "2025" | "2026";
  addresses: string[];
  width: number;
}): Promise<Record<string, unknown>> {
  const start = streams.length;
  await pool(msg.count, msg.width, async (i) => {
    const address = msg.addresses[i % msg.addresses.length] as string;
    const id = start + i + 1;
    const entry: { conn: Conn; at: number | null } = { conn: new Conn(port, address), at: null };
    if (msg.era === "2026") {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { _meta: meta2026, notifications: { resourceSubscriptions: ["bench://watched"] } },
      });
      const reply = await entry.conn.request(
        post(port, body, {
          "MCP-Protocol-Version": V2026,
          "Mcp-Method": "subscriptions/listen",
        }),
      );
      if (reply.status !== 200) throw new Error(`listen answered ${reply.status} ${reply.body}`);
      // The acknowledgment is the stream's first message (2026-07-28 subscriptions).
      let seen = reply.body;
      await new Promise<void>((resolve) => {
        const check = (): boolean => seen.includes("notifications/subscriptions/acknowledged");
        if (check()) resolve();
        else
          entry.conn.onStream = (chunk) => {
            seen += chunk;
            if (check()) resolve();
          };
      });
    } else {
      const setup = new Conn(port, address);
      const init = await setup.request(
        post(
          port,
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: V2025,
              capabilities: {},
              clientInfo: { name: "bench", version: "1" },
            },
          }),
          { "MCP-Protocol-Version": V2025 },
        ),
      );
      const session = init.headers["mcp-session-id"];
      if (init.status !== 200 || session === undefined) {
        throw new Error(`initialize answered ${init.status} ${init.body}`);
      }
      const h = { "MCP-Protocol-Version": V2025, "Mcp-Session-Id": session };
      const ack = await setup.request(
        post(port, '{"jsonrpc":"2.0","method":"notifications/initialized"}', h),
      );
      if (ack.status !== 202) throw new Error(`initialized answered ${ack.status}`);
      const sub = await setup.request(
        post(
          port,
          JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "resources/subscribe",
            params: { uri: "bench://watched" },
          }),
          h,
        ),
      );
      if (sub.status !== 200 || sub.body.includes('"error"')) {
        throw new Error(`resources/subscribe answered ${sub.status} ${sub.body}`);
      }
      setup.socket.destroy();
      const get = await entry.conn.request(
        `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: ${V2025}\r\nMcp-Session-Id: ${session}\r\n\r\n`,
        true,
      );
      if (get.status !== 200) throw new Error(`GET answered ${get.status} ${get.body}`);
    }
    entry.conn.onStream = (chunk) => {
      if (armed && entry.at === null && chunk.includes("notifications/resources/updated")) {
        entry.at = now();
      }
    };
    streams.push(entry);
  });
  return { open: streams.length };
}

async function initialize(msg: {
  count: number;
  addresses: string[];
  concurrency: number;
}): Promise<Record<string, unknown>> {
  // The sessions are spread evenly over the addresses; each address's share goes over one
  // keep-alive connection, `concurrency` addresses at a time.
  const per = Math.ceil(msg.count / msg.addresses.length);
  const statuses: Record<string, number> = {};
  const started = now();
  let done = 0;
  await pool(msg.addresses.length, msg.concurrency, async (a) => {
    const address = msg.addresses[a] as string;
    let conn = new Conn(port, address);
    for (let k = 0; k < per && done < msg.count; k++) {
      done++;
      if (conn.ended) conn = new Conn(port, address);
      const reply = await conn.request(
        post(
          port,
          JSON.stringify({
            jsonrpc: "2.0",
            id: k,
            method: "initialize",
            params: {
              protocolVersion: V2025,
              capabilities: {},
              clientInfo: { name: "bench", version: "1" },
            },
          }),
          { "MCP-Protocol-Version": V2025 },
        ),
      );
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
    }
    conn.socket.destroy();
  });
  return { seconds: (now() - started) / 1_000, statuses };
}

function closeAll(): Record<string, unknown> {
  for (const h of held) h.conn.socket.destroy();
  for (const s of streams) s.conn.socket.destroy();
  const endedEarly = held.filter((h) => h.conn.ended).length;
  held = [];
  streams = [];
  armed = false;
  return { endedEarly };
}

process.on("message", (raw) => {
  const msg = raw as { op: string; port?: number } & Record<string, unknown>;
  if (msg.port !== undefined) port = msg.port;
  const run = async (): Promise<Record<string, unknown>> => {
    switch (msg.op) {
      case "hold":
        return hold(msg as never);
      case "cancel":
        return cancel(msg as never);
      case "listen":
        return listen(msg as never);
      case "arm":
        for (const s of streams) s.at = null;
        armed = true;
        return {};
      case "deliveries":
        return {
          at: streams.map((s) => s.at),
          ended: streams.filter((s) => s.conn.ended).length,
        };
      case "status":
        return {
          held: held.length,
          ended: held.filter((h) => h.conn.ended).length,
          streams: streams.length,
        };
      case "initialize":
        return initialize(msg as never);
      case "closeAll":
        return closeAll();
      default:
        throw new Error(`unknown op ${msg.op}`);
    }
  };
  run().then(
    (value) => process.send?.({ ok: true, ...value }),
    (error: unknown) => process.send?.({ ok: false, error: String(error) }),
  );
});
process.send?.({ ok: true, ready: true });
