/**
 * What the payment core shares, and with whom: the claim on each authorization, its outcome,
 * and the record of both. One process keeps them in memory and the journal file
 * (local-store.ts); replicas keep them in Redis (redis-store.ts), so that an authorization is
 * claimed once across all of them and any replica settles what another accepted. The core
 * (payments.ts) knows only this interface; one contract suite (test/payment-store.test.ts)
 * runs against both implementations.
 *
 * An authorization is identified by (payer, nonce): `payer:nonce`, lower case.
 */
import type { AcceptedRecord, PendingPayment } from './journal.js';
import type { PaymentPayload } from './payment-header.js';

export interface NewClaim {
  record: AcceptedRecord;
  /** Everything the authorization binds besides (payer, nonce): a repeat must match it. */
  fingerprint: string;
  /** The payer's payment-identifier id, if the payment carried one. */
  paymentId: string | null;
  /** When the claim may be forgotten (ms): the authorization has expired and late retries have had their time. */
  expiresAt: number;
  /**
   * Optimistic mode: the most unsettled value the payer may have with this call in (see
   * exposure.ts); null settles it synchronously. The store counts every claim's amount as
   * the payer's unsettled value until its outcome, decides the mode against this limit in
   * the same atomic step as the claim, and writes it into `record.mode`.
   */
  limit: bigint | null;
}

export type ClaimState = 'pending' | 'settled' | 'failed';

/** A claim as every replica sees it. */
export interface SharedClaim {
  state: ClaimState;
  /**
   * The mode it was accepted in. Redis learns it from the accepting replica at the hand-over
   * to a settler, moments after the claim: until then other replicas read 'sync', and a
   * repeat there waits for the outcome or the hand-over (never a free answer).
   */
  mode: 'sync' | 'optimistic';
  tx: string | null;
  failure: string | null;
}

export type ClaimResult =
  /** Claimed and recorded ("written"); `synced` resolves once the record is durable, or rejects when it cannot be. */
  | { kind: 'new'; mode: 'sync' | 'optimistic'; synced: Promise<void> }
  /** The same authorization for the same request, and provably from the payer: it shares the first one's outcome. */
  | { kind: 'repeat'; claim: SharedClaim }
  | { kind: 'refused'; reason: ClaimRefusal };

export type ClaimRefusal =
  /** The nonce was presented with a different authorization. */
  | 'nonce_reused'
  /** The authorization already paid for another request. */
  | 'other_request'
  /** Handed to a settler (so public) and the repeat lacks the original's payment-identifier id. */
  | 'published'
  /** The payment-identifier id belongs to another payment. */
  | 'id_conflict';

export type FinalOutcome = { t: 'settled'; tx: string | null } | { t: 'failed'; reason: string };

export interface PaymentStore {
  readonly kind: 'local' | 'redis';
  /**
   * Claims (payer, nonce) and the payment-identifier id and records the accepted
   * authorization, in one atomic step; or says why it is a repeat or a refusal. Rejects
   * when the store cannot answer: then the claim may or may not have been made, and the
   * caller withdraws it (`withdraw`) before telling the payer nothing was charged. A store in
   * this process answers at once (a value, or a throw), sparing the paid path a turn of the
   * event loop.
   */
  claim(c: NewClaim): ClaimResult | Promise<ClaimResult>;
  /**
   * Marks the authorization as handed to a settler, before the first attempt: from then on a
   * repeat without the original's payment-identifier id is a replay. Resolves false when the
   * claim was withdrawn (nothing may be settled).
   */
  handOver(id: string): Promise<boolean>;
  /**
   * Undoes a claim that was never confirmed to the payer: recorded as failed ("unrecorded"),
   * its payment-identifier id free again. Resolves false when it was already handed to a
   * settler (then it is settled as usual).
   */
  withdraw(id: string): Promise<boolean>;
  /** A settlement transaction was sent; recorded without waiting (a lost record only costs a look at the chain). */
  submitted(id: string, tx: string): void;
  /** Records the outcome; resolves once it is as durable as an accepted record. */
  finish(id: string, outcome: FinalOutcome): Promise<void>;
  /** The claim as it stands, with the paid answer when one was shared; null when unknown or expired. */
  lookup(id: string): Promise<(SharedClaim & { body: Buffer | null }) | null>;
  /** Keeps a paid answer where other replicas can serve it to the payer's retries (a store of one process has no need). */
  shareBody(id: string, body: Buffer, expiresAt: number): void;
  /**
   * Hands pending authorizations to `adopt` for settling: at start those left by this
   * process's previous run, and, with replicas, those of a replica that stopped heartbeating.
   */
  watch(adopt: (pending: PendingPayment[]) => void): void;
  /** Settled and failed payments recorded: local, since the journal began; Redis, by this replica since it started. */
  readonly totals: { settled: number; failed: number };
  /** Periodic upkeep (forgetting expired claims, compacting the journal file). */
  sweep(nowMs: number): void;
  /** Sizes for /metrics: claims and unsettled payers held in memory, bytes of journal kept locally. */
  sizes(): { claims: number; ids: number; unsettledPayers: number; journalBytes: number };
  /** Unsettled value of all payers together, when this process holds the count (null: it is in Redis). */
  unsettledTotal(): bigint | null;
  /** Is the store reachable right now? (A local one always is.) */
  readonly available: boolean;
  close(): Promise<void>;
}

/** What a store holds of a claim, for judging a new one on the same (payer, nonce). */
export interface ClaimSeen {
  fingerprint: string;
  requestKey: string;
  paymentId: string | null;
  handed: boolean;
  state: ClaimState;
}

/** The decision every store makes on a claim, over what it has for this id (shared so both stores decide alike). */
export function judgeClaim(existing: ClaimSeen | null, c: NewClaim, idOwner: string | null): ClaimRefusal | 'repeat' | 'new' {
  if (existing) {
    if (existing.fingerprint !== c.fingerprint) return 'nonce_reused';
    if (c.paymentId && idOwner !== null && idOwner !== c.record.id) return 'id_conflict';
    if (existing.requestKey !== c.record.requestKey) return 'other_request';
    const withId = existing.paymentId !== null && existing.paymentId === c.paymentId;
    if (!withId && (existing.handed || existing.state !== 'pending')) return 'published';
    return 'repeat';
  }
  if (c.paymentId && idOwner !== null) return 'id_conflict';
  return 'new';
}

/** Everything an authorization binds besides (payer, nonce): a repeat must match it exactly. */
export function fingerprintOf(payload: PaymentPayload): string {
  const a = payload.payload.authorization;
  return [a.to, a.value, a.validAfter, a.validBefore, payload.payload.signature].join('|').toLowerCase();
}

const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/** The payment-identifier extension's id: undefined when absent, false when malformed. */
export function readPaymentId(payload: PaymentPayload): string | undefined | false {
  const ext = payload.extensions?.['payment-identifier'] as { info?: { id?: unknown } } | undefined;
  const id = ext?.info?.id;
  if (id === undefined) return undefined;
  return typeof id === 'string' && PAYMENT_ID.test(id) ? id : false;
}
