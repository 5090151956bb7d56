/**
 * Decides which sources to poll, hands the polls to the worker pool, and applies finished
 * results to the wires. It runs on the serving thread but does no parsing there: it only
 * keeps per-source state and swaps in finished batches.
 *
 * Cadence (spec section 1): a scheduler run every POLL_INTERVAL_SEC (with jitter); breaking
 * wires poll on every run, timely ones at most every 5 minutes, sparse ones at most every
 * 15 minutes, and a source's own politeness floor (`minIntervalSec`) and a server's
 * Retry-After always win. A source is never polled while its previous poll is in flight.
 */
import { SOURCES, TIER_MIN_INTERVAL_SEC, type SourceDef, type Tier } from '../catalog/index.js';
import { log } from '../log.js';
import { applyItems } from './apply.js';
import type { FetcherOptions } from './fetch/fetcher.js';
import type { PollResult, PollTask } from './poll-task.js';
import { buildRequest } from './requests.js';
import type { WireIndex } from '../search/wire-index.js';

export type PollRunner = (task: PollTask) => Promise<PollResult>;

/** What /health and /sources show per source. */
/** A rise of this much in the share of skipped entries between two documents is a warning… */
const SKIP_RISE = 0.3;
/** …for documents with at least this many entries. */
const SKIP_RISE_MIN_ENTRIES = 5;
const round = (x: number) => Math.round(x * 100) / 100;

export interface SourceStatus {
  id: string;
  wire: string;
  filter: string;
  tier: Tier;
  url: string;
  polls: number;
  /** Polls that failed, since start. */
  failures: number;
  /** Entries skipped while parsing (no usable link, no title…), since start. */
  skipped: number;
  /** The last document: its entries, the items made of them, entries the source's rule dropped and entries skipped, each with the main reason. */
  last_document: { entries: number; items: number; dropped: number; drop_reason: string | null; skipped: number; skip_reason: string | null } | null;
  last_attempt: string | null;
  last_success: string | null;
  last_error: { at: string; code: string; message: string; status?: number } | null;
  consecutive_failures: number;
  items: number;
  etag_hits: number;
  next_poll_after: string | null;
}

interface SourceRuntime {
  def: SourceDef & { wire: { id: string; tier: Tier; paid: { path: string }[] } };
  url: string;
  inFlight: boolean;
  polls: number;
  failures: number;
  skipped: number;
  lastDocument: SourceStatus['last_document'];
  lastAttempt: number | null;
  lastSuccess: number | null;
  lastError: SourceStatus['last_error'];
  consecutiveFailures: number;
  items: number;
  etagHits: number;
  etag?: string;
  lastModified?: string;
  /** Not before this time: Retry-After or failure backoff. */
  notBefore: number;
}

export interface SchedulerOptions {
  run: PollRunner;
  wires: ReadonlyMap<string, WireIndex>;
  overrides: ReadonlyMap<string, string>;
  pollIntervalSec: number;
  fetcher: FetcherOptions;
  /** Politeness between requests to one host, in ms (SEC allows 10/s). */
  hostSpacingMs?: (host: string) => number;
}

/** Failure backoff: doubles per consecutive failure, from one interval up to an hour. */
const MAX_BACKOFF_MS = 3_600_000;

export class Scheduler {
  private readonly sources: SourceRuntime[];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly runStarts: number[] = [];
  private readonly hostNext = new Map<string, number>();
  /** Completed scheduler runs. */
  runs = 0;
  private resolveFirstRun!: () => void;
  /** Resolves when the first run has polled every source once. */
  readonly firstRun = new Promise<void>((resolve) => (this.resolveFirstRun = resolve));

  constructor(private readonly opts: SchedulerOptions) {
    this.sources = SOURCES.map((def) => ({
      def,
      url: opts.overrides.get(def.id) ?? def.url,
      inFlight: false,
      polls: 0,
      failures: 0,
      skipped: 0,
      lastDocument: null,
      lastAttempt: null,
      lastSuccess: null,
      lastError: null,
      consecutiveFailures: 0,
      items: 0,
      etagHits: 0,
      notBefore: 0,
    }));
  }

  /**
   * Runs now, then every interval (±10 % jitter) until stopped. A run does not wait for the
   * previous one: a slow source stays in flight (and is skipped) while the others keep their
   * cadence.
   */
  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.runOnce().catch((err) => log.error('scheduler run failed', { error: String((err as Error)?.stack ?? err) }));
      const jitter = 1 + (Math.random() - 0.5) * 0.2;
      this.timer = setTimeout(tick, this.opts.pollIntervalSec * 1000 * jitter);
      this.timer.unref();
    };
    tick();
  }

  /**
   * Stops scheduling. Polls still in flight are not waited for (a hanging source could hold a
   * shutdown for its whole deadline); their results are dropped, and the pool's shutdown ends
   * them.
   */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** One scheduler run: polls every due source and resolves when all have been applied. */
  async runOnce(now = Date.now()): Promise<void> {
    this.runStarts.push(now);
    if (this.runStarts.length > 20) this.runStarts.shift();
    const due = this.sources.filter((s) => this.isDue(s, now));
    await Promise.all(due.map((s) => this.poll(s)));
    this.runs++;
    this.resolveFirstRun();
  }

  private isDue(s: SourceRuntime, now: number): boolean {
    if (s.inFlight || now < s.notBefore) return false;
    if (s.lastAttempt === null) return true;
    const minSec = Math.max(TIER_MIN_INTERVAL_SEC[s.def.wire.tier], s.def.minIntervalSec ?? 0);
    // A little slack so a run that fires a moment early does not skip a whole interval.
    return now - s.lastAttempt >= minSec * 1000 - 5_000;
  }

  /** Waits for this host's politeness slot; spreads requests to one host over time. */
  private async hostSlot(url: string): Promise<void> {
    const host = new URL(url).host;
    const spacing = this.opts.hostSpacingMs?.(host) ?? 0;
    if (spacing <= 0) return;
    const now = Date.now();
    const at = Math.max(now, this.hostNext.get(host) ?? 0);
    this.hostNext.set(host, at + spacing);
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  private async poll(s: SourceRuntime): Promise<void> {
    s.inFlight = true;
    try {
      await this.hostSlot(s.url);
      const now = Date.now();
      s.lastAttempt = now;
      s.polls++;
      const request = buildRequest(s.def, s.url, now);
      if (s.etag) request.etag = s.etag;
      if (s.lastModified) request.lastModified = s.lastModified;
      let result: PollResult;
      try {
        result = await this.opts.run({ source: plainSource(s.def), request, now, fetcher: this.opts.fetcher });
      } catch (err) {
        // A worker crash or a bug in the task: the source fails this poll, the service goes on.
        result = { kind: 'error', code: 'worker_failed', message: String((err as Error)?.message ?? err).slice(0, 300), ms: 0 };
      }
      await this.record(s, result);
    } finally {
      s.inFlight = false;
    }
  }

  private async record(s: SourceRuntime, result: PollResult): Promise<void> {
    if (this.stopped) return;
    const now = Date.now();
    if (result.kind === 'error') {
      s.consecutiveFailures++;
      s.failures++;
      s.lastError = { at: new Date(now).toISOString(), code: result.code, message: result.message };
      if (result.status !== undefined) s.lastError.status = result.status;
      const backoff = Math.min(MAX_BACKOFF_MS, this.opts.pollIntervalSec * 1000 * 2 ** (s.consecutiveFailures - 1));
      s.notBefore = now + Math.max(result.retryAfterMs ?? 0, s.consecutiveFailures > 1 ? backoff : 0);
      log.warn('poll failed', { source: s.def.id, code: result.code, message: result.message, failures: s.consecutiveFailures });
      return;
    }
    if (result.etag !== undefined) s.etag = result.etag;
    if (result.lastModified !== undefined) s.lastModified = result.lastModified;
    s.consecutiveFailures = 0;
    s.notBefore = 0;
    s.lastSuccess = now;
    if (result.kind === 'not-modified') {
      s.etagHits++;
      return;
    }
    s.items = result.count;
    s.skipped += result.skipped;
    this.noteSkips(s, result);
    const index = this.opts.wires.get(s.def.wire.id);
    if (index) await applyItems(index, result.items, now);
    if (result.warnings.length) log.debug('poll warnings', { source: s.def.id, warnings: result.warnings });
  }

  /** Time of the last successful poll of any source. */
  lastPoll(): number | null {
    let last: number | null = null;
    for (const s of this.sources) if (s.lastSuccess !== null && (last === null || s.lastSuccess > last)) last = s.lastSuccess;
    return last;
  }

  /** Mean seconds between the starts of recent scheduler runs (measured, not configured). */
  observedIntervalSec(): number | null {
    const n = this.runStarts.length;
    if (n < 2) return null;
    return Math.round((this.runStarts[n - 1]! - this.runStarts[0]!) / (n - 1) / 1000);
  }

  /**
   * Remembers the document's skips, and warns when a source's share of skipped entries
   * rises sharply (a format change upstream usually shows here before the wire empties).
   */
  private noteSkips(s: SourceRuntime, result: Extract<PollResult, { kind: 'items' }>): void {
    // The share of the entries the source serves: what its own rule drops varies legitimately.
    const share = (d: { entries: number; dropped: number; skipped: number } | null) => (d && d.entries > d.dropped ? d.skipped / (d.entries - d.dropped) : 0);
    const before = share(s.lastDocument);
    s.lastDocument = { entries: result.entries, items: result.count, dropped: result.dropped, drop_reason: result.dropReason, skipped: result.skipped, skip_reason: result.skipReason };
    const now = share(s.lastDocument);
    if (result.entries - result.dropped >= SKIP_RISE_MIN_ENTRIES && now - before >= SKIP_RISE) {
      log.warn('a source skips a much larger share of its entries', { source: s.def.id, before: round(before), now: round(now), reason: result.skipReason });
    }
  }

  status(): SourceStatus[] {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return this.sources.map((s) => ({
      id: s.def.id,
      wire: s.def.wire.paid[0]!.path,
      filter: s.def.filter,
      tier: s.def.wire.tier,
      url: s.url,
      polls: s.polls,
      failures: s.failures,
      skipped: s.skipped,
      last_document: s.lastDocument,
      last_attempt: iso(s.lastAttempt),
      last_success: iso(s.lastSuccess),
      last_error: s.lastError,
      consecutive_failures: s.consecutiveFailures,
      items: s.items,
      etag_hits: s.etagHits,
      next_poll_after: s.notBefore > Date.now() ? iso(s.notBefore) : null,
    }));
  }
}

/** The catalogue entry without its back-reference to the wire, so it clones into a worker. */
function plainSource(s: SourceDef): SourceDef {
  const out: SourceDef = { id: s.id, name: s.name, filter: s.filter, format: s.format, url: s.url };
  if (s.minIntervalSec !== undefined) out.minIntervalSec = s.minIntervalSec;
  return out;
}
