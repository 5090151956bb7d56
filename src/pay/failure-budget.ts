/**
 * A budget of failed payments per client address. Verifying a payment's signature costs
 * the serving thread about 0.1–0.15 ms, so a flood of forged payments could starve every
 * other request. Each client address gets a bucket of `burst` failures, refilled at
 * `perMinute`; once it is empty, that client's payments are refused with 429 before any
 * decoding or signature work, until the bucket refills. Only failures are charged: a payer
 * whose payments verify is never slowed. Framework-free: the adapters give the address.
 */

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Addresses tracked at most; beyond it the oldest are forgotten (a flood of addresses costs
 * memory, not correctness). Below it, `sweep` forgets every address whose bucket has refilled,
 * so the table holds about the addresses of the last refill time (20 s by default).
 */
const MAX_CLIENTS = 100_000;

export class FailureBudget {
  private readonly buckets = new Map<string, Bucket>();
  /**
   * Replica mode: told each failure charged here, so the other replicas charge it too
   * (src/replica/failure-share.ts). The budget is still enforced from this table alone: no
   * payment waits on another replica.
   */
  share: ((client: string) => void) | null = null;

  constructor(
    private readonly burst: number,
    private readonly perMinute: number,
  ) {}

  /** Client addresses remembered (at most MAX_CLIENTS). */
  get size(): number {
    return this.buckets.size;
  }

  get enabled(): boolean {
    return this.burst > 0;
  }

  /** Seconds until this client may present a payment again; 0 when it may now. */
  retryAfter(client: string, nowMs: number): number {
    if (!this.enabled) return 0;
    const b = this.refill(client, nowMs);
    if (!b || b.tokens >= 1) return 0;
    return Math.max(1, Math.ceil(((1 - b.tokens) * 60) / this.perMinute));
  }

  /** Charges one failed payment to the client. */
  charge(client: string, nowMs: number): void {
    if (!this.enabled) return;
    this.share?.(client);
    this.chargeShared(client, nowMs);
  }

  /** Charges `n` failures another replica saw (not shared again). */
  chargeShared(client: string, nowMs: number, n = 1): void {
    if (!this.enabled) return;
    const b = this.refill(client, nowMs) ?? { tokens: this.burst, at: nowMs };
    b.tokens = Math.max(0, b.tokens - n);
    // Re-inserted: Map order is then least recently charged first, for eviction.
    this.buckets.delete(client);
    this.buckets.set(client, b);
    if (this.buckets.size > MAX_CLIENTS) this.buckets.delete(this.buckets.keys().next().value!);
  }

  /**
   * Forgets the clients whose bucket is full again: nothing to remember. Oldest charged first,
   * stopping at the first still refilling, so a sweep costs what it removes.
   */
  sweep(nowMs: number): void {
    for (const [client, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.at) / 60_000) * this.perMinute < this.burst) break;
      this.buckets.delete(client);
    }
  }

  private refill(client: string, nowMs: number): Bucket | undefined {
    const b = this.buckets.get(client);
    if (!b) return undefined;
    b.tokens = Math.min(this.burst, b.tokens + ((nowMs - b.at) / 60_000) * this.perMinute);
    b.at = nowMs;
    if (b.tokens >= this.burst) this.buckets.delete(client); // full again: nothing to remember
    return b;
  }
}
