/**
 * `--redis URL`, `REDIS_URL` and `--redis-lease-ms` (docs/cli.md),
 * and the serve wiring that hands a shared registry and session store to the server. The processes
 * themselves are exercised against a real Redis in test/redis-e2e/.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CancellationRegistry } from "../../src/cancellation/index.js";
import { type CliParse, parseCli, type ServeCommand, USAGE } from "../../src/cli/args.js";
import { redisBackends, serveOptions } from "../../src/cli/serve.js";
import { MemorySessionStore } from "../../src/sessions/index.js";

function serve(argv: readonly string[], env: Record<string, string> = {}): ServeCommand {
  const parsed = parseCli(argv, env);
  assert.ok(parsed.ok, `expected ${JSON.stringify(argv)} to parse: ${JSON.stringify(parsed)}`);
  assert.equal(parsed.command.kind, "serve");
  return parsed.command as ServeCommand;
}

function problem(argv: readonly string[], env: Record<string, string> = {}): string {
  const parsed: CliParse = parseCli(argv, env);
  assert.equal(parsed.ok, false, `expected ${JSON.stringify(argv)} to be refused`);
  return (parsed as { message: string }).message;
}

describe("parseCli --redis", () => {
  it("takes --redis URL (redis:// and rediss://)", () => {
    assert.equal(
      serve(["serve", "--redis", "redis://127.0.0.1:6379"]).redis,
      "redis://127.0.0.1:6379",
    );
    assert.equal(
      serve(["serve", "--redis", "rediss://user:pw@cache.example:6380/2"]).redis,
      "rediss://user:pw@cache.example:6380/2",
    );
  });

  it("falls back to REDIS_URL only when the flag is absent; an empty REDIS_URL is unset", () => {
    assert.equal(serve(["serve"], { REDIS_URL: "redis://env:1" }).redis, "redis://env:1");
    assert.equal(
      serve(["serve", "--redis", "redis://flag:2"], { REDIS_URL: "redis://env:1" }).redis,
      "redis://flag:2",
    );
    assert.equal("redis" in serve(["serve"], { REDIS_URL: "" }), false);
    // The pure default: no environment unless the caller passes one.
    assert.equal("redis" in serve(["serve"]), false);
  });

  it("refuses a URL that is not redis:// or rediss:// without echoing it (it may hold a password)", () => {
    for (const bad of ["http://h:1", "127.0.0.1:6379", "redis://", "", "secret-pw"]) {
      const message = problem(["serve", "--redis", bad]);
      assert.equal(message, "--redis must be a redis:// or rediss:// URL with a host");
    }
    assert.equal(
      problem(["serve"], { REDIS_URL: "https://u:hunter2@h" }),
      "REDIS_URL must be a redis:// or rediss:// URL with a host",
    );
  });

  it("takes --redis-lease-ms ≥ 3 only together with a Redis URL", () => {
    assert.equal(
      serve(["serve", "--redis", "redis://h", "--redis-lease-ms", "600"]).redisLeaseMs,
      600,
    );
    assert.equal(
      serve(["serve", "--redis-lease-ms", "3"], { REDIS_URL: "redis://h" }).redisLeaseMs,
      3,
    );
    assert.equal("redisLeaseMs" in serve(["serve", "--redis", "redis://h"]), false);
    assert.equal(
      problem(["serve", "--redis-lease-ms", "600"]),
      "--redis-lease-ms needs --redis URL (or REDIS_URL)",
    );
    assert.match(problem(["serve", "--redis", "redis://h", "--redis-lease-ms", "2"]), /from 3 to/);
    assert.match(
      problem(["serve", "--redis", "redis://h", "--redis-lease-ms", "1e3"]),
      /from 3 to/,
    );
  });

  it("takes --redis-share-after-ms 0..60000 only together with a Redis URL", () => {
    assert.equal(
      serve(["serve", "--redis", "redis://h", "--redis-share-after-ms", "0"]).redisShareAfterMs,
      0,
    );
    assert.equal(
      serve(["serve", "--redis-share-after-ms", "200"], { REDIS_URL: "redis://h" })
        .redisShareAfterMs,
      200,
    );
    assert.equal("redisShareAfterMs" in serve(["serve", "--redis", "redis://h"]), false);
    assert.equal(
      problem(["serve", "--redis-share-after-ms", "50"]),
      "--redis-share-after-ms needs --redis URL (or REDIS_URL)",
    );
    assert.match(
      problem(["serve", "--redis", "redis://h", "--redis-share-after-ms", "60001"]),
      /from 0 to 60000/,
    );
  });

  it("documents both flags and REDIS_URL in --help", () => {
    assert.match(USAGE, /--redis URL/);
    assert.match(USAGE, /\$REDIS_URL/);
    assert.match(USAGE, /--redis-lease-ms MS/);
    assert.match(USAGE, /--redis-share-after-ms MS/);
  });
});

describe("serveOptions with shared stores", () => {
  it("uses the given registry, and the given session store only when sessions are on", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const sessionStore = new MemorySessionStore({});
    try {
      const withSessions = serveOptions(serve(["serve", "--sessions"]), { registry, sessionStore });
      assert.equal(withSessions.registry, registry);
      assert.deepEqual(withSessions.sessions, { store: sessionStore });
      const stateless = serveOptions(serve(["serve"]), { registry, sessionStore });
      assert.equal(stateless.registry, registry);
      assert.equal(stateless.sessions, false);
      // Without shared stores: a fresh memory registry per call, sessions as a boolean.
      const memory = serveOptions(serve(["serve", "--sessions"]));
      assert.notEqual(memory.registry, registry);
      assert.equal(memory.sessions, true);
    } finally {
      await registry.close();
      await sessionStore.close();
    }
  });
});

describe("--row-ttl-ms", () => {
  it("parses a positive integer and refuses anything else", () => {
    assert.equal(serve(["serve", "--row-ttl-ms", "1500"]).rowTtlMs, 1500);
    assert.equal("rowTtlMs" in serve(["serve"]), false);
    for (const bad of ["0", "1e3", "soon", ""]) {
      assert.match(problem(["serve", "--row-ttl-ms", bad]), /--row-ttl-ms must be an integer/);
    }
    assert.match(USAGE, /--row-ttl-ms MS/);
  });

  it("sets the memory registry's TTL (default 300 000 without the flag)", async () => {
    const options = serveOptions(serve(["serve", "--row-ttl-ms", "1500"]));
    const defaults = serveOptions(serve(["serve"]));
    try {
      assert.equal(options.registry?.ttlMs, 1500);
      assert.equal(defaults.registry?.ttlMs, 300_000);
    } finally {
      await options.registry?.close();
      await defaults.registry?.close();
    }
  });

  it("sets the Redis registry's TTL (Redis unreachable: the stores fail open)", async () => {
    const backends = await redisBackends({
      ...serve(["serve", "--redis", "redis://127.0.0.1:1", "--row-ttl-ms", "1500"]),
      redis: "redis://127.0.0.1:1",
    });
    try {
      assert.equal(backends.registry.ttlMs, 1500);
      // A --redis node also carries answers to 2025-era asks between nodes.
      const command = serve(["serve", "--redis", "redis://127.0.0.1:1"]);
      assert.equal(serveOptions(command, backends).serverRequests?.bus, backends.replyBus);
      // And list changes and resource updates between the listeners of every node.
      assert.equal(serveOptions(command, backends).changeFeed, backends.changeFeed);
      assert.equal(backends.changeFeed.shared, true);
    } finally {
      await backends.close();
    }
  });
});

describe("--max-sessions-per-scope with --redis", () => {
  it("bounds the Redis session store too (Redis unreachable: its outage copy applies the bound)", async () => {
    // Found by the chaos soak (docs/soak.md): the flag was dropped under --redis, and the Redis
    // store's default of 64 refused initialize to a tenant the flag allowed far more.
    const backends = await redisBackends({
      ...serve(["serve", "--redis", "redis://127.0.0.1:1", "--sessions"]),
      redis: "redis://127.0.0.1:1",
      maxSessionsPerScope: 2,
    });
    const record = (id: string) => ({
      id,
      principalId: null,
      creatorScope: "ip:127.0.0.1",
      protocolVersion: "2025-11-25",
      createdAt: 0,
      lastSeenAt: 0,
      logLevel: null,
    });
    try {
      const store = backends.sessionStore;
      assert.ok(store);
      assert.equal(await store.create(record("a")), "created");
      assert.equal(await store.create(record("b")), "created");
      assert.equal(await store.create(record("c")), "scope-full");
    } finally {
      await backends.close();
    }
  });
});

describe("--max-tasks, --max-tasks-per-scope and the Redis task store", () => {
  it("parses positive integers or infinity, refuses anything else, and documents both", () => {
    const command = serve(["serve", "--max-tasks", "50", "--max-tasks-per-scope", "infinity"]);
    assert.equal(command.maxTasks, 50);
    assert.equal(command.maxTasksPerScope, Number.POSITIVE_INFINITY);
    assert.equal("maxTasks" in serve(["serve"]), false);
    for (const bad of ["0", "1.5", "lots", ""]) {
      assert.match(problem(["serve", "--max-tasks", bad]), /--max-tasks must be a positive/);
      assert.match(
        problem(["serve", "--max-tasks-per-scope", bad]),
        /--max-tasks-per-scope must be a positive/,
      );
    }
    assert.match(USAGE, /--max-tasks N\|infinity/);
    assert.match(USAGE, /--max-tasks-per-scope N\|infinity/);
  });

  it("gives a memory server the task bounds", () => {
    const options = serveOptions(
      serve(["serve", "--max-tasks", "50", "--max-tasks-per-scope", "3"]),
    );
    try {
      assert.deepEqual(options.tasks, { maxTasks: 50, maxTasksPerScope: 3 });
      assert.equal(serveOptions(serve(["serve"])).tasks, undefined);
    } finally {
      void options.registry?.close();
    }
  });

  it("builds the Redis task store with the bounds and the node's name; the janitor sweeps once per lease", async () => {
    const backends = await redisBackends({
      ...serve([
        "serve",
        "--redis",
        "redis://127.0.0.1:1",
        "--redis-lease-ms",
        "900",
        "--max-tasks",
        "50",
        "--max-tasks-per-scope",
        "3",
      ]),
      redis: "redis://127.0.0.1:1",
    });
    try {
      assert.equal(backends.taskStore.maxTasks, 50);
      assert.equal(backends.taskStore.maxTasksPerScope, 3);
      assert.equal(backends.taskStore.nodeId, backends.cancellationStore.nodeId);
      const options = serveOptions(serve(["serve", "--max-tasks", "50"]), backends);
      const tasks = options.tasks;
      assert.ok(tasks !== undefined && tasks !== false);
      assert.equal(tasks.store, backends.taskStore);
      assert.equal(tasks.sweepIntervalMs, 900);
    } finally {
      await backends.close();
    }
  });
});
