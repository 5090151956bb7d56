/**
 * The payment core: from a presented x402 payload to "release this data" or "refuse", with
 * nothing of HTTP or uWebSockets.js in it (the front end and the MCP endpoint are thin
 * adapters over `authorize`).
 *
 * An authorization buys one call. It is identified by (payer, nonce):
 * - the first time it is seen it is verified locally (about 0.15 ms), journaled and settled,
 *   synchronously or in the background depending on the mode;
 * - seen again for the same request it shares the first one's outcome (the same data,
 *   charged once, computed once), but only when the repeat proves it comes from the payer:
 *   it carries the original's `payment-identifier` id, or it arrives before the authorization
 *   was handed to a settler. A settlement transaction publishes the whole authorization, so
 *   after that the authorization alone proves nothing; the id never leaves the payer and us;
 * - seen for another request, or with different fields under the same nonce, it is refused
 *   as a replay.
 * Entries live until the authorization expires; later the chain's nonce check takes over.
 */
import { log } from '../log.js';
import { Exposure, type BalanceReader } from './exposure.js';
import { FailureBudget } from './failure-budget.js';
import type { Journal, AcceptedRecord, JournalState } from './journal.js';
import { NETWORK, type PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';
import type { SettleResult, Settler } from './settler.js';
import { verifyPayment } from './verify.js';
import { steadyNow } from '../clock.js';

export type SettlementMode = 'sync' | 'optimistic';

export type Outcome =
  /** `settlement` is the x402 SettlementResponse (PAYMENT-RESPONSE, or MCP's x402/payment-response). */
  { kind: 'paid'; body: Buffer; settlement: object } | { kind: 'refused'; status: 400 | 402 | 409 | 503; code: string; message: string };

export type { BalanceReader } from './exposure.js';

export interface PaymentsOptions {
  journal: Journal;
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
  /** The original's payment-identifier id: a repeat carrying it comes from the payer. */
  paymentId: string | null;
  amount: bigint;
  validBefore: number;
  acceptedAt: number;
  state: 'pending' | 'settled' | 'failed';
  failure: string | null;
  tx: string | null;
  /** An earlier attempt may have landed: a used nonce then means it settled. */
  uncertain: boolean;
  record: AcceptedRecord;
  outcome: Promise<Outcome> | null;
  body: Buffer | null;
  produce: (() => Buffer) | null;
  attempts: number;
  retryTimer: NodeJS.Timeout | null;
  /** Resolves when the outcome record is on disk (failures only). */
  recorded: Promise<void> | null;
}

const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;
/** Expired entries are kept this much longer, for late retries to get their answer. */
const KEEP_AFTER_EXPIRY_MS = 60_000;
const MAX_RETRY_DELAY_MS = 30_000;
const MAX_BACKGROUND = 8;

export class Payments {
  private readonly entries = new Map<string, Entry>();
  /** payment-identifier (scoped by payer) → entry id. */
  private readonly idempotencyKeys = new Map<string, string>();
  private readonly exposure: Exposure;
  /** Payments by outcome (accepted, repeat, or the refusal code): for /metrics. */
  readonly outcomes = new Map<string, number>();
  /** The adapters consult it before reading a payment and charge it after a refusal. */
  readonly failures: FailureBudget;
  private readonly bodies: Entry[] = [];
  private bodyBytes = 0;
  private settledCount = 0;
  private failedCount = 0;
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
  }

  /**
   * Takes the journal's state: pending payments are settled in the background; spent ones
   * that are still valid are remembered, so a repeat of one is no new payment.
   */
  resume(state: JournalState): void {
    this.settledCount += state.settled;
    this.failedCount += state.failed;
    for (const { record, outcome } of state.spent) {
      const entry = this.entryFor(record);
      entry.state = outcome.t;
      entry.tx = outcome.t === 'settled' ? outcome.tx : null;
      entry.failure = outcome.t === 'failed' ? outcome.reason : null;
      this.entries.set(entry.id, entry);
    }
    for (const p of state.pending) {
      const entry = this.entryFor(p.record);
      entry.tx = p.tx;
      // Whatever happened before the restart, a used nonce now means it settled.
      entry.uncertain = true;
      this.entries.set(entry.id, entry);
      this.exposure.add(entry.payer, entry.amount);
      log.info('payment resumed from journal', { id: entry.id, payer: entry.payer, tx: p.tx });
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
    const idKey = paymentId ? `${auth.from.toLowerCase()}|${paymentId}` : null;
    const existing = this.entries.get(id);
    if (existing && existing.fingerprint === fingerprint) {
      if (idKey && this.idempotencyKeys.get(idKey) !== id && this.idempotencyKeys.has(idKey)) return this.refused(409, 'payment_identifier_conflict', CONFLICT);
      if (existing.requestKey !== req.requestKey) {
        return this.refused(402, 'replay', 'This authorization already paid for another request; sign a new one for this request.');
      }
      if (!fromPayer(existing, paymentId ?? null)) {
        return this.refused(
          402,
          'replay',
          'This authorization was already submitted for settlement, which makes it public. A repeat gets the paid answer again only with the payment-identifier id of the original; sign a new authorization.',
        );
      }
      this.count('repeat');
      return this.replay(existing, req.produce);
    }
    if (existing) {
      return this.refused(402, 'replay', 'This nonce was already presented with a different authorization; sign a new one.');
    }
    if (idKey && this.idempotencyKeys.has(idKey)) return this.refused(409, 'payment_identifier_conflict', CONFLICT);

    const verdict = verifyPayment(payload, req.requirements, Math.floor(nowMs / 1000));
    if (!verdict.ok) return this.refused(402, verdict.code, verdict.message);
    if (this.stopped) return this.refused(503, 'payments_unavailable', 'The server is shutting down; nothing was charged.');

    const amount = BigInt(auth.value);
    const mode: SettlementMode = this.opts.mode === 'optimistic' && this.exposure.mayTrust(verdict.payer, amount) ? 'optimistic' : 'sync';
    const record: AcceptedRecord = {
      t: 'accepted',
      id,
      at: nowMs,
      payer: verdict.payer,
      amount: auth.value,
      requestKey: req.requestKey,
      mode,
      payload,
      requirements: req.requirements,
    };
    const entry = this.entryFor(record);
    entry.produce = req.produce;
    // Registered before the first await: a concurrent copy finds it and shares its outcome.
    this.entries.set(id, entry);
    if (idKey) this.idempotencyKeys.set(idKey, id);
    entry.outcome = this.accept(entry, mode);
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

  private entryFor(record: AcceptedRecord): Entry {
    const auth = record.payload.payload.authorization;
    return {
      id: record.id,
      fingerprint: fingerprintOf(record.payload),
      requestKey: record.requestKey,
      payer: record.payer,
      paymentId: readPaymentId(record.payload) || null,
      amount: BigInt(record.amount),
      validBefore: Number(auth.validBefore),
      acceptedAt: record.at,
      state: 'pending',
      failure: null,
      tx: null,
      uncertain: false,
      record,
      outcome: null,
      body: null,
      produce: null,
      attempts: 0,
      retryTimer: null,
      recorded: null,
    };
  }

  private async accept(entry: Entry, mode: SettlementMode): Promise<Outcome> {
    let durable: Promise<void>;
    try {
      this.opts.journal.write(entry.record);
      durable = this.opts.journal.sync();
      this.count('accepted');
    } catch {
      return this.unrecorded(entry);
    }
    // Counted at once, so concurrent calls are checked against the cap with this one in.
    this.exposure.add(entry.payer, entry.amount);
    if (mode === 'optimistic' && this.opts.optimisticRelease !== 'synced') {
      // Released as soon as the record is written, which survives a crash of the service;
      // the disk sync follows (group commit, a fraction of a millisecond) and settlement
      // waits for it. A crash of the whole machine in between can lose the record: the
      // operator is then not paid for that call (the risk this mode takes anyway, bounded by
      // the per-payer cap); no payer is charged for data they did not get.
      durable
        // The data is out: settling is still right, even unrecorded.
        .catch((err) => log.error('journal: accepted payment not synced; settling anyway', { id: entry.id, error: String(err) }))
        .then(() => this.scheduleRetry(entry, 0));
      return this.release(entry);
    }
    try {
      await durable;
    } catch {
      // The record may still reach the disk later: mark it so a restart does not settle it.
      this.opts.journal.note({ t: 'failed', id: entry.id, at: Date.now(), reason: 'unrecorded' });
      this.exposure.add(entry.payer, -entry.amount);
      return this.unrecorded(entry);
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

  /** Not recorded, so not accepted: forgotten, and the client may try again later. */
  private unrecorded(entry: Entry): Outcome {
    this.entries.delete(entry.id);
    // Its payment-identifier is free again: the payer's retry of this same payment is a new attempt.
    if (entry.paymentId) this.idempotencyKeys.delete(`${entry.id.split(':')[0]}|${entry.paymentId}`);
    return refuse(503, 'payments_unavailable', 'The payment could not be recorded; nothing was charged. Try again shortly.');
  }

  /** The data and the settlement as it stands (a transaction hash, or pending). */
  private release(entry: Entry): Outcome {
    let body = entry.body;
    if (!body) {
      body = entry.produce!();
      this.keepBody(entry, body);
    }
    return { kind: 'paid', body, settlement: this.settlementResponse(entry) };
  }

  /** x402 SettlementResponse; a settlement still under way says so in `extra`. */
  private settlementResponse(entry: Entry): object {
    const common = { transaction: entry.tx ?? '', network: NETWORK, payer: entry.payer };
    if (entry.state === 'settled') return { success: true, ...common };
    if (entry.state === 'failed') return { success: false, errorReason: entry.failure ?? 'invalid_transaction_state', ...common };
    return { success: true, ...common, extra: { settlement: 'pending', mode: entry.record.mode } };
  }

  /** A repeat of an accepted authorization for the same request: the first one's outcome, computed once. */
  private async replay(entry: Entry, produce: () => Buffer): Promise<Outcome> {
    // An entry resumed from the journal has no outcome here: its data was released before
    // the restart, unless it failed (then nothing was charged, and nothing is released).
    if (!entry.outcome && entry.state === 'failed') {
      return refuse(402, entry.failure ?? 'invalid_transaction_state', 'This authorization did not settle and nothing was charged; sign a new one.');
    }
    if (entry.outcome) {
      const first = await entry.outcome;
      if (first.kind !== 'paid') return first;
    }
    entry.produce = produce;
    return this.release(entry);
  }

  /** One settlement attempt; records the outcome. */
  private async attempt(entry: Entry): Promise<SettleResult> {
    entry.attempts++;
    const signal = AbortSignal.timeout(this.opts.settleTimeoutMs);
    let result: SettleResult;
    try {
      const payment = { payload: entry.record.payload, requirements: entry.record.requirements };
      result = await this.opts.settler.settle(payment, { signal, uncertain: entry.uncertain }, (tx) => {
        entry.tx = tx;
        entry.uncertain = true;
        this.opts.journal.note({ t: 'submitted', id: entry.id, at: Date.now(), tx });
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
    this.exposure.add(entry.payer, -entry.amount);
    const at = Date.now();
    if (state === 'settled') {
      this.settledCount++;
      this.opts.journal.note({ t: 'settled', id: entry.id, at, tx });
    } else {
      this.failedCount++;
      log.warn('settlement failed', { id: entry.id, payer: entry.payer, reason, message, mode: entry.record.mode });
      // Durable before the payer is told "nothing was charged": a failure lost in a crash
      // would be retried after the restart and could then charge them.
      entry.recorded = this.opts.journal.append({ t: 'failed', id: entry.id, at, reason: reason ?? 'unknown' }).catch((err) => {
        log.error('journal: failure record not written', { id: entry.id, error: String(err) });
      });
    }
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
    for (const [key, id] of this.idempotencyKeys) if (!this.entries.has(id)) this.idempotencyKeys.delete(key);
    this.exposure.sweep(steadyNow());
    this.failures.sweep(steadyNow());
    if (this.opts.journal.rotationDue) this.opts.journal.rotate(this.journalState(nowMs));
  }

  /** What the journal must keep: the pending authorizations, the spent ones still valid, the totals. */
  journalState(nowMs = Date.now()): JournalState {
    const state: JournalState = { pending: [], spent: [], settled: this.settledCount, failed: this.failedCount };
    for (const e of this.entries.values()) {
      if (e.state === 'pending') state.pending.push({ record: e.record, tx: e.tx });
      else if (e.validBefore * 1000 > nowMs) {
        const outcome = e.state === 'settled' ? { t: 'settled' as const, id: e.id, at: nowMs, tx: e.tx } : { t: 'failed' as const, id: e.id, at: nowMs, reason: e.failure ?? 'unknown' };
        state.spent.push({ record: e.record, outcome });
      }
    }
    return state;
  }

  health(nowMs = Date.now()) {
    let pending = 0;
    let oldest = Infinity;
    for (const e of this.entries.values()) {
      if (e.state !== 'pending') continue;
      pending++;
      oldest = Math.min(oldest, e.acceptedAt);
    }
    return {
      mode: this.opts.mode,
      settler: this.opts.settler.kind,
      pending,
      settled: this.settledCount,
      failed: this.failedCount,
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
    const { payers, balances } = this.exposure.sizes;
    return [
      ['payment_entries', this.entries.size],
      ['payment_ids', this.idempotencyKeys.size],
      ['retry_bodies', this.bodies.length],
      ['retry_body_bytes', this.bodyBytes],
      ['exposure_payers', payers],
      ['balance_cache', balances],
      ['failed_payment_clients', this.failures.size],
    ];
  }

  /** health(), plus what /metrics reads: the optimistic exposure, the journal's size, outcomes. */
  metrics(nowMs = Date.now()) {
    return { ...this.health(nowMs), exposure: this.exposure.total(), journalBytes: this.opts.journal.size(), outcomes: this.outcomes };
  }

  /** Stops retrying; pending payments stay in the journal and resume at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    for (const e of this.entries.values()) if (e.retryTimer) clearTimeout(e.retryTimer);
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, 2000))]);
    await this.opts.settler.close();
    await this.opts.journal.close();
  }
}

/**
 * A repeat of an accepted authorization comes from its payer when it carries the original's
 * payment-identifier id, or while the authorization has not been handed to a settler (until
 * then only the payer and this server have seen it). Entries resumed from the journal may
 * have been submitted before the restart: `uncertain` covers them.
 */
function fromPayer(entry: Entry, paymentId: string | null): boolean {
  if (entry.paymentId !== null && entry.paymentId === paymentId) return true;
  return entry.attempts === 0 && !entry.uncertain && entry.state === 'pending';
}

/** Everything an authorization binds besides (payer, nonce): a repeat must match it exactly. */
function fingerprintOf(payload: PaymentPayload): string {
  const a = payload.payload.authorization;
  return [a.to, a.value, a.validAfter, a.validBefore, payload.payload.signature].join('|').toLowerCase();
}

function refuse(status: 400 | 402 | 409 | 503, code: string, message: string): Outcome {
  return { kind: 'refused', status, code, message };
}

const CONFLICT = 'This payment-identifier id was already used with a different payment.';

/** The payment-identifier extension's id: undefined when absent, false when malformed. */
function readPaymentId(payload: PaymentPayload): string | undefined | false {
  const ext = payload.extensions?.['payment-identifier'] as { info?: { id?: unknown } } | undefined;
  const id = ext?.info?.id;
  if (id === undefined) return undefined;
  return typeof id === 'string' && PAYMENT_ID.test(id) ? id : false;
}
