/**
 * Optimistic mode's credit: how much unsettled value each payer has out, and whether one
 * more call may be released before its settlement. A payer is trusted while their unsettled
 * value stays under the per-payer cap and, when a balance reader is configured, under their
 * last known on-chain balance.
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
  private readonly unsettled = new Map<string, bigint>();
  private readonly balances = new Map<string, Balance>();

  constructor(
    /** Per payer, in atomic units. */
    private readonly cap: bigint,
    private readonly balance?: BalanceReader,
  ) {}

  /** Adds (or, negative, removes) a payer's unsettled value. */
  add(payer: string, delta: bigint): void {
    const next = (this.unsettled.get(payer) ?? 0n) + delta;
    if (next <= 0n) this.unsettled.delete(payer);
    else this.unsettled.set(payer, next);
  }

  /** Payers with unsettled value, and balances cached (for /metrics). */
  get sizes(): { payers: number; balances: number } {
    return { payers: this.unsettled.size, balances: this.balances.size };
  }

  /** Unsettled value of all payers together. */
  total(): bigint {
    let sum = 0n;
    for (const v of this.unsettled.values()) sum += v;
    return sum;
  }

  /** May `amount` more be released to this payer before it settles? */
  mayTrust(payer: string, amount: bigint, nowMs = steadyNow()): boolean {
    const exposure = (this.unsettled.get(payer) ?? 0n) + amount;
    if (exposure > this.cap) return false;
    if (!this.balance) return true;
    const cached = this.balances.get(payer);
    if (!cached || nowMs - cached.at > BALANCE_TTL_MS) this.refresh(payer, cached);
    // Unknown balance (no read yet, or the first still in flight): the cap bounds the
    // exposure until the first read arrives.
    return !cached || cached.at === 0 || cached.value >= exposure;
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
