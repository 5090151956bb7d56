/**
 * Settlement: turning a verified authorization into a USDC transfer on chain. One interface,
 * two implementations (an x402 facilitator over HTTP, or the operator's own wallet); both
 * pass the same contract tests on the devnet.
 *
 * An EIP-3009 nonce can be used once on chain, so asking twice can never charge twice. The
 * hard part is an answer that never came: `unknown` means the transfer may or may not have
 * landed, and the caller must keep the payment pending and ask again later.
 */
import type { PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';

export type SettleResult =
  | { kind: 'settled'; tx: string }
  /** Definitive: nothing moved, and asking again will not change that. */
  | { kind: 'failed'; reason: string; message: string }
  /** The authorization's nonce is already used on chain. */
  | { kind: 'used'; tx?: string }
  /** No definitive answer (timeout, lost connection, not yet mined). */
  | { kind: 'unknown'; message: string; tx?: string };

export interface PaymentToSettle {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
}

export interface Settler {
  readonly kind: 'facilitator' | 'wallet';
  /** Start-up check (reachability, supported network); returns a problem or null. */
  check(): Promise<string | null>;
  /**
   * One attempt, bounded by `signal`. `uncertain` says an earlier attempt may have landed, so
   * the settler should look at the nonce on chain first when it can. `onSubmitted` gets a
   * transaction hash as soon as one exists.
   */
  settle(payment: PaymentToSettle, opts: { signal: AbortSignal; uncertain: boolean }, onSubmitted?: (tx: string) => void): Promise<SettleResult>;
  close(): Promise<void>;
}

/** Reasons settlers report, normalised to the x402 codes clients know. */
export function normaliseReason(reason: string): string {
  if (/insufficient_(balance|funds)/.test(reason)) return 'insufficient_funds';
  return reason;
}
