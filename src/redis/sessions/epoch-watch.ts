/**
 * Whether Redis still holds what this node wrote, told by an epoch token: the first node to
 * connect sets `{t}:epoch`; Redis restarted without persistence (or flushed) has none, so the
 * first node back sets a new one and every node that remembered the old one sees it changed.
 *
 * Until a node has read the token again after losing its connection, a session it holds but
 * Redis lacks may be missing because Redis came back empty (to be written back), not because the
 * session ended: {@link EpochWatch.known} lets such a miss wait for that read. A read answers for
 * the connection it was sent on, so only one sent since the latest loss settles the doubt.
 */
import { randomBytes } from "node:crypto";

/** Options of {@link EpochWatch}. */
export interface EpochWatchOptions {
  /** Sets `token` unless a token is there; resolves the token there, or null without an answer. */
  readonly read: (token: string) => Promise<string | null>;
  /** Whether a read can be sent now (the connection is up). */
  readonly canSend: () => boolean;
  /**
   * The token changed: Redis lost what this node wrote. Runs before any waiting miss is let go;
   * resolves what {@link EpochWatch.check} waits for after that (the write-back).
   */
  readonly lost: () => Promise<void>;
}

/** An unsettled doubt: a promise and the function that resolves it. */
interface Doubt {
  readonly settled: Promise<void>;
  readonly settle: () => void;
}

/**
 * One store's epoch token and the doubt about it.
 *
 * @example
 * ```ts
 * const epoch = new EpochWatch({ read, canSend: () => client.status === "ready", lost: writeBack });
 * connection.on("close", () => epoch.connectionLost());
 * connection.on("ready", () => void epoch.check());
 * await epoch.known(2_000); // before taking a missing record for ended
 * ```
 */
export class EpochWatch {
  private readonly options: EpochWatchOptions;
  /** The token this node last read (null: not yet read). */
  private token: string | null = null;
  /** The latest check, what {@link latest} returns. */
  private last: Promise<boolean> = Promise.resolve(false);
  /** Whether a read is waiting for Redis's answer. */
  private reading = false;
  /** Counts the connection's losses: a read settles the doubt only for its own connection. */
  private generation = 0;
  /** Open from a loss of the connection (and from the start) until a read since then answered. */
  private doubt: Doubt | null = openDoubt();

  constructor(options: EpochWatchOptions) {
    this.options = options;
  }

  /** The connection dropped: what Redis holds is in doubt until the token is read again. */
  connectionLost(): void {
    this.generation++;
    this.doubt ??= openDoubt();
  }

  /** Something else may have missed a restart (a subscription was away): read the token again. */
  doubtIt(): void {
    this.doubt ??= openDoubt();
  }

  /** The latest check (a miss of a kept record waits for it). */
  latest(): Promise<boolean> {
    return this.last;
  }

  /**
   * Reads the token (setting one when there is none); when it is gone or changed since this node
   * last read it, calls `lost` and waits for it. Resolves whether the loss was seen now.
   */
  check(): Promise<boolean> {
    const generation = this.generation;
    const check = (async () => {
      this.reading = true;
      const seen = await this.options.read(randomBytes(12).toString("base64url")).finally(() => {
        this.reading = false;
      });
      if (typeof seen !== "string") return false;
      const before = this.token;
      this.token = seen;
      const lostNow = before !== null && before !== seen;
      // `lost` starts (marking what is to be written back) before anyone waiting is let go: a
      // miss then finds its session pending, not gone.
      const writeBack = lostNow ? this.options.lost() : null;
      if (generation === this.generation) this.settle();
      if (writeBack === null) return false;
      await writeBack;
      return true;
    })();
    this.last = check;
    return check;
  }

  /**
   * Resolves once the token has been read on the current connection (at once when it has), or
   * after `boundMs`, or at {@link settle}; starts a read when none is under way and one can be
   * sent (a miss may come before the reconnect's own check has started).
   */
  async known(boundMs: number): Promise<void> {
    const doubt = this.doubt;
    if (doubt === null) return;
    if (!this.reading && this.options.canSend()) void this.check();
    if (!Number.isFinite(boundMs)) return doubt.settled;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      doubt.settled,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, boundMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Lets every waiting miss go (the token was read, or the store closes). */
  settle(): void {
    const doubt = this.doubt;
    this.doubt = null;
    doubt?.settle();
  }
}

function openDoubt(): Doubt {
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { settled, settle };
}
