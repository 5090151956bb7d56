/**
 * The payment core: from a presented x402 payload to "release this data" or "refuse", with
 * nothing of HTTP or uWebSockets.js in it (the front end and the MCP endpoint are thin
 * adapters over `authorize`).
 *
 * An authorization buys one call. It is identified by (payer, nonce):
 * - the first time it is seen it is verified locally (about 0.15 ms), claimed and recorded in
 *   the payment store (store.ts: this process's journal, or Redis shared by replicas), and
 *   settled, synchronously or in the background depending on the mode;
 * - seen again for the same request it shares the first one's outcome (the same data,
 *   charged once, computed once), but only when the repeat proves it comes from the payer:
 *   it carries the original's `payment-identifier` id, or it arrives before the authorization
 *   was handed to a settler. A settlement transaction publishes the whole authorization, so
 *   after that the authorization alone proves nothing; the id never leaves the payer and us;
 * - seen for another request, or with different fields under the same nonce, it is refused
 *   as a replay.
 * Claims live until the authorization expires; later the chain's nonce check takes over.
 */
import { log } from '../log.js';
import { Exposure, type BalanceReader } from './exposure.js';
import { FailureBudget } from './failure-budget.js';
import type { AcceptedRecord, PendingPayment } from './journal.js';
import { NETWORK, type PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';
import type { SettleResult, Settler } from './settler.js';
import { fingerprintOf, readPaymentId, type ClaimRefusal, type ClaimResult, type ClaimState, type FinalOutcome, type PaymentStore, type SharedClaim } from './store.js';
import { verifyPayment } from './verify.js';
import { steadyNow } from '../clock.js';

export type SettlementMode = 'sync' | 'optimistic';

export type Outcome =
  /** `settlement` is the x402 SettlementResponse (PAYMENT-RESPONSE, or MCP's x402/payment-response). */
  { kind: 'paid'; body: Buffer; settlement: object } | { kind: 'refused'; status: 400 | 402 | 409 | 503; code: string; message: string };

export type { BalanceReader } from './exposure.js';

export interface PaymentsOptions {
  /** Where claims and records live: this process (local-store.ts) or Redis (redis-store.ts). */
  store: PaymentStore;
  settler: Settler;
  mode: SettlementMode;
  /** Per payer, in atomic units: above this much unsettled value, calls settle synchronously. */
  optimisticMaxUnsettled: bigint;
  /** Optimistic mode: release once the record is written (default), or only once it is on disk. */
  optimisticRelease?: 'written' | 'synced';
  /** Deadline of one settlement attempt. */
  settleTimeoutMs: number;
  balance?: BalanceReader;
  /** Bytes of response bodies kept for idempotent retries; beyond it a retry recomputes. */
  retryBodyBudget?: number;
  /** Failed payments per client address (see failure-budget.ts); none when absent. */
  failures?: FailureBudget;
}

export interface AuthorizeRequest {
  /** The route and its canonical parameters: an authorization pays for exactly this. */
  requestKey: string;
  requirements: PaymentRequirements;
  payload: PaymentPayload;
  /** Computes the data; called once per accepted authorization (again only if its cached copy was evicted). */
  produce: () => Buffer;
}

interface Entry {
  id: string;
  fingerprint: string;
  requestKey: string;
  payer: string;
  amount: bigint;
  validBefore: number;
  acceptedAt: number;
  state: 'pending' | 'settled' | 'failed';
  failure: string | null;
  tx: string | null;
  /** An earlier attempt may have landed: a used nonce then means it settled. */
  uncertain: boolean;
  /** Marked in the store as handed to a settler. */
  handed: boolean;
  record: AcceptedRecord;
  outcome: Promise<Outcome> | null;
  body: Buffer | null;
  produce: (() => Buffer) | null;
  attempts: number;
  retryTimer: NodeJS.Timeout | null;
  /** Resolves when the outcome is recorded. */
  recorded: Promise<void> | null;
}

/** Expired entries are kept this much longer, for late retries to get their answer. */
const KEEP_AFTER_EXPIRY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 30_000;
/**
 * An attempt the payment store could not record is retried at this pace, not with the settler's
 * backoff: nothing was sent to the settler, and after a store outage of a few seconds the
 * backoff had grown to 16–30 s, so payments settled that long after the store was back.
 */
const STORE_RETRY_MS = 1_000;
const MAX_BACKGROUND = 8;

export class Payments {
  /** This process's working set: outcomes shared by concurrent copies, paid answers kept, retries. */
  private readonly entries = new Map<string, Entry>();
  private readonly exposure: Exposure;
  /** Payments by outcome (accepted, repeat, or the refusal code): for /metrics. */
  readonly outcomes = new Map<string, number>();
  /** The adapters consult it before reading a payment and charge it after a refusal. */
  readonly failures: FailureBudget;
  private readonly bodies: Entry[] = [];
  private bodyBytes = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly backlog: Entry[] = [];
  private backlogHead = 0;
  private running = 0;
  private readonly sweeper: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly opts: PaymentsOptions) {
    this.exposure = new Exposure(opts.optimisticMaxUnsettled, opts.balance);
    this.failures = opts.failures ?? new FailureBudget(0, 1);
    this.sweeper = setInterval(() => this.sweep(Date.now()), 10_000);
    this.sweeper.unref();
    opts.store.watch((pending) => this.adopt(pending));
  }

  /**
   * Settles pending authorizations in the background: the journal's at start, or a stopped
   * replica's. Whatever happened to them before, they may have been submitted, so a used
   * nonce now means they settled.
   */
  private adopt(pending: PendingPayment[]): void {
    for (const p of pending) {
      if (this.entries.has(p.record.id)) continue;
      const entry = this.entryFor(p.record);
      entry.tx = p.tx;
      entry.uncertain = true;
      this.entries.set(entry.id, entry);
      log.info('pending payment taken up', { id: entry.id, payer: entry.payer, tx: p.tx });
      this.scheduleRetry(entry, 0);
    }
  }

  authorize(req: AuthorizeRequest, nowMs = Date.now()): Promise<Outcome> {
    const { payload } = req;
    const auth = payload.payload.authorization;
    const id = `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
    const fingerprint = fingerprintOf(payload);
    const paymentId = readPaymentId(payload);
    if (paymentId === false) {
      return this.refused(400, 'invalid_payment', 'payment-identifier id must be 16–128 letters, digits, hyphens or underscores');
    }
    // An exact repeat of one this process accepted was verified then; anything else now.
    const known = this.entries.get(id);
    let payer: string;
    if (known && known.fingerprint === fingerprint && known.requestKey === req.requestKey) payer = known.payer;
    else {
      const verdict = verifyPayment(payload, req.requirements, Math.floor(nowMs / 1000));
      if (!verdict.ok) return this.refused(402, verdict.code, verdict.message);
      payer = verdict.payer;
    }
    if (this.stopped) return this.refused(503, 'payments_unavailable', 'The server is shutting down; nothing was charged.');

    // The store decides the mode against this limit, atomically with the claim (it counts
    // the unsettled value: concurrent calls, on any replica, are checked with this one in).
    const limit = this.opts.mode === 'optimistic' ? this.exposure.limit(payer) : null;
    const record: AcceptedRecord = { t: 'accepted', id, at: nowMs, payer, amount: auth.value, requestKey: req.requestKey, mode: 'sync', payload, requirements: req.requirements };
    const validBefore = Number(auth.validBefore);
    const notRecorded = (err: unknown) => {
      log.warn('payment not recorded', { id, error: String((err as Error)?.message ?? err) });
      this.withdraw(id, validBefore);
      return this.refused(503, 'payments_unavailable', UNRECORDED);
    };
    let claim: ClaimResult | Promise<ClaimResult>;
    try {
      claim = this.opts.store.claim({ record, fingerprint, paymentId: paymentId ?? null, expiresAt: validBefore * 1000 + KEEP_AFTER_EXPIRY_MS, limit });
    } catch (err) {
      return notRecorded(err);
    }
    // A local store answers at once: no extra turn of the event loop on the paid path.
    if (claim instanceof Promise) return claim.then((c) => this.claimed(c, record, fingerprint, req.produce), notRecorded);
    return this.claimed(claim, record, fingerprint, req.produce);
  }

  /** What the store's answer on a verified authorization means for the caller. */
  private claimed(claim: ClaimResult, record: AcceptedRecord, fingerprint: string, produce: () => Buffer): Promise<Outcome> {
    if (claim.kind === 'refused') {
      const [status, code, message] = CLAIM_REFUSALS[claim.reason];
      return this.refused(status, code, message);
    }
    if (claim.kind === 'repeat') {
      this.count('repeat');
      const entry = this.entries.get(record.id);
      return entry?.outcome ? this.replay(entry, produce) : this.repeatOfShared(record.id, claim.claim, produce);
    }
    const entry = this.entryFor(record, fingerprint);
    entry.produce = produce;
    this.entries.set(record.id, entry);
    entry.outcome = this.accept(entry, claim.mode, claim.synced);
    return entry.outcome;
  }

  /** Counts an outcome: `accepted`, `repeat`, or a refusal's code (from here or the adapters' intake). */
  count(outcome: string): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  private refused(status: 400 | 402 | 409 | 503, code: string, message: string): Promise<Outcome> {
    this.count(code);
    return Promise.resolve(refuse(status, code, message));
  }

  private entryFor(record: AcceptedRecord, fingerprint = fingerprintOf(record.payload)): Entry {
    const auth = record.payload.payload.authorization;
    return {
      id: record.id,
      fingerprint,
      requestKey: record.requestKey,
      payer: record.payer,
      amount: BigInt(record.amount),
      validBefore: Number(auth.validBefore),
      acceptedAt: record.at,
      state: 'pending',
      failure: null,
      tx: null,
      uncertain: false,
      handed: false,
      record,
      outcome: null,
      body: null,
      produce: null,
      attempts: 0,
      retryTimer: null,
      recorded: null,
    };
  }

  private async accept(entry: Entry, mode: SettlementMode, synced: Promise<void>): Promise<Outcome> {
    this.count('accepted');
    if (mode === 'optimistic' && this.opts.optimisticRelease !== 'synced') {
      // Released as soon as the record is written, which survives a crash of the service;
      // the sync follows (group commit, a fraction of a millisecond) and settlement waits
      // for it. A crash of the whole machine in between can lose the record: the operator is
      // then not paid for that call (the risk this mode takes anyway, bounded by the
      // per-payer cap); no payer is charged for data they did not get.
      synced
        // The data is out: settling is still right, even unrecorded.
        .catch((err) => log.error('journal: accepted payment not synced; settling anyway', { id: entry.id, error: String(err) }))
        .then(() => this.scheduleRetry(entry, 0));
      return this.release(entry);
    }
    try {
      await synced;
    } catch {
      this.entries.delete(entry.id);
      this.withdraw(entry.id, entry.validBefore);
      return refuse(503, 'payments_unavailable', UNRECORDED);
    }
    if (mode === 'optimistic') {
      this.scheduleRetry(entry, 0);
      return this.release(entry);
    }
    const result = await this.attempt(entry);
    if (entry.state === 'failed') {
      await entry.recorded;
      const [code, message] = result.kind === 'failed' ? [result.reason, result.message] : ['invalid_transaction_state', 'the authorization was already used on chain'];
      this.count(code);
      return refuse(402, code, `Settlement failed: ${message}. Nothing was charged.`);
    }
    // Settled, or outcome unknown: then the payer may already be charged, so the data is
    // released and the settlement is resolved in the background (never charged without data).
    return this.release(entry);
  }

  /**
   * Not recorded, so not accepted: the claim is withdrawn (its payment-identifier id free
   * again, so the payer's retry is a new attempt). When the store could not answer, this
   * asks again until it does or the authorization expires: a claim it made unseen must not
   * be settled by another replica.
   */
  private withdraw(id: string, validBefore: number, delayMs = 0): void {
    const retry = () =>
      this.opts.store.withdraw(id).then(
        (ok) => ok || log.warn('claim not withdrawn: already handed to a settler', { id }),
        () => {
          if (!this.stopped && Date.now() < validBefore * 1000) this.withdraw(id, validBefore, Math.min(5000, delayMs * 2 || 250));
        },
      );
    if (delayMs === 0) retry();
    else setTimeout(retry, delayMs).unref();
  }

  /** The data and the settlement as it stands (a transaction hash, or pending). */
  private release(entry: Entry): Outcome {
    let body = entry.body;
    if (!body) {
      body = entry.produce!();
      this.keepBody(entry, body);
      this.opts.store.shareBody(entry.id, body, entry.validBefore * 1000 + KEEP_AFTER_EXPIRY_MS);
    }
    return { kind: 'paid', body, settlement: settlementResponse(entry.state, entry.tx, entry.payer, entry.failure, entry.record.mode) };
  }

  /** A repeat of an accepted authorization for the same request: the first one's outcome, computed once. */
  private async replay(entry: Entry, produce: () => Buffer): Promise<Outcome> {
    const first = await entry.outcome!;
    if (first.kind !== 'paid') return first;
    entry.produce = produce;
    return this.release(entry);
  }

  /**
   * A repeat of an authorization this process did not accept (another replica did, or this
   * process before a restart): it gets the outcome the store holds. A synchronous one still
   * settling is waited for; the answer is the one the accepting replica shared, or, when
   * none was (too large, or from before a restart), computed here.
   */
  private async repeatOfShared(id: string, claim: SharedClaim, produce: () => Buffer): Promise<Outcome> {
    const payer = id.split(':')[0]!;
    const until = steadyNow() + this.opts.settleTimeoutMs + 1000;
    let current: (SharedClaim & { body: Buffer | null }) | null = { ...claim, body: null };
    for (let wait = 10; ; wait = Math.min(200, wait * 2)) {
      if (current.state === 'failed') {
        return refuse(402, current.failure ?? 'invalid_transaction_state', 'This authorization did not settle and nothing was charged; sign a new one.');
      }
      const decided = current.state === 'settled' || current.mode === 'optimistic';
      if ((decided && current.body) || steadyNow() > until) break;
      await new Promise((r) => setTimeout(r, wait));
      try {
        current = (await this.opts.store.lookup(id)) ?? current;
      } catch {
        return this.refused(503, 'payments_unavailable', 'The payment state could not be read; nothing more was charged. Retry shortly.');
      }
      // The accepting replica had no answer to share in time: compute it here.
      if (decided && !current.body && wait >= 80) break;
    }
    return { kind: 'paid', body: current.body ?? produce(), settlement: settlementResponse(current.state, current.tx, payer, current.failure, current.mode) };
  }

  /** One settlement attempt; records the outcome. */
  private async attempt(entry: Entry): Promise<SettleResult> {
    entry.attempts++;
    let result: SettleResult;
    // Handing it over makes the authorization public: marked first, for every replica to see.
    if (!entry.handed) {
      let handed: boolean;
      try {
        handed = await this.opts.store.handOver(entry.id);
      } catch (err) {
        entry.attempts--;
        this.scheduleRetry(entry, STORE_RETRY_MS);
        return { kind: 'unknown', message: `payment store: ${String((err as Error)?.message ?? err)}` };
      }
      if (!handed) {
        // Withdrawn meanwhile (it was never confirmed to the payer): nothing to settle.
        entry.state = 'failed';
        entry.failure = 'unrecorded';
        return { kind: 'failed', reason: 'unrecorded', message: 'the payment was not recorded' };
      }
      entry.handed = true;
    }
    try {
      const signal = AbortSignal.timeout(this.opts.settleTimeoutMs);
      const payment = { payload: entry.record.payload, requirements: entry.record.requirements };
      result = await this.opts.settler.settle(payment, { signal, uncertain: entry.uncertain }, (tx) => {
        entry.tx = tx;
        entry.uncertain = true;
        this.opts.store.submitted(entry.id, tx);
      });
    } catch (err) {
      result = { kind: 'unknown', message: String((err as Error)?.message ?? err) };
    }
    if (entry.state !== 'pending') return result;
    switch (result.kind) {
      case 'settled':
        this.finish(entry, 'settled', result.tx);
        break;
      case 'used':
        if (entry.uncertain) this.finish(entry, 'settled', result.tx ?? entry.tx);
        else this.finish(entry, 'failed', null, 'invalid_transaction_state', 'the authorization was already used on chain');
        break;
      case 'failed':
        // After an uncertain attempt, a refusal may only reflect that attempt racing in (a
        // facilitator simulating against a nonce being used). Ask again until the
        // authorization expires: by then the nonce state is final.
        if (entry.uncertain && Date.now() / 1000 < entry.validBefore) this.scheduleRetry(entry);
        else this.finish(entry, 'failed', null, result.reason, result.message);
        break;
      case 'unknown':
        entry.uncertain = true;
        if (result.tx) entry.tx = result.tx;
        log.warn('settlement outcome unknown; will retry', { id: entry.id, payer: entry.payer, attempt: entry.attempts, error: result.message });
        this.scheduleRetry(entry);
        break;
    }
    return result;
  }

  /** Queues a background attempt, now or after a backoff that grows with each attempt. */
  private scheduleRetry(entry: Entry, delayMs = Math.min(MAX_RETRY_DELAY_MS, 500 * 2 ** entry.attempts)): void {
    if (this.stopped || entry.state !== 'pending') return;
    if (delayMs === 0) return this.enqueue(entry);
    if (entry.retryTimer) clearTimeout(entry.retryTimer);
    entry.retryTimer = setTimeout(() => {
      entry.retryTimer = null;
      this.enqueue(entry);
    }, delayMs);
  }

  private enqueue(entry: Entry): void {
    this.backlog.push(entry);
    this.pump();
  }

  /**
   * Background settlements run at most MAX_BACKGROUND at a time: a burst of optimistic calls
   * becomes a steady stream the settler can absorb instead of thousands of requests at once
   * that time out and retry. (Synchronous settlements do not queue: their callers wait.)
   */
  private pump(): void {
    while (this.running < MAX_BACKGROUND && this.backlogHead < this.backlog.length && !this.stopped) {
      const entry = this.backlog[this.backlogHead++]!;
      if (entry.state !== 'pending') continue;
      this.running++;
      const p = this.attempt(entry).finally(() => {
        this.running--;
        this.inFlight.delete(p);
        this.pump();
      });
      this.inFlight.add(p);
    }
    if (this.backlogHead > 1024 && this.backlogHead * 2 > this.backlog.length) {
      this.backlog.splice(0, this.backlogHead);
      this.backlogHead = 0;
    }
  }

  private finish(entry: Entry, state: 'settled' | 'failed', tx: string | null, reason?: string, message?: string): void {
    entry.state = state;
    entry.tx = tx;
    entry.failure = reason ?? null;
    if (state === 'failed') log.warn('settlement failed', { id: entry.id, payer: entry.payer, reason, message, mode: entry.record.mode });
    const outcome: FinalOutcome = state === 'settled' ? { t: 'settled', tx } : { t: 'failed', reason: reason ?? 'unknown' };
    // A failure is recorded before the payer is told "nothing was charged" (accept awaits
    // it): lost in a crash, it would be retried after the restart and could then charge them.
    entry.recorded = this.opts.store.finish(entry.id, outcome).catch((err) => {
      log.error('payment store: outcome not recorded', { id: entry.id, state, error: String(err) });
    });
  }

  private keepBody(entry: Entry, body: Buffer): void {
    const budget = this.opts.retryBodyBudget ?? 32 * 1024 * 1024;
    if (entry.body) return;
    entry.body = body;
    this.bodies.push(entry);
    this.bodyBytes += body.length;
    while (this.bodyBytes > budget && this.bodies.length > 0) {
      const old = this.bodies.shift()!;
      if (old.body) this.bodyBytes -= old.body.length;
      old.body = null;
    }
  }

  private sweep(nowMs: number): void {
    for (const [id, e] of this.entries) {
      if (e.state !== 'pending' && e.validBefore * 1000 + KEEP_AFTER_EXPIRY_MS < nowMs) {
        this.entries.delete(id);
        if (e.body) {
          this.bodyBytes -= e.body.length;
          e.body = null;
        }
      }
    }
    if (this.bodies.length > 0 && this.bodies.some((e) => e.body === null)) {
      const kept = this.bodies.filter((e) => e.body !== null);
      this.bodies.length = 0;
      this.bodies.push(...kept);
    }
    this.exposure.sweep(steadyNow());
    this.failures.sweep(steadyNow());
    this.opts.store.sweep(nowMs);
  }

  /** Can paid calls be recorded right now? (Replicas: is Redis reachable.) */
  get storeAvailable(): boolean {
    return this.opts.store.available;
  }

  health(nowMs = Date.now()) {
    let pending = 0;
    let oldest = Infinity;
    for (const e of this.entries.values()) {
      if (e.state !== 'pending') continue;
      pending++;
      oldest = Math.min(oldest, e.acceptedAt);
    }
    const { settled, failed } = this.opts.store.totals;
    return {
      mode: this.opts.mode,
      settler: this.opts.settler.kind,
      store: this.opts.store.kind,
      pending,
      settled,
      failed,
      oldest_pending_sec: pending ? Math.round((nowMs - oldest) / 1000) : null,
    };
  }

  /** Drops the paid answers kept for retries (memory pressure); a retry then recomputes. Returns the bytes freed. */
  dropRetryBodies(): number {
    const freed = this.bodyBytes;
    for (const e of this.bodies) e.body = null;
    this.bodies.length = 0;
    this.bodyBytes = 0;
    return freed;
  }

  /** The payment core's tables and their sizes, for /metrics (docs/deployment.md states each bound). */
  tables(): [string, number][] {
    const { claims, ids, unsettledPayers } = this.opts.store.sizes();
    return [
      ['payment_entries', this.entries.size],
      ['payment_claims', claims],
      ['payment_ids', ids],
      ['retry_bodies', this.bodies.length],
      ['retry_body_bytes', this.bodyBytes],
      ['exposure_payers', unsettledPayers],
      ['balance_cache', this.exposure.size],
      ['failed_payment_clients', this.failures.size],
    ];
  }

  /** health(), plus what /metrics reads: the unsettled value (null in replica mode: it is in Redis), the journal's size, outcomes. */
  metrics(nowMs = Date.now()) {
    return { ...this.health(nowMs), exposure: this.opts.store.unsettledTotal(), journalBytes: this.opts.store.sizes().journalBytes, storeAvailable: this.storeAvailable, outcomes: this.outcomes };
  }

  /** Stops retrying; pending payments stay recorded and resume at the next start (or on another replica). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    for (const e of this.entries.values()) if (e.retryTimer) clearTimeout(e.retryTimer);
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, 2000))]);
    await this.opts.settler.close();
    await this.opts.store.close();
  }
}

/** x402 SettlementResponse; a settlement still under way says so in `extra`. */
function settlementResponse(state: ClaimState, tx: string | null, payer: string, failure: string | null, mode: SettlementMode): object {
  const common = { transaction: tx ?? '', network: NETWORK, payer };
  if (state === 'settled') return { success: true, ...common };
  if (state === 'failed') return { success: false, errorReason: failure ?? 'invalid_transaction_state', ...common };
  return { success: true, ...common, extra: { settlement: 'pending', mode } };
}

function refuse(status: 400 | 402 | 409 | 503, code: string, message: string): Outcome {
  return { kind: 'refused', status, code, message };
}

const UNRECORDED = 'The payment could not be recorded; nothing was charged. Try again shortly.';

/** The store's refusals, as the payer sees them. */
const CLAIM_REFUSALS: Record<ClaimRefusal, [402 | 409, string, string]> = {
  nonce_reused: [402, 'replay', 'This nonce was already presented with a different authorization; sign a new one.'],
  other_request: [402, 'replay', 'This authorization already paid for another request; sign a new one for this request.'],
  published: [
    402,
    'replay',
    'This authorization was already submitted for settlement, which makes it public. A repeat gets the paid answer again only with the payment-identifier id of the original; sign a new authorization.',
  ],
  id_conflict: [409, 'payment_identifier_conflict', 'This payment-identifier id was already used with a different payment.'],
};
