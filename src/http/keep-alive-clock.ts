/**
 * One timer for every stream's keep-alive of one interval, instead of a timer each (and for the
 * silent-connection check, doors/silent-connections.ts, which ticks each connection once).
 *
 * Every member of a clock waits the same interval, so their deadlines come in the order they were
 * added, and a `Map` in insertion order is a deadline queue: the one timer is armed for the
 * oldest deadline; when it fires, every member whose deadline has come is taken out and ticked (a
 * repeating clock puts it back at the end, one interval later) and the timer is armed for the
 * next. Each member is ticked at its own deadline, as with a timer of its own, and holds one `Map`
 * entry while it waits instead of a timer object and its argument list: thousands of long calls
 * and streams each held one (docs/benchmarks.md, "Scale: 10 000 calls in flight"). The timer is
 * unref'd, as the per-stream timers are: keep-alives never keep a process running. At most
 * {@link TICKS_PER_TURN} members are ticked per callback; the rest follow a millisecond later, so
 * a burst of deadlines never holds the event loop for long (each member is then ticked at, or a
 * few milliseconds after, its deadline).
 *
 * Only for a way back whose door says any request's timer may serve it
 * (`ResponseTarget.sharedTimers`, transport.ts: node:http, where a timer is the process's). A fetch door
 * (Bun, Deno, Cloudflare's workerd) gives each stream a timer of its own: on workerd a timer
 * belongs to the request that armed it, so one timer ticking every request's stream never
 * reaches the others' (docs/runtimes.md).
 *
 * @example
 * ```ts
 * const pings = new KeepAliveClock<Stream>(15_000, true, (stream) => stream.ping());
 * pings.add(stream); // ticked every 15 s until
 * pings.remove(stream);
 * ```
 */
export class KeepAliveClock<T extends object> {
  /** Members waiting, oldest deadline first, each with its deadline (ms, an integer). */
  private readonly due = new Map<T, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly fire = (): void => this.run();

  /**
   * @param intervalMs - the wait of every member (a positive finite number of ms).
   * @param repeat - tick each member every interval until removed, else once.
   * @param tick - what a member's deadline does; it may remove or re-add members.
   */
  constructor(
    private readonly intervalMs: number,
    private readonly repeat: boolean,
    private readonly tick: (member: T) => void,
  ) {}

  /** Adds `member` (again: its deadline restarts), ticked one interval from now. */
  add(member: T): void {
    this.due.delete(member);
    this.due.set(member, Math.ceil(performance.now()) + this.intervalMs);
    if (this.timer === null) this.arm(this.intervalMs);
  }

  /** Takes `member` out; it is not ticked again. */
  remove(member: T): void {
    this.due.delete(member);
  }

  /** Members waiting. */
  get size(): number {
    return this.due.size;
  }

  private arm(delay: number): void {
    this.timer = setTimeout(this.fire, Math.max(1, delay));
    this.timer.unref();
  }

  private run(): void {
    this.timer = null;
    const now = Math.ceil(performance.now());
    let ticked = 0;
    for (const [member, deadline] of this.due) {
      if (deadline > now) {
        this.arm(deadline - now);
        return;
      }
      if (ticked === TICKS_PER_TURN) {
        // More are due: the rest a millisecond later, after the event loop has polled for I/O.
        this.arm(1);
        return;
      }
      ticked++;
      this.due.delete(member);
      // Back at the end before its tick, one interval later: every deadline already queued is
      // earlier, so the queue stays in deadline order (and the loop stops when it reaches it).
      if (this.repeat) this.due.set(member, now + this.intervalMs);
      try {
        this.tick(member);
      } catch {
        // One member's failure is its own (its write path ends it); the others still tick.
      }
    }
  }
}

/**
 * Most members one timer callback ticks. Streams opened together come due together (thousands of
 * writes at once); in turns of this many, the event loop reads sockets between them, so a cancel
 * or a new request waits for one turn (a few ms) rather than for the whole burst.
 */
const TICKS_PER_TURN = 256;

/**
 * Clocks shared by every exchange of the process on a door with `sharedTimers`,
 * by interval and kind (a server has one interval of each; a few servers of one process share).
 */
const clocks = new Map<string, KeepAliveClock<object>>();

/**
 * The shared clock of `intervalMs` for `kind` (one tick function per kind).
 *
 * @example
 * ```ts
 * sharedClock("ping", 15_000, true, pingExchange).add(exchange);
 * ```
 */
export function sharedClock<T extends object>(
  kind: string,
  intervalMs: number,
  repeat: boolean,
  tick: (member: T) => void,
): KeepAliveClock<T> {
  const key = `${kind} ${intervalMs}`;
  let clock = clocks.get(key) as KeepAliveClock<T> | undefined;
  if (clock === undefined) {
    clock = new KeepAliveClock<T>(intervalMs, repeat, tick);
    clocks.set(key, clock as unknown as KeepAliveClock<object>);
  }
  return clock;
}

/**
 * Members waiting in the shared clock of `intervalMs` for `kind`; 0 when there is none (tests,
 * metrics).
 *
 * @example
 * ```ts
 * sharedClockSize("ping", 15_000); // 10000 with 10 000 streams open on node:http
 * ```
 */
export function sharedClockSize(kind: string, intervalMs: number): number {
  return clocks.get(`${kind} ${intervalMs}`)?.size ?? 0;
}
