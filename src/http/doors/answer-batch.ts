/**
 * Whole answers written together, once the event loop's I/O phase is over, instead of one by one
 * as each is ready.
 *
 * Why: when a client on the same host (a local proxy or sidecar, an agent on the developer's
 * machine, a load generator) waits in `epoll_wait`, the write that delivers its answer also wakes
 * it, and on loopback the kernel does that inside the server's `write`, on the server's CPU. Node
 * runs the callbacks of every socket one poll found ready before it runs `setImmediate`'s
 * (https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick), so answers
 * released there leave back to back: the first wakes the client, which finds the others already
 * there. On a 2-vCPU VM the client then slept once per 30 answers instead of once per answer, and
 * the server's CPU per request fell by about a quarter (docs/profile.md, "Thirteenth round"). An
 * answer waits no longer than the rest of the turn's ready requests take to run.
 *
 * Bounds: the batch holds at most {@link MAX_HELD_ANSWERS} answers and
 * {@link MAX_HELD_CHARS} characters; the answer that reaches either releases the whole batch at
 * once, and a larger answer is never held. No bound per tenant: the batch is emptied every turn,
 * holds only finished answers (already in memory), and refuses nothing, so a tenant's answers can
 * only make the batch leave sooner, never keep another tenant's answer longer than the turn.
 */

/** An answer whose last write can wait in the batch. */
export interface HeldAnswer {
  /** Writes the answer's last chunk now. Never throws. */
  release(chunk: string): void;
}

/** At most this many answers wait at once; the one that reaches it releases them all. */
export const MAX_HELD_ANSWERS = 32;

/** At most this many characters (UTF-16 code units) wait at once; a longer answer is not held. */
export const MAX_HELD_CHARS = 1 << 20;

/**
 * The answers waiting, with their last chunks at the same index (the batch keeps the chunk, so a
 * response carries no field for it: a held call's objects stay as small as they were,
 * docs/profile.md "Held calls at 10 000"). A dropped answer's slot is null.
 */
let answers: Array<HeldAnswer | null> = [];
let chunks: string[] = [];
let heldChars = 0;
let scheduled = false;

/**
 * Holds `answer`'s last `chunk` until the end of this turn's I/O phase, or releases the batch at
 * once when it is full. False when `chunk` is over {@link MAX_HELD_CHARS}: the caller writes it
 * itself, now.
 *
 * @example
 * ```ts
 * if (!holdAnswer(this, chunk)) res.end(chunk);
 * ```
 */
export function holdAnswer(answer: HeldAnswer, chunk: string): boolean {
  if (chunk.length > MAX_HELD_CHARS) return false;
  answers.push(answer);
  chunks.push(chunk);
  heldChars += chunk.length;
  if (answers.length >= MAX_HELD_ANSWERS || heldChars >= MAX_HELD_CHARS) {
    releaseHeldAnswers();
  } else if (!scheduled) {
    scheduled = true;
    setImmediate(releaseAtTurnEnd);
  }
  return true;
}

/**
 * True while `answer` waits in the batch (a scan of at most {@link MAX_HELD_ANSWERS}; asked
 * rarely: whether an answer already ended).
 */
export function isHeld(answer: HeldAnswer): boolean {
  return answers.includes(answer);
}

/** Takes `answer` out of the batch unwritten (its response was destroyed). */
export function dropHeld(answer: HeldAnswer): void {
  const at = answers.indexOf(answer);
  if (at !== -1) answers[at] = null;
}

/** How many answers wait now, dropped ones included (for tests). */
export function heldAnswerCount(): number {
  return answers.length;
}

function releaseAtTurnEnd(): void {
  scheduled = false;
  releaseHeldAnswers();
}

/** Writes every waiting answer, in the order they were held. */
function releaseHeldAnswers(): void {
  // Taken first: an answer released may, through its response's events, hold another one.
  const released = answers;
  const their = chunks;
  answers = [];
  chunks = [];
  heldChars = 0;
  for (let i = 0; i < released.length; i++) {
    released[i]?.release(their[i] as string);
  }
}
