import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import diagnosticsChannel from "node:diagnostics_channel";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { CancellationJanitor } from "../../src/cancellation/janitor.js";
import { CancellationRegistry } from "../../src/cancellation/registry.js";
import { ChannelName } from "../../src/diagnostics.js";
import { InvalidOptionError } from "../../src/errors.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `predicate` holds, polling every 5 ms, for at most `ms`. */
async function waitFor(predicate: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(5);
  }
}

function listen(channel: string): { messages: unknown[]; stop(): void } {
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);
  diagnosticsChannel.subscribe(channel, listener);
  return { messages, stop: () => diagnosticsChannel.unsubscribe(channel, listener) };
}

describe("CancellationJanitor", () => {
  it("sweeps every interval, never immediately, and publishes {removed}", async () => {
    const janitorEvents = listen(ChannelName.cancellationJanitor);
    let sweeps = 0;
    const janitor = new CancellationJanitor({ intervalMs: 10, sweep: async () => ++sweeps });
    try {
      janitor.start();
      assert.equal(sweeps, 0, "no sweep at start");
      await waitFor(() => sweeps >= 3);
    } finally {
      janitor.stop();
      janitorEvents.stop();
    }
    assert.deepEqual(janitorEvents.messages.slice(0, 3), [
      { removed: 1 },
      { removed: 2 },
      { removed: 3 },
    ]);
  });

  it("a failing sweep is reported to onError and does not stop the timer", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const janitor = new CancellationJanitor({
      intervalMs: 5,
      sweep: async () => {
        calls++;
        if (calls <= 2) throw new Error(`store down ${calls}`);
        return 0;
      },
      onError: (error) => errors.push(error),
    });
    janitor.start();
    try {
      await waitFor(() => calls >= 4);
    } finally {
      janitor.stop();
    }
    assert.equal(errors.length, 2);
    assert.match(String(errors[0]), /store down 1/);
  });

  it("a throwing onError hook does not kill the janitor either", async () => {
    let calls = 0;
    const janitor = new CancellationJanitor({
      intervalMs: 5,
      sweep: () => {
        calls++;
        return Promise.reject(new Error("down"));
      },
      onError: () => {
        throw new Error("hook");
      },
    });
    janitor.start();
    try {
      await waitFor(() => calls >= 3);
    } finally {
      janitor.stop();
    }
  });

  it("never overlaps sweeps: the next one is scheduled after the previous finished", async () => {
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const janitor = new CancellationJanitor({
      intervalMs: 1,
      sweep: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(20);
        running--;
        done++;
        return 0;
      },
    });
    janitor.start();
    try {
      await waitFor(() => done >= 3);
    } finally {
      janitor.stop();
    }
    assert.equal(maxRunning, 1);
  });

  it("stop cancels the schedule, also when called during a sweep", async () => {
    let calls = 0;
    let release: () => void = () => {};
    const janitor = new CancellationJanitor({
      intervalMs: 5,
      sweep: () => {
        calls++;
        return new Promise<number>((resolve) => {
          release = () => resolve(0);
        });
      },
    });
    janitor.start();
    assert.equal(janitor.running, true);
    await waitFor(() => calls === 1);
    janitor.stop();
    release();
    await sleep(40);
    assert.equal(calls, 1);
    assert.equal(janitor.running, false);
  });

  it("runOnce resolves the count, 0 for a non-integer result, null on failure", async () => {
    assert.equal(await new CancellationJanitor({ sweep: async () => 4 }).runOnce(), 4);
    assert.equal(await new CancellationJanitor({ sweep: async () => Number.NaN }).runOnce(), 0);
    assert.equal(
      await new CancellationJanitor({ sweep: () => Promise.reject(new Error("x")) }).runOnce(),
      null,
    );
  });

  it("rejects a bad interval", () => {
    for (const bad of [0, -1, Number.POSITIVE_INFINITY, Number.NaN]) {
      assert.throws(
        () => new CancellationJanitor({ intervalMs: bad, sweep: async () => 0 }),
        InvalidOptionError,
      );
    }
    assert.equal(new CancellationJanitor({ sweep: async () => 0 }).intervalMs, 60_000);
  });
});

describe("registry janitor", () => {
  it("removes expired rows on its own and publishes janitor and cleanup events", async () => {
    const janitorEvents = listen(ChannelName.cancellationJanitor);
    const cleanupEvents = listen(ChannelName.cancellationCleanup);
    const clock = { now: 1_000 };
    const registry = new CancellationRegistry({
      ttlMs: 100,
      janitorIntervalMs: 10,
      clock: () => clock.now,
    });
    try {
      await registry.cancel("stale", null, "s");
      clock.now += 101;
      await registry.cancel("fresh", null, "s");
      await waitFor(() => janitorEvents.messages.length >= 1);
      assert.deepEqual(janitorEvents.messages[0], { removed: 1 });
      assert.deepEqual(cleanupEvents.messages[0], { removed: 1, inFlightRemoved: 0 });
      assert.equal(await registry.isCancelled("stale", "s"), false);
      assert.equal(await registry.isCancelled("fresh", "s"), true);
    } finally {
      await registry.close();
      janitorEvents.stop();
      cleanupEvents.stop();
    }
  });

  it("keeps running when the store fails, reporting to onJanitorError", async () => {
    const errors: unknown[] = [];
    const registry = new CancellationRegistry({
      janitorIntervalMs: 5,
      onJanitorError: (e) => errors.push(e),
    });
    // Closing the store under the registry makes every cleanup reject.
    await registry.store.close();
    try {
      await waitFor(() => errors.length >= 2);
      assert.equal(registry.janitorRunning, true);
      assert.equal((errors[0] as { code?: string }).code, "CONDUIT_ERR_STORE_CLOSED");
    } finally {
      await registry.close();
    }
  });

  it("never keeps the process alive (the timer is unref'd)", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/janitor-exit.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", fixture], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const timeout = setTimeout(() => child.kill("SIGKILL"), 20_000);
    try {
      const [code, signal] = (await new Promise((resolve) => {
        child.on("exit", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
      })) as [number | null, NodeJS.Signals | null];
      assert.equal(signal, null, `the child had to be killed: ${output}`);
      assert.equal(code, 0, output);
      assert.match(output, /janitor running/);
    } finally {
      clearTimeout(timeout);
    }
  });
});
