/**
 * What every era's asker does the same way: `elicit`, `elicitUrl`, `sample` and `roots` prepare
 * their question for the client's declared capabilities (prepared-ask.ts) and reject at once with
 * what is wrong; only a well-formed question reaches the subclass, which sends it its own way
 * (a 2025-11-25 server request, a 2026-07-28 input-required result, a task's record). Question
 * keys are chosen and checked here too.
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type {
  AskOptions,
  ClientAsker,
  ElicitResult,
  ElicitSchema,
  PreparedAsk,
  RootsResult,
  SampleRequest,
  SampleResult,
} from "./client-asker.js";
import { prepareElicit, prepareElicitUrl, prepareRoots, prepareSample } from "./prepared-ask.js";

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The shared half of an asker.
 *
 * @example
 * ```ts
 * class Recorder extends ClientAskerBase {
 *   protected declared() { return { roots: {} }; }
 *   protected ask(prepared: PreparedAsk) { return Promise.resolve(prepared.request); }
 * }
 * ```
 */
export abstract class ClientAskerBase implements ClientAsker {
  /** What the handler saved in an earlier round; only input-required rounds carry one. */
  readonly savedState: unknown = undefined;
  /** Asks made so far (default keys number them). */
  private asked = 0;

  /** Only input-required rounds keep a state between rounds; elsewhere nothing is saved. */
  saveState(_value: unknown): void {}

  elicit<T>(
    message: string,
    schema: ElicitSchema | StandardSchemaV1,
    options?: AskOptions,
  ): Promise<ElicitResult<T>> {
    return this.send(prepareElicit(this.declared(), message, schema), options) as Promise<
      ElicitResult<T>
    >;
  }

  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult<undefined>> {
    return this.send(prepareElicitUrl(this.declared(), message, url), options) as Promise<
      ElicitResult<undefined>
    >;
  }

  sample(request: SampleRequest, options?: AskOptions): Promise<SampleResult> {
    return this.send(prepareSample(this.declared(), request), options) as Promise<SampleResult>;
  }

  roots(options?: AskOptions): Promise<RootsResult> {
    return this.send(prepareRoots(this.declared()), options) as Promise<RootsResult>;
  }

  /** The capabilities the client declared (what questions may be asked). */
  protected abstract declared(): Readonly<Record<string, unknown>>;

  /** Sends one well-formed question; resolves the checked answer. */
  protected abstract ask(prepared: PreparedAsk, options: AskOptions | undefined): Promise<unknown>;

  /**
   * The question's key: the caller's, else its kind and its position among this asker's asks
   * (`elicit-1`, `sample-2`…); a TypeError for a key outside 1-64 characters of
   * `A-Z a-z 0-9 _ . -`.
   */
  protected keyOf(prepared: PreparedAsk, options: AskOptions | undefined): string | TypeError {
    this.asked++;
    const key = options?.key ?? `${prepared.kind}-${this.asked}`;
    if (typeof key !== "string" || !KEY.test(key)) {
      return new TypeError("ask key: 1-64 characters of A-Z a-z 0-9 _ . -");
    }
    return key;
  }

  private send(prepared: PreparedAsk | Error, options: AskOptions | undefined): Promise<unknown> {
    if (prepared instanceof Error) return Promise.reject(prepared);
    return this.ask(prepared, options);
  }
}
