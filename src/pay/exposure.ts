/**
 * Optimistic mode's credit. A payer is trusted while their unsettled value stays under a
 * limit: the per-payer cap and, when a balance reader is configured, their last known
 * on-chain balance. The limit is computed here (`Exposure`, with the balance cache); the
 * unsettled value is counted where the claims are (the payment store: `Unsettled` in one
 * process, a counter in Redis shared by replicas), so the check and the count are one atomic
 * step with the claim.
 */
import { steadyNow } from '../clock.js';

/** Reads a payer's on-chain USDC balance (atomic units). */
export type BalanceReader = (payer: string) => Promise<bigint>;

const BALANCE_TTL_MS = 15_000;

interface Balance {
  value: bigint;
  at: number;
  loading: boolean;
}

export class Exposure {
  private readonly balances = new Map<string, Balance>();

  constructor(
    /** Per payer, in atomic units. */
    private readonly cap: bigint,
    private readonly balance?: BalanceReader,
  ) {}

  /** Balances cached (for /metrics). */
  get size(): number {
    return this.balances.size;
  }

  /**
   * The most unsettled value this payer may have once one more call is released before it
   * settles. An unknown balance (no read yet, or the first still in flight) leaves the cap
   * as the bound until the first read arrives.
   */
  limit(payer: string, nowMs = steadyNow()): bigint {
    if (!this.balance) return this.cap;
    const cached = this.balances.get(payer);
    if (!cached || nowMs - cached.at > BALANCE_TTL_MS) this.refresh(payer, cached);
    return !cached || cached.at === 0 || cached.value >= this.cap ? this.cap : cached.value;
  }

  /** Forgets balances nobody asked about for a while. */
  sweep(nowMs: number): void {
    for (const [payer, b] of this.balances) if (!b.loading && nowMs - b.at > 10 * BALANCE_TTL_MS) this.balances.delete(payer);
  }

  private refresh(payer: string, cached: Balance | undefined): void {
    if (cached?.loading) return;
    const slot = cached ?? { value: 0n, at: 0, loading: true };
    slot.loading = true;
    if (!cached) this.balances.set(payer, slot);
    this.balance!(payer).then(
      (value) => Object.assign(slot, { value, at: steadyNow(), loading: false }),
      () => {
        slot.loading = false;
        if (slot.at === 0) this.balances.delete(payer);
      },
    );
  }
}

/** Unsettled value per payer (atomic units), in one process. A payer leaves once settled. */
export class Unsettled {
  private readonly values = new Map<string, bigint>();

  get(payer: string): bigint {
    return this.values.get(payer) ?? 0n;
  }

  add(payer: string, delta: bigint): void {
    const next = this.get(payer) + delta;
    if (next <= 0n) this.values.delete(payer);
    else this.values.set(payer, next);
  }

  get size(): number {
    return this.values.size;
  }

  total(): bigint {
    let sum = 0n;
    for (const v of this.values.values()) sum += v;
    return sum;
  }
}
