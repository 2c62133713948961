/**
 * Bytes held per tenant, then in all, for a table that keeps what clients sent or caused (a
 * session record, a question waiting for its answer, a listener's filter). The tenant is the
 * bucket that pays (the principal, else the client's IP bucket: docs/tenancy.md), never a session,
 * so opening more sessions never multiplies a tenant's share.
 *
 * The bucket's own budget is the only one that refuses. The global budget never refuses a tenant
 * within its own: it names entries to drop, oldest first from the bucket holding the most bytes,
 * so the tenant filling the table pays first and a small one is reached only after every larger
 * one (the same rule as the task store's and the subscription table's).
 */

/** Why {@link ByteLedger.add} refused. */
export type LedgerRefusal = "bucket-full" | "full";

/** Options of a {@link ByteLedger}. */
export interface ByteLedgerOptions {
  /** Most bytes one bucket may hold (`Infinity`: no bound). */
  readonly maxBytesPerBucket: number;
  /** Most bytes held in all (`Infinity`: no bound; 0 refuses everything). */
  readonly maxBytes: number;
}

interface Holding {
  readonly name: string;
  /** Its entries, oldest first (a Set keeps insertion order). */
  readonly entries: Set<unknown>;
  bytes: number;
}

interface Charge {
  readonly holding: Holding;
  readonly bytes: number;
}

/**
 * The ledger of one table.
 *
 * @example
 * ```ts
 * const ledger = new ByteLedger<Ask>({ maxBytesPerBucket: 1_048_576, maxBytes: 16 * 1_048_576 });
 * const outcome = ledger.add(ask, "ip:203.0.113.7", 2_048);
 * if (typeof outcome === "string") refuse(outcome);
 * else for (const evicted of outcome) evicted.withdraw();
 * ```
 */
export class ByteLedger<T> {
  readonly maxBytesPerBucket: number;
  readonly maxBytes: number;
  private readonly charges = new Map<T, Charge>();
  private readonly buckets = new Map<string, Holding>();
  private held = 0;

  constructor(options: ByteLedgerOptions) {
    this.maxBytesPerBucket = options.maxBytesPerBucket;
    this.maxBytes = options.maxBytes;
  }

  /** Bytes held in all. */
  get bytes(): number {
    return this.held;
  }

  /** Entries held in all. */
  get size(): number {
    return this.charges.size;
  }

  /** Bytes `bucket` holds. */
  bytesOf(bucket: string): number {
    return this.buckets.get(bucket)?.bytes ?? 0;
  }

  /** Whether `bucket` could take `bytes` more (its own budget; the global one never refuses). */
  fits(bucket: string, bytes: number): boolean {
    return this.maxBytes > 0 && this.bytesOf(bucket) + bytes <= this.maxBytesPerBucket;
  }

  /**
   * Charges `entry` to `bucket`: refused when the bucket's own budget would be exceeded
   * (`"bucket-full"`) or the table holds nothing (`"full"`: a global budget of 0); otherwise the
   * entries dropped to stay within the global budget (already forgotten here: the caller ends
   * them), largest bucket first. An entry charged again is first released.
   */
  add(entry: T, bucket: string, bytes: number): LedgerRefusal | T[] {
    this.remove(entry);
    if (this.maxBytes <= 0) return "full";
    if (!this.fits(bucket, bytes)) return "bucket-full";
    const evicted: T[] = [];
    while (this.held + bytes > this.maxBytes) {
      const victim = this.oldestOfLargest();
      if (victim === undefined) break;
      this.remove(victim);
      evicted.push(victim);
    }
    let holding = this.buckets.get(bucket);
    if (holding === undefined) {
      holding = { name: bucket, entries: new Set(), bytes: 0 };
      this.buckets.set(bucket, holding);
    }
    holding.entries.add(entry);
    holding.bytes += bytes;
    this.held += bytes;
    this.charges.set(entry, { holding, bytes });
    return evicted;
  }

  /** Releases `entry`'s charge; false when it held none. */
  remove(entry: T): boolean {
    const charge = this.charges.get(entry);
    if (charge === undefined) return false;
    this.charges.delete(entry);
    const { holding, bytes } = charge;
    holding.entries.delete(entry);
    holding.bytes -= bytes;
    this.held -= bytes;
    if (holding.entries.size === 0) this.buckets.delete(holding.name);
    return true;
  }

  /** Forgets everything. */
  clear(): void {
    this.charges.clear();
    this.buckets.clear();
    this.held = 0;
  }

  /** The oldest entry of the bucket holding the most bytes (among equals, the name sorting first). */
  private oldestOfLargest(): T | undefined {
    let best: Holding | undefined;
    for (const holding of this.buckets.values()) {
      if (
        best === undefined ||
        holding.bytes > best.bytes ||
        (holding.bytes === best.bytes && holding.name < best.name)
      ) {
        best = holding;
      }
    }
    return best?.entries.values().next().value as T | undefined;
  }
}

/** UTF-8 bytes of a text (0 for null or undefined). */
export function utf8Bytes(text: string | null | undefined): number {
  return text == null ? 0 : Buffer.byteLength(text, "utf8");
}
