/**
 * The payment store of one process: claims in memory, records in the journal file
 * (journal.ts). The default, with no dependency beyond the data dir.
 */
import { Unsettled } from './exposure.js';
import { Journal, type AcceptedRecord, type JournalRetention, type JournalState, type PendingPayment } from './journal.js';
import { fingerprintOf, judgeClaim, readPaymentId, type ClaimSeen, type ClaimResult, type ClaimState, type FinalOutcome, type NewClaim, type PaymentStore, type SharedClaim } from './store.js';

interface LocalClaim extends ClaimSeen {
  record: AcceptedRecord;
  fingerprint: string;
  paymentId: string | null;
  expiresAt: number;
  validBefore: number;
  handed: boolean;
  state: ClaimState;
  tx: string | null;
  failure: string | null;
}

export class LocalStore implements PaymentStore {
  readonly kind = 'local';
  readonly available = true;
  private readonly claims = new Map<string, LocalClaim>();
  /** payer|payment-identifier id → claim id. */
  private readonly ids = new Map<string, string>();
  private pending: PendingPayment[];
  private readonly unsettled = new Unsettled();
  readonly totals: { settled: number; failed: number };

  private constructor(
    /** The journal file (exposed for tests that slow its disk). */
    readonly journal: Journal,
    state: JournalState,
    private readonly keepAfterExpiryMs: number,
  ) {
    this.totals = { settled: state.settled, failed: state.failed };
    this.pending = state.pending;
    for (const { record, outcome } of state.spent) {
      const claim = this.remember(record, true);
      claim.state = outcome.t;
      claim.tx = outcome.t === 'settled' ? outcome.tx : null;
      claim.failure = outcome.t === 'failed' ? outcome.reason : null;
    }
    // Whatever happened to them before the restart, they may have been submitted: public.
    for (const p of state.pending) {
      this.remember(p.record, true).tx = p.tx;
      this.unsettled.add(p.record.payer, BigInt(p.record.amount));
    }
  }

  /** Reads the journal in `dir` (see Journal.open) and takes its pending and spent authorizations. */
  static async open(dir: string, retention?: JournalRetention, keepAfterExpiryMs = 60_000): Promise<LocalStore> {
    const { journal, state } = await Journal.open(dir, retention);
    return new LocalStore(journal, state, keepAfterExpiryMs);
  }

  private remember(record: AcceptedRecord, handed: boolean, fingerprint = fingerprintOf(record.payload), paymentId = readPaymentId(record.payload) || null): LocalClaim {
    const validBefore = Number(record.payload?.payload?.authorization?.validBefore ?? 0);
    const claim: LocalClaim = {
      record,
      requestKey: record.requestKey,
      fingerprint,
      paymentId,
      validBefore,
      expiresAt: validBefore * 1000 + this.keepAfterExpiryMs,
      handed,
      state: 'pending',
      tx: null,
      failure: null,
    };
    this.claims.set(record.id, claim);
    if (paymentId) this.ids.set(idKey(record.id, paymentId), record.id);
    return claim;
  }

  claim(c: NewClaim): ClaimResult {
    const { id } = c.record;
    const existing = this.claims.get(id) ?? null;
    const owner = c.paymentId ? (this.ids.get(idKey(id, c.paymentId)) ?? null) : null;
    const verdict = judgeClaim(existing, c, owner);
    if (verdict === 'repeat') return { kind: 'repeat', claim: shared(existing!) };
    if (verdict !== 'new') return { kind: 'refused', reason: verdict };
    const { payer, amount } = c.record;
    const value = BigInt(amount);
    c.record.mode = c.limit !== null && this.unsettled.get(payer) + value <= c.limit ? 'optimistic' : 'sync';
    this.journal.write(c.record); // throws when the write fails: nothing claimed
    const claim = this.remember(c.record, false, c.fingerprint, c.paymentId);
    claim.expiresAt = c.expiresAt;
    this.unsettled.add(payer, value);
    return { kind: 'new', mode: c.record.mode, synced: this.journal.sync() };
  }

  handOver(id: string): Promise<boolean> {
    const claim = this.claims.get(id);
    if (claim?.state !== 'pending') return Promise.resolve(false);
    claim.handed = true;
    return Promise.resolve(true);
  }

  withdraw(id: string): Promise<boolean> {
    const claim = this.claims.get(id);
    if (!claim) return Promise.resolve(true);
    if (claim.handed) return Promise.resolve(false);
    // The record may still reach the disk: this note keeps a restart from settling it.
    this.journal.note({ t: 'failed', id, at: Date.now(), reason: 'unrecorded' });
    if (claim.state === 'pending') this.unsettled.add(claim.record.payer, -BigInt(claim.record.amount));
    this.forget(id, claim);
    return Promise.resolve(true);
  }

  submitted(id: string, tx: string): void {
    const claim = this.claims.get(id);
    if (claim) claim.tx = tx;
    this.journal.note({ t: 'submitted', id, at: Date.now(), tx });
  }

  finish(id: string, outcome: FinalOutcome): Promise<void> {
    const claim = this.claims.get(id);
    if (claim) {
      if (claim.state === 'pending') this.unsettled.add(claim.record.payer, -BigInt(claim.record.amount));
      claim.state = outcome.t;
      claim.tx = outcome.t === 'settled' ? outcome.tx : null;
      claim.failure = outcome.t === 'failed' ? outcome.reason : null;
    }
    const at = Date.now();
    outcome.t === 'settled' ? this.totals.settled++ : this.totals.failed++;
    if (outcome.t === 'settled') {
      this.journal.note({ t: 'settled', id, at, tx: outcome.tx });
      return Promise.resolve();
    }
    // Durable before the payer is told "nothing was charged": a failure lost in a crash
    // would be retried after the restart and could then charge them.
    return this.journal.append({ t: 'failed', id, at, reason: outcome.reason });
  }

  lookup(id: string): Promise<(SharedClaim & { body: Buffer | null }) | null> {
    const claim = this.claims.get(id);
    return Promise.resolve(claim ? { ...shared(claim), body: null } : null);
  }

  shareBody(): void {}

  watch(adopt: (pending: PendingPayment[]) => void): void {
    const pending = this.pending;
    this.pending = [];
    if (pending.length) adopt(pending);
  }

  sweep(nowMs: number): void {
    for (const [id, claim] of this.claims) if (claim.state !== 'pending' && claim.expiresAt < nowMs) this.forget(id, claim);
    if (this.journal.rotationDue) this.journal.rotate(this.journalState(nowMs));
  }

  /** What the journal must keep: the pending authorizations, the spent ones still valid, the totals. */
  journalState(nowMs = Date.now()): JournalState {
    const state: JournalState = { pending: [], spent: [], settled: this.totals.settled, failed: this.totals.failed };
    for (const c of this.claims.values()) {
      if (c.state === 'pending') state.pending.push({ record: c.record, tx: c.tx });
      else if (c.validBefore * 1000 > nowMs) {
        const outcome = c.state === 'settled' ? { t: 'settled' as const, id: c.record.id, at: nowMs, tx: c.tx } : { t: 'failed' as const, id: c.record.id, at: nowMs, reason: c.failure ?? 'unknown' };
        state.spent.push({ record: c.record, outcome });
      }
    }
    return state;
  }

  sizes() {
    return { claims: this.claims.size, ids: this.ids.size, unsettledPayers: this.unsettled.size, journalBytes: this.journal.size() };
  }

  unsettledTotal(): bigint {
    return this.unsettled.total();
  }

  close(): Promise<void> {
    return this.journal.close();
  }

  private forget(id: string, claim: LocalClaim): void {
    this.claims.delete(id);
    if (claim.paymentId) this.ids.delete(idKey(id, claim.paymentId));
  }
}

function shared(c: LocalClaim): SharedClaim {
  return { state: c.state, mode: c.record.mode, tx: c.tx, failure: c.failure };
}

const idKey = (id: string, paymentId: string) => `${id.split(':')[0]}|${paymentId}`;
