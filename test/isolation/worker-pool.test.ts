/**
 * WorkerPool against real worker threads running the TypeScript tools of
 * test/fixtures/isolated-tools.ts (a kill terminates the
 * worker, so a CPU loop that never checks its signal really stops; a dead worker is replaced;
 * the pool is bounded).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { RequestCancelledError } from "../../src/errors.js";
import {
  IsolatedToolError,
  isolatedHandler,
  ToolKilledError,
  WorkerPool,
  WorkerPoolClosedError,
  WorkerPoolFullError,
} from "../../src/isolation/index.js";

const TOOLS = new URL("../fixtures/isolated-tools.ts", import.meta.url);
const tool = (name: string) => isolatedHandler(TOOLS, name);

/** A progress callback and a promise settled by its first call (the tool has started). */
function firstProgress(): { onProgress: () => void; started: Promise<void> } {
  let onProgress!: () => void;
  const started = new Promise<void>((resolve) => {
    onProgress = resolve;
  });
  return { onProgress, started };
}

/** Waits (bounded) until the pool has no thread left. */
async function drained(pool: WorkerPool): Promise<void> {
  for (let i = 0; i < 400 && pool.size > 0; i++) await sleep(5);
  assert.equal(pool.size, 0, "every worker thread exited");
}

/** Process CPU time (all threads, user + system) spent during `ms` of wall time. */
async function cpuDuring(ms: number): Promise<{ cpuMs: number; wallMs: number }> {
  const before = process.cpuUsage();
  const start = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - start };
}

// Runs alone, before the concurrent tests, so that nothing else burns CPU while it measures.
test("kill terminates a CPU loop that never checks its signal: process CPU time stops growing", async (t) => {
  const pool = new WorkerPool({ maxWorkers: 1, idleTimeoutMs: 100 });
  try {
    const { onProgress, started } = firstProgress();
    const task = pool.start(tool("spin"), { ms: 60_000 }, { onProgress });
    // Observed at once, so that a failed assertion below is reported as itself, not as the
    // rejection pool.close() gives the still-running task in `finally`.
    const outcome = task.result.then(
      () => null,
      (error: unknown) => error,
    );
    await started;
    assert.equal(task.state, "running");

    // The assumption behind the measure: a worker thread's CPU counts in process.cpuUsage().
    const busy = await cpuDuring(300);
    assert.ok(
      // A small share is enough (on a loaded machine the spinning thread competes for a core):
      // the proof is the contrast with the CPU time after the kill.
      busy.cpuMs > busy.wallMs * 0.05,
      `a spinning worker shows in process CPU time (${busy.cpuMs} ms in ${busy.wallMs} ms)`,
    );

    assert.equal(task.kill(), true, "a running task's worker is terminated");
    assert.ok(
      (await outcome) instanceof ToolKilledError,
      "the killed task rejects with ToolKilledError",
    );
    assert.equal(task.state, "settled");
    assert.equal(task.kill(), false, "a second kill does nothing");
    await drained(pool);

    const after = await cpuDuring(300);
    t.diagnostic(
      `process CPU over ~300 ms: ${busy.cpuMs.toFixed(1)} ms while spinning, ${after.cpuMs.toFixed(1)} ms after the kill`,
    );
    assert.ok(
      after.cpuMs < after.wallMs * 0.1 && after.cpuMs < busy.cpuMs / 3,
      `CPU time stopped growing (${after.cpuMs} ms in ${after.wallMs} ms after the kill)`,
    );

    // Replaced lazily: the next task spawns a new worker and runs.
    assert.deepEqual(await pool.run(tool("echo"), { text: "again" }), {
      text: "again",
      requestId: null,
      scope: "global",
      aborted: false,
    });
    assert.equal(pool.size, 1);

    // The idle replacement is retired after idleTimeoutMs.
    await drained(pool);
  } finally {
    await pool.close();
  }
});

describe("WorkerPool", { concurrency: true }, () => {
  test("results, errors and forwarding on one reused worker", async (t) => {
    const pool = new WorkerPool({ maxWorkers: 1 });
    t.after(() => pool.close());

    await t.test("runs a TypeScript tool module with the request's id and scope", async () => {
      const value = await pool.run(
        tool("echo"),
        { text: "hi" },
        { requestId: 7, scope: "ip:10.0.0.1" },
      );
      assert.deepEqual(value, { text: "hi", requestId: 7, scope: "ip:10.0.0.1", aborted: false });
    });

    await t.test(
      "a tool that throws fails with a flag; its error is only the local cause",
      async () => {
        const error = await pool.run(tool("fail"), {}).catch((e: unknown) => e);
        assert.ok(error instanceof IsolatedToolError);
        assert.equal(error.code, "CONDUIT_ERR_TOOL_FAILED");
        assert.equal(error.crashed, false);
        assert.equal(error.exitCode, null);
        assert.doesNotMatch(error.message, /secret|\/srv/, "the message names no internals");
        assert.ok(error.cause instanceof Error);
        assert.equal(error.cause.name, "TypeError");
        assert.equal(error.cause.message, "secret at /srv/internal/path");
      },
    );

    await t.test(
      "uncloneable results and arguments, and non-function exports, fail cleanly",
      async () => {
        const result = await pool.run(tool("uncloneable"), {}).catch((e: unknown) => e);
        assert.ok(result instanceof IsolatedToolError && !result.crashed);
        assert.equal((result.cause as Error).name, "DataCloneError");

        const args = await pool.run(tool("echo"), { text: () => 1 }).catch((e: unknown) => e);
        assert.ok(args instanceof IsolatedToolError && !args.crashed);

        const notFunction = await pool.run(tool("notAFunction"), {}).catch((e: unknown) => e);
        assert.ok(notFunction instanceof IsolatedToolError);
        assert.match((notFunction.cause as Error).message, /"notAFunction" .* is not a function/);

        const missing = await pool.run(tool("noSuchExport"), {}).catch((e: unknown) => e);
        assert.ok(missing instanceof IsolatedToolError);
      },
    );

    await t.test("forwards progress and log calls, dropping unknown log levels", async () => {
      const progress: unknown[] = [];
      const logs: unknown[] = [];
      const value = await pool.run(
        tool("chatty"),
        { steps: 3 },
        {
          onProgress: (p, total, message) => {
            progress.push([p, total, message]);
          },
          onLog: (level, data) => {
            logs.push([level, data]);
            // A failing callback must not disturb the task.
            throw new Error("callback bug");
          },
        },
      );
      assert.equal(value, "chatted");
      assert.deepEqual(progress, [
        [1, 3, "step 1"],
        [2, 3, "step 2"],
        [3, 3, "step 3"],
      ]);
      assert.deepEqual(logs, [["info", { note: "done", steps: 3 }]]);
    });

    await t.test(
      "cooperative cancel: a synchronous loop sees the abort through ctx.cancelled()",
      async () => {
        const controller = new AbortController();
        const value = await pool.run(
          tool("crunch"),
          { ms: 30_000 },
          {
            signal: controller.signal,
            onProgress: () => controller.abort(new RequestCancelledError("disconnect", "bye")),
          },
        );
        assert.deepEqual(value, {
          stopped: true,
          name: "RequestCancelledError",
          source: "disconnect",
          reason: "bye",
        });
      },
    );

    await t.test(
      "cooperative cancel: a tool that throws its abort reason rejects with signal.reason",
      async () => {
        const controller = new AbortController();
        const reason = new RequestCancelledError("notification", null);
        const run = pool.run(
          tool("waitForAbort"),
          {},
          {
            signal: controller.signal,
            onProgress: () => controller.abort(reason),
          },
        );
        await assert.rejects(run, (error) => error === reason);
        assert.equal(pool.size, 1, "the same worker served every call");
      },
    );

    await t.test("an already aborted signal rejects at once", async () => {
      const reason = new Error("too late");
      const task = pool.start(tool("echo"), { text: "x" }, { signal: AbortSignal.abort(reason) });
      assert.equal(task.state, "settled");
      await assert.rejects(task.result, (error) => error === reason);
    });
  });

  test("bounded queue and threads; queued tasks leave on abort or kill; close() ends everything", async () => {
    const pool = new WorkerPool({ maxWorkers: 2, maxQueue: 2 });
    try {
      const controllers = [new AbortController(), new AbortController()];
      const starts = [firstProgress(), firstProgress()];
      const running = controllers.map((controller, i) =>
        pool.start(
          tool("waitForAbort"),
          {},
          {
            signal: controller.signal,
            onProgress: starts[i]?.onProgress ?? (() => {}),
          },
        ),
      );
      await Promise.all(starts.map((s) => s.started));
      assert.equal(pool.size, 2);
      assert.equal(pool.busy, 2);

      const queuedAbort = new AbortController();
      const aborted = pool.start(tool("echo"), { text: "aborted" }, { signal: queuedAbort.signal });
      const waiting = pool.start(tool("echo"), { text: "waited" });
      assert.equal(pool.queued, 2);
      assert.equal(aborted.state, "queued");

      const refused = pool.start(tool("echo"), { text: "refused" });
      assert.equal(refused.state, "settled", "a full queue refuses at once");
      await assert.rejects(refused.result, WorkerPoolFullError);

      const why = new Error("client left");
      queuedAbort.abort(why);
      await assert.rejects(aborted.result, (error) => error === why);
      assert.equal(pool.queued, 1, "the aborted task left the queue");

      const killed = pool.start(tool("echo"), { text: "killed" });
      assert.equal(killed.kill(), false, "no worker is terminated for a queued task");
      await assert.rejects(killed.result, ToolKilledError);
      assert.equal(pool.queued, 1);

      // Ending one running task hands its worker to the queued one.
      controllers[0]?.abort(new Error("stop"));
      await assert.rejects(running[0]?.result ?? Promise.resolve(), /stop/);
      assert.equal(((await waiting.result) as { text: string }).text, "waited");
      assert.equal(pool.size, 2, "no thread beyond maxWorkers");

      // close(): the running task is killed, a queued one dropped, every thread terminated.
      const spinning = firstProgress();
      const spin = pool.start(tool("spin"), { ms: 60_000 }, { onProgress: spinning.onProgress });
      const dropped = pool.start(tool("echo"), { text: "never" });
      assert.equal(dropped.state, "queued");
      const outcomes = Promise.all([
        assert.rejects(
          running[1]?.result ?? Promise.reject(new ToolKilledError()),
          ToolKilledError,
        ),
        assert.rejects(spin.result, ToolKilledError),
        assert.rejects(dropped.result, WorkerPoolClosedError),
      ]);
      await spinning.started;
      await pool.close();
      await outcomes;
      assert.equal(pool.size, 0);
      await assert.rejects(pool.run(tool("echo"), { text: "late" }), WorkerPoolClosedError);
    } finally {
      await pool.close();
    }
  });

  test("a worker that dies rejects its task and is replaced", async () => {
    const pool = new WorkerPool({ maxWorkers: 1 });
    try {
      const exit = pool.run(tool("exitWorker"), { code: 3 });
      const queued = pool.start(tool("echo"), { text: "replacement" });
      assert.equal(queued.state, "queued");
      const exited = await exit.catch((e: unknown) => e);
      assert.ok(exited instanceof IsolatedToolError);
      assert.equal(exited.crashed, true);
      assert.equal(exited.exitCode, 3);
      // The queued task runs on a replacement worker.
      assert.equal(((await queued.result) as { text: string }).text, "replacement");
      assert.equal(pool.size, 1);

      const error = await pool.run(tool("throwLater"), {}).catch((e: unknown) => e);
      assert.ok(error instanceof IsolatedToolError && error.crashed);
      assert.equal((error.cause as Error).name, "RangeError");
      assert.equal((error.cause as Error).message, "uncaught in worker");
    } finally {
      await pool.close();
    }
  });

  test("a worker that runs out of memory under resourceLimits is a crash, not a process failure", async () => {
    const pool = new WorkerPool({ maxWorkers: 1, resourceLimits: { maxOldGenerationSizeMb: 64 } });
    try {
      const error = await pool.run(tool("hog"), {}).catch((e: unknown) => e);
      assert.ok(error instanceof IsolatedToolError && error.crashed);
      assert.equal((error.cause as { code?: string }).code, "ERR_WORKER_OUT_OF_MEMORY");
    } finally {
      await pool.close();
    }
  });
});
