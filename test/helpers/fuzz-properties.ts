/**
 * The fuzz properties, shared by the `npm test` files in test/fuzz/ and the
 * long run `scripts/fuzz.ts`. Each property drives a real server on 127.0.0.1 (keep-alive) with
 * fast-check input and checks every answer against the oracle (fuzz-oracle.ts): the server
 * never answers 5xx, always answers a documented shape, never stores a cancellation row for an
 * id that is not in flight in the caller's scope, and still answers /health afterwards.
 *
 * @example
 * ```ts
 * const target = await startFuzzTarget();
 * try { await fuzzJsonBodies(target, 1_000); } finally { await target.close(); }
 * ```
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import fc from "fast-check";
import { z } from "zod";

import { normalizeRequestId } from "../../src/cancellation/index.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { type Answer, checkAnswer, httpExchange, rawExchange, rawRequest } from "./fuzz-oracle.js";

const MODERN = "2026-07-28";
const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
const SECRET = "fuzz-secret-0123456789";

/** Two servers (open with sessions, and bearer-authenticated) and a keep-alive agent. */
export interface FuzzTarget {
  readonly open: { readonly server: McpServer; readonly url: string; readonly port: number };
  readonly authed: { readonly server: McpServer; readonly url: string; readonly port: number };
  readonly agent: Agent;
  close(): Promise<void>;
}

/** The name of the tool the fuzz bodies never reach: only the cancel property's victim runs it. */
const HOLD_TOOL = "hold_e3b0c442";

function fuzzTools() {
  return [
    defineTool({
      name: "echo",
      description: "Echoes its text",
      input: z.object({ text: z.string() }),
      handler: ({ text }) => text,
    }),
    defineTool({
      name: "chatty",
      description: "Reports progress and logs before answering",
      handler: async (_args, ctx) => {
        await ctx.progress(1, 2, "half");
        await ctx.log("info", "hello");
        return "done";
      },
    }),
    defineTool({
      name: HOLD_TOOL,
      description: "Runs until cancelled",
      handler: async (_args, ctx) => {
        await sleep(60_000, undefined, { signal: ctx.signal });
        return "held";
      },
    }),
  ];
}

/**
 * Starts the fuzz target servers.
 *
 * @example
 * ```ts
 * const target = await startFuzzTarget();
 * await target.close();
 * ```
 */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const open = createMcpServer({ tools: fuzzTools(), sessions: true, metrics: true });
  const authed = createMcpServer({
    tools: fuzzTools(),
    auth: { tokens: { [SECRET]: "fuzzer" } },
    maxBodyBytes: 64 * 1024,
  });
  const a = await open.listen();
  const b = await authed.listen();
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    open: { server: open, url: a.url, port: a.port },
    authed: { server: authed, url: b.url, port: b.port },
    agent,
    async close() {
      agent.destroy();
      await Promise.all([open.close(), authed.close()]);
    },
  };
}

/** Fails with the input when the answer is not a documented one. */
function assertDocumented(answer: Answer, input: unknown, raw = false): void {
  const problem = checkAnswer(answer, { raw });
  if (problem !== null) {
    assert.fail(`${problem}\n  status ${answer.status}\n  input ${preview(input)}`);
  }
}

function preview(value: unknown): string {
  try {
    const text = Buffer.isBuffer(value)
      ? JSON.stringify(value.toString("latin1"))
      : JSON.stringify(value);
    return (text ?? String(value)).slice(0, 400);
  } catch {
    return String(value).slice(0, 400);
  }
}

/** Both servers still answer /health, hold no rows and track nothing. */
export async function assertHealthy(target: FuzzTarget): Promise<void> {
  for (const side of [target.open, target.authed]) {
    const health = await httpExchange(target.agent, new URL("/health", side.url).toString(), {
      method: "GET",
    });
    assert.equal(health.status, 200);
    assert.equal(health.body.toString(), '{"status":"ok"}');
    assert.equal(await side.server.registry.size(), 0, "no cancellation row");
    // Untracking happens just after the answer is written: give it a moment.
    for (let i = 0; i < 100 && side.server.registry.inFlightCount !== 0; i++) await sleep(10);
    assert.equal(side.server.registry.inFlightCount, 0, "nothing in flight");
  }
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const LONE_SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "a\ud800b", "\udfff\ud800"];
const CONTROL = fc.string({
  unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  maxLength: 20,
});

/** Strings hostile to reflection: control characters, lone surrogates, huge, or plain. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  CONTROL,
  fc.constantFrom(...LONE_SURROGATES),
  fc
    .tuple(fc.string({ maxLength: 5 }), fc.constantFrom(...LONE_SURROGATES), CONTROL)
    .map((p) => p.join("")),
  fc.integer({ min: 257, max: 200_000 }).map((n) => "x".repeat(n)),
  fc.constantFrom(
    "",
    " ",
    "__proto__",
    "constructor",
    "toString",
    "\u0000",
    "\u202e",
    "%s%n",
    "$" + "{x}",
  ),
);

/** Numbers hostile to id handling: unsafe integers, floats, negative zero, extremes. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    -0,
    0.5,
    1e21,
    1e-7,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 70n }).map((n) => Number(n)),
);

/** Any JSON-compatible value, with hostile leaves. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(
      hostileString.filter((k) => k.length < 50),
      tie("value"),
      { maxKeys: 5 },
    ),
  ),
})).value;

const METHODS = [
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "logging/setLevel",
  "server/discover",
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "resources/list",
  "subscriptions/listen",
];

/** Bodies shaped like JSON-RPC messages (so they get past the parser) with hostile parts. */
export const rpcLikeBody: fc.Arbitrary<unknown> = fc
  .record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), hostileJson),
      id: fc.oneof(fc.integer(), hostileString, hostileNumber, fc.constant(null), hostileJson),
      method: fc.oneof(fc.constantFrom(...METHODS), hostileString, hostileJson),
      params: fc.oneof(
        hostileJson,
        fc.record(
          {
            name: fc.oneof(fc.constantFrom("echo", "chatty", "nope"), hostileString),
            arguments: fc.oneof(fc.record({ text: hostileString }), hostileJson),
            protocolVersion: fc.oneof(fc.constantFrom(MODERN, ...LEGACY_VERSIONS), hostileString),
            capabilities: hostileJson,
            clientInfo: hostileJson,
            level: fc.oneof(fc.constantFrom("debug", "info", "emergency"), hostileString),
            requestId: fc.oneof(hostileNumber, hostileString, hostileJson),
            reason: hostileJson,
            _meta: fc.oneof(
              hostileJson,
              fc.record(
                {
                  "io.modelcontextprotocol/protocolVersion": fc.oneof(
                    fc.constantFrom(MODERN, "2025-11-25"),
                    hostileJson,
                  ),
                  "io.modelcontextprotocol/clientCapabilities": hostileJson,
                  "io.modelcontextprotocol/logLevel": fc.oneof(
                    fc.constantFrom("debug", "info"),
                    hostileJson,
                  ),
                  progressToken: fc.oneof(fc.integer(), hostileString, hostileJson),
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
      ),
      result: hostileJson,
      error: hostileJson,
    },
    { requiredKeys: [] },
  )
  // A body the hold tool never sees (fuzz bodies must not start calls that never end).
  .filter((body) => !JSON.stringify(body).includes(HOLD_TOOL));

/** Headers that make a body reach the 2025 or the modern path (or neither). */
function eraHeaders(body: unknown): fc.Arbitrary<Record<string, string>> {
  const method = (body as { method?: unknown } | null)?.method;
  const name = (body as { params?: { name?: unknown } } | null)?.params?.name;
  return fc.oneof(
    fc.constant({}),
    fc.constantFrom(...LEGACY_VERSIONS).map((v) => ({ "mcp-protocol-version": v })),
    fc.constant({
      "mcp-protocol-version": MODERN,
      ...(typeof method === "string" && isHeaderSafe(method) ? { "mcp-method": method } : {}),
      ...(typeof name === "string" && isHeaderSafe(name) ? { "mcp-name": name } : {}),
    }),
  );
}

function isHeaderSafe(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}

const BASE_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

function bodyBytes(body: unknown): Buffer {
  return Buffer.from(JSON.stringify(body) ?? "null", "utf8");
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/**
 * Arbitrary JSON values and JSON-RPC-shaped bodies, in both eras, to the open server.
 *
 * @example
 * ```ts
 * await fuzzJsonBodies(target, 3_000);
 * ```
 */
export async function fuzzJsonBodies(
  target: FuzzTarget,
  runs: number,
  seed?: number,
): Promise<void> {
  const input = fc
    .oneof(hostileJson, rpcLikeBody, rpcLikeBody)
    .chain((body) => fc.tuple(fc.constant(body), eraHeaders(body)));
  await fc.assert(
    fc.asyncProperty(input, async ([body, headers]) => {
      const answer = await httpExchange(target.agent, target.open.url, {
        headers: { ...BASE_HEADERS, ...headers },
        body: bodyBytes(body),
      });
      assertDocumented(answer, { body, headers });
      assert.equal(await target.open.server.registry.size(), 0, `a row after ${preview(body)}`);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  await assertHealthy(target);
}

/** Bytes that are almost JSON: valid JSON with invalid UTF-8, truncation or junk spliced in. */
const nearJsonBytes: fc.Arbitrary<Buffer> = fc
  .tuple(
    rpcLikeBody,
    fc.nat(),
    fc.oneof(
      fc.constantFrom(
        [0xff],
        [0xc3],
        [0xed, 0xa0, 0x80], // an encoded surrogate (invalid in UTF-8)
        [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
        [0xc0, 0xaf], // overlong
        [0x00],
        [0x22],
        [0x5c],
      ),
      fc.uint8Array({ maxLength: 8 }).map((a) => [...a]),
    ),
    fc.boolean(),
  )
  .map(([body, at, junk, truncate]) => {
    const bytes = bodyBytes(body);
    const cut = bytes.length === 0 ? 0 : at % bytes.length;
    if (truncate) return bytes.subarray(0, cut);
    return Buffer.concat([bytes.subarray(0, cut), Buffer.from(junk), bytes.subarray(cut)]);
  });

/** A valid request whose text string carries raw invalid UTF-8 bytes. */
const invalidUtf8InString: fc.Arbitrary<Buffer> = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.constantFrom("echo", "cancel"))
  .map(([junk, kind]) => {
    const bytes = [...junk].map((b) => (b === 0x22 || b === 0x5c || b < 0x20 ? 0xff : b));
    const [head, tail] =
      kind === "echo"
        ? [
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"',
            '"}}}',
          ]
        : [
            '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"',
            '","reason":"x"}}',
          ];
    return Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]);
  });

/**
 * Raw bytes as bodies (random, near-JSON, invalid UTF-8 inside strings), to both servers.
 *
 * @example
 * ```ts
 * await fuzzRawBodies(target, 1_500);
 * ```
 */
export async function fuzzRawBodies(
  target: FuzzTarget,
  runs: number,
  seed?: number,
): Promise<void> {
  const input = fc.tuple(
    fc.oneof(
      fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)),
      nearJsonBytes,
      invalidUtf8InString,
    ),
    fc.boolean(),
  );
  await fc.assert(
    fc.asyncProperty(input, async ([bytes, authed]) => {
      const side = authed ? target.authed : target.open;
      const headers: Record<string, string> = { ...BASE_HEADERS };
      if (authed) headers.authorization = `Bearer ${SECRET}`;
      const answer = await httpExchange(target.agent, side.url, { headers, body: bytes });
      assertDocumented(answer, bytes);
      assert.equal(await side.server.registry.size(), 0, `a row after ${preview(bytes)}`);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  await assertHealthy(target);
}

const HEADER_NAMES = [
  "content-type",
  "accept",
  "mcp-protocol-version",
  "mcp-method",
  "mcp-name",
  "mcp-session-id",
  "authorization",
  "origin",
  "x-forwarded-for",
] as const;

const MEANINGFUL: Record<(typeof HEADER_NAMES)[number], readonly string[]> = {
  "content-type": [
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "APPLICATION/JSON ;",
    "",
  ],
  accept: [
    "application/json, text/event-stream",
    "text/event-stream",
    "application/json;q=0",
    "*/*",
    "text/html",
    "",
  ],
  "mcp-protocol-version": [MODERN, ...LEGACY_VERSIONS, "2024-11-05", "2026-08-01", ""],
  "mcp-method": ["tools/call", "tools/list", "ping", "=?base64?dG9vbHMvY2FsbA==?=", ""],
  "mcp-name": ["echo", "=?base64?ZWNobw==?=", "=?base64?***?=", ""],
  "mcp-session-id": ["00000000-0000-0000-0000-000000000000", "x".repeat(300), ""],
  authorization: [
    `Bearer ${SECRET}`,
    "Bearer",
    "Bearer  ",
    "Basic Zm9vOmJhcg==",
    `bearer ${SECRET}`,
    "",
  ],
  origin: [
    "http://127.0.0.1",
    "http://localhost:1",
    "null",
    "http://evil.example",
    "http://[::1]",
    "",
  ],
  "x-forwarded-for": ["127.0.0.1", "::1, 10.0.0.1", "garbage", "1.2.3.4, , ,", ""],
};

/** Characters Node's http client accepts in a header value. */
const headerChar = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x80, max: 0xff }),
    fc.constant(0x09),
  )
  .map((c) => String.fromCharCode(c));

const legalHeaderValue = fc.oneof(
  fc.string({ unit: headerChar, maxLength: 60 }),
  fc.integer({ min: 1, max: 8_000 }).map((n) => "a".repeat(n)),
);

/** The fixed bodies the header property sends (the headers are what varies). */
function sampleBodies(): unknown[] {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  return [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: "l", method: "tools/list" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    },
    {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "chatty", arguments: {}, _meta: { progressToken: 9 } },
    },
    {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "m" }, _meta: meta },
    },
    { jsonrpc: "2.0", id: 5, method: "server/discover", params: { _meta: meta } },
    {
      jsonrpc: "2.0",
      id: 6,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "f", version: "1" },
      },
    },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "r" } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ];
}

/**
 * Arbitrary values (that Node's client can send) for the nine headers the endpoint reads,
 * in front of valid bodies of both eras, to both servers.
 *
 * @example
 * ```ts
 * await fuzzHeaders(target, 2_000);
 * ```
 */
export async function fuzzHeaders(target: FuzzTarget, runs: number, seed?: number): Promise<void> {
  const bodies = sampleBodies();
  const headerSet = fc.record(
    Object.fromEntries(
      HEADER_NAMES.map((name) => [
        name,
        fc.oneof(fc.constant(undefined), fc.constantFrom(...MEANINGFUL[name]), legalHeaderValue),
      ]),
    ) as Record<(typeof HEADER_NAMES)[number], fc.Arbitrary<string | undefined>>,
  );
  const input = fc.tuple(
    fc.constantFrom(...bodies),
    headerSet,
    fc.boolean(),
    fc.oneof(
      { weight: 6, arbitrary: fc.constant("POST") },
      fc.constantFrom("GET", "DELETE", "PUT", "OPTIONS"),
    ),
  );
  await fc.assert(
    fc.asyncProperty(input, async ([body, set, authed, method]) => {
      const side = authed ? target.authed : target.open;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(set))
        if (value !== undefined) headers[name] = value;
      const answer = await httpExchange(target.agent, side.url, {
        method,
        headers,
        body: bodyBytes(body),
      });
      assertDocumented(answer, { body, headers });
      assert.equal(await side.server.registry.size(), 0);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  await assertHealthy(target);
}

/**
 * Header values Node's client refuses to send (control characters, CR/LF, DEL, UTF-8
 * multi-byte sequences, invalid UTF-8), over raw sockets, to both servers.
 *
 * @example
 * ```ts
 * await fuzzRawHeaders(target, 1_000);
 * ```
 */
export async function fuzzRawHeaders(
  target: FuzzTarget,
  runs: number,
  seed?: number,
): Promise<void> {
  const bodies = sampleBodies().map(bodyBytes);
  const rawValue = fc.oneof(
    fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)),
    fc.string({ unit: "binary", maxLength: 20 }).map((s) => Buffer.from(s, "utf8")),
    fc.constantFrom(
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from("2025-11-25\u0000"),
      Buffer.from("echo\r\nx-injected: 1"),
      Buffer.from("\x7f"),
      Buffer.from("=?base64?7aCA?="), // base64 of an encoded lone surrogate
      Buffer.from("=?base64?/w==?="), // base64 of 0xff
    ),
  );
  const input = fc.tuple(
    fc.constantFrom(...bodies),
    fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), rawValue), { minLength: 1, maxLength: 3 }),
    fc.boolean(),
  );
  await fc.assert(
    fc.asyncProperty(input, async ([body, pairs, authed]) => {
      const side = authed ? target.authed : target.open;
      const lines = [
        Buffer.from("content-type: application/json"),
        Buffer.from("accept: application/json, text/event-stream"),
      ];
      if (authed) lines.push(Buffer.from(`authorization: Bearer ${SECRET}`));
      for (const [name, value] of pairs)
        lines.push(Buffer.concat([Buffer.from(`${name}: `), value]));
      const bytes = rawRequest("/mcp", lines, body);
      const answer = await rawExchange(side.port, bytes);
      assertDocumented(answer, bytes, true);
      assert.equal(await side.server.registry.size(), 0);
    }),
    { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
  );
  await assertHealthy(target);
}

/** A call of the hold tool that stays in flight until cancelled. */
interface Victim {
  readonly id: number | string;
  readonly key: string;
  readonly done: Promise<Answer>;
  settled: boolean;
}

let victimCounter = 0;

function startVictim(target: FuzzTarget, agent: Agent): Victim {
  victimCounter++;
  const id = victimCounter % 2 === 0 ? victimCounter : `victim-${victimCounter}`;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: HOLD_TOOL, arguments: {} },
  });
  const victim: Victim = {
    id,
    key: String(id),
    settled: false,
    done: new Promise((resolve, reject) => {
      const req = request(target.open.url, { method: "POST", agent, headers: BASE_HEADERS });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          victim.settled = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          });
        });
      });
      req.on("error", reject);
      req.end(body);
    }),
  };
  return victim;
}

/** Near misses of the victim's id, and the id itself (in both JSON-RPC kinds). */
function victimIdVariants(victim: Victim): unknown[] {
  const v = victim.id;
  if (typeof v === "number")
    return [v, String(v), v + 0.5, -v, `${v} `, ` ${v}`, `${v}\u0000`, [v], { id: v }, v * 2 ** 40];
  return [v, `${v} `, v.toUpperCase(), `${v}\u0000`, `${v}\ud800`, [v], { id: v }, v.slice(1)];
}

/**
 * Arbitrary `notifications/cancelled` params and reasons (objects, arrays, huge strings, unsafe
 * integers, floats, control characters, lone surrogates; invalid UTF-8 in raw bodies) while one
 * call is in flight in the fuzzer's scope. A row may exist only when the id named that call
 * (then it is cancelled and a fresh one starts); otherwise the store stays empty.
 *
 * @example
 * ```ts
 * await fuzzCancelled(target, 2_500);
 * ```
 */
export async function fuzzCancelled(
  target: FuzzTarget,
  runs: number,
  seed?: number,
): Promise<void> {
  const registry = target.open.server.registry;
  const victimAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  let victim = startVictim(target, victimAgent);
  await waitInFlight(target, victim);
  const variantIndex = fc.nat(20);
  const requestId = fc.oneof(
    { weight: 3, arbitrary: fc.oneof(hostileNumber, hostileString, hostileJson) },
    { weight: 1, arbitrary: variantIndex.map((i) => ({ variant: i })) },
  );
  const params = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        { requestId, reason: fc.oneof(hostileJson, hostileString) },
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: hostileJson },
  );
  const input = fc.tuple(params, fc.constantFrom("none", "2025-11-25", MODERN), fc.nat(3));
  try {
    await fc.assert(
      fc.asyncProperty(input, async ([rawParams, version, form]) => {
        // Resolve a {variant} placeholder to a near miss of the live victim's id.
        let p: unknown = rawParams;
        if (typeof rawParams === "object" && rawParams !== null && !Array.isArray(rawParams)) {
          const rid = (rawParams as { requestId?: unknown }).requestId;
          if (typeof rid === "object" && rid !== null && "variant" in rid) {
            const variants = victimIdVariants(victim);
            p = {
              ...rawParams,
              requestId: variants[(rid as { variant: number }).variant % variants.length],
            };
          }
        }
        let bytes = bodyBytes({ jsonrpc: "2.0", method: "notifications/cancelled", params: p });
        if (form === 1 && typeof p === "object" && p !== null && !Array.isArray(p)) {
          // The reason as raw invalid UTF-8 (a lone 0xff, a reversed BOM, an encoded surrogate).
          const marked = bodyBytes({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { ...p, reason: "@@R@@" },
          });
          const at = marked.indexOf("@@R@@");
          bytes = Buffer.concat([
            marked.subarray(0, at),
            Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]),
            marked.subarray(at + 5),
          ]);
        }
        const headers: Record<string, string> = { ...BASE_HEADERS };
        if (version !== "none") headers["mcp-protocol-version"] = version;
        const answer = await httpExchange(target.agent, target.open.url, { headers, body: bytes });
        assertDocumented(answer, bytes);
        if (answer.status !== 202 && answer.status !== 200)
          assert.fail(`cancel answered ${answer.status}: ${preview(bytes)}`);

        const named =
          typeof p === "object" && p !== null && !Array.isArray(p)
            ? normalizeRequestId((p as { requestId?: unknown }).requestId)
            : undefined;
        const couldCancel = typeof named === "string" && named === victim.key && version !== MODERN;
        if (!couldCancel) {
          assert.equal(await registry.size(), 0, `a row for ${preview(p)}`);
          assert.equal(victim.settled, false, `the victim was cancelled by ${preview(p)}`);
          return;
        }
        // The live call was named: it ends with -32800, at most one row exists; start a new one.
        const ended = await Promise.race([victim.done, sleep(2_000).then(() => null)]);
        assert.notEqual(ended, null, `the victim was not cancelled by ${preview(p)}`);
        assert.ok((await registry.size()) <= 1);
        await registry.cleanup(0);
        assert.equal(await registry.size(), 0);
        victim = startVictim(target, victimAgent);
        await waitInFlight(target, victim);
      }),
      { numRuns: runs, ...(seed === undefined ? {} : { seed }) },
    );
  } finally {
    // End the last victim through the front door, then check the server is clean.
    await httpExchange(target.agent, target.open.url, {
      headers: BASE_HEADERS,
      body: bodyBytes({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: victim.id },
      }),
    });
    await Promise.race([victim.done, sleep(2_000)]);
    victimAgent.destroy();
    await registry.cleanup(0);
  }
  await assertHealthy(target);
}

async function waitInFlight(target: FuzzTarget, victim: Victim): Promise<void> {
  const scope = "ip:127.0.0.1";
  for (let i = 0; i < 200; i++) {
    if (await target.open.server.registry.isInFlight(victim.id, scope)) return;
    await sleep(5);
  }
  assert.fail(`victim ${String(victim.id)} never got in flight`);
}
