/**
 * Decides when each source is polled, hands the polls to the worker pool, and applies
 * finished results to the wires. It runs on the serving thread but does no parsing there: it
 * only keeps per-source state and swaps in finished batches.
 *
 * Each source has an interval of its own (src/catalog/polling.ts): the floor after a poll
 * that brings new items, else half the time since the last one that did, up to the tier's
 * ceiling; a server's `Cache-Control: max-age` and `Retry-After` are honoured, and 429/503
 * double it. Every request draws from its host's budget (paging included; taken in the worker
 * as it is sent, see budget.ts), so no host gets more than its limit however many sources it
 * serves. A source is never polled while its
 * previous poll is in flight. While a WebSub hub pushes a source, it is polled only as a check.
 */
import type { TickerMapRef } from '../tickers/ticker-source.js';
import { budgetOf, intervalRange, QUIET_SHARE, SOURCES, type SourceDef, type Tier, filtersOf } from '../catalog/index.js';
import { log } from '../log.js';
import { applyItems, type Applied } from './apply.js';
import type { FetcherOptions } from './fetch/fetcher.js';
import type { PollResult, PollTask } from './poll-task.js';
import type { Span } from './parse/index.js';
import { buildRequest } from './requests.js';
import type { WebSub, PushStatus } from './websub.js';
import type { WireIndex } from '../search/wire-index.js';
import { steadyNow, steadyOf, wallOf } from '../clock.js';

export type PollRunner = (task: PollTask) => Promise<PollResult>;

/** A rise of this much in the share of skipped entries between two documents is a warning… */
const SKIP_RISE = 0.3;
/** …for documents with at least this many entries. */
const SKIP_RISE_MIN_ENTRIES = 5;
const round = (x: number) => Math.round(x * 100) / 100;
/** How often due sources are looked for. */
const TICK_MS = 250;
/** While a hub pushes a source, it is polled this often at most, as a check. */
export const PUSH_CHECK_MS = 10 * 60_000;
/** Failure backoff doubles per consecutive failure up to this. */
const MAX_BACKOFF_MS = 3_600_000;

/** What /health and /sources show per source. */
export interface SourceStatus {
  id: string;
  wire: string;
  /** The filter value, or null for a source that routes its entries (`filters` lists them). */
  filter: string | null;
  filters: string[];
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
  /** How fresh the source is, and why it is polled as it is. */
  freshness: {
    interval_sec: number;
    floor_sec: number;
    ceiling_sec: number;
    interval_reason: string;
    /** Items new to the wire in the last poll. */
    new_items: number;
    /** The newest publication time among items new to the wire, and when it was seen. */
    newest_item: { published: string; seen_at: string; lag_sec: number } | null;
    budget: { host: string; per_second: number };
    /** Pages read by the last poll (paging sources), and polls whose pages ran out before reaching the previous one. */
    pages?: number;
    paging_gaps?: number;
  };
  delivery: PushStatus | null;
}

/**
 * What one source's schedule has learnt, as a new leader takes it over from the previous one
 * (replica mode): its validators, so the next poll is conditional; its interval and last poll,
 * so it is due when it would have been; and its back-off, so a source that asked to be left
 * alone is not polled again at once. Times are wall-clock milliseconds: another process's steady clock means nothing here.
 */
export interface PollState {
  etag?: string;
  lastModified?: string;
  intervalMs: number;
  intervalReason: string;
  lastNewAt: number | null;
  notBefore: number;
  consecutiveFailures: number;
  lastAttempt: number | null;
  lastSuccess: number | null;
  marker: { time: number; id: string | null } | null;
}

type Def = SourceDef & { wire: { id: string; tier: Tier; retention: string; paid: { path: string }[] } };

interface SourceRuntime {
  def: Def;
  url: string;
  budget: { key: string; perSecond: number };
  noRetries: boolean;
  floorMs: number;
  ceilingMs: number;
  intervalMs: number;
  intervalReason: string;
  /** When a poll last brought items new to the wire (start: the first poll). */
  lastNewAt: number | null;
  /** Earliest time of the next poll. */
  nextAt: number;
  inFlight: boolean;
  polls: number;
  failures: number;
  skipped: number;
  lastDocument: SourceStatus['last_document'];
  lastAttempt: number | null;
  /** The poll before the last one started then (for the observed interval). */
  previousAttempt: number | null;
  lastSuccess: number | null;
  lastError: SourceStatus['last_error'];
  consecutiveFailures: number;
  items: number;
  etagHits: number;
  etag?: string;
  lastModified?: string;
  /** Not before this time: Retry-After or failure backoff. */
  notBefore: number;
  newItems: number;
  newest: { published: number; seenAt: number } | null;
  /** Paging: the newest entry of the previous complete poll (its id is unknown after a restart). */
  marker: { time: number; id: string | null } | null;
  /** Paging: the newest entry of the poll in progress (its first page). */
  pollNewest: { time: number; id: string } | null;
  pages: number;
  pagingGaps: number;
}

export interface SchedulerOptions {
  run: PollRunner;
  wires: ReadonlyMap<string, WireIndex>;
  overrides: ReadonlyMap<string, string>;
  /** The breaking tier's interval range (POLL_FLOOR_SEC, POLL_INTERVAL_SEC). */
  breaking: { floorSec: number; ceilingSec: number };
  fetcher: FetcherOptions;
  websub?: WebSub | null;
  /** Told the lines of the items each document stored (new or changed): replica mode publishes them to the other replicas. */
  onApplied?: (wire: string, lines: Uint8Array[]) => void;
  /** Told each source's schedule after each of its polls: replica mode keeps it for the next leader. */
  onPolled?: (sourceId: string, state: PollState) => void;
  /** The ticker map the parsers read (tickers/ticker-source.ts), once one is in hand. */
  tickers?: () => TickerMapRef | null;
}

export class Scheduler {
  private readonly sources: SourceRuntime[];
  private readonly byId = new Map<string, SourceRuntime>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The schedule came from a previous leader (`restore`): the first round polls only what is due. */
  private restored = false;
  /** True once the first round has polled every source once. */
  firstRunDone = false;
  private resolveFirstRun!: () => void;
  /** Resolves when the first round has polled every source once. */
  readonly firstRun = new Promise<void>((resolve) => (this.resolveFirstRun = resolve));

  constructor(private readonly opts: SchedulerOptions) {
    this.sources = SOURCES.map((def) => {
      const { key, budget } = budgetOf(def);
      const range = intervalRange(def, opts.breaking);
      const s: SourceRuntime = {
        def,
        url: opts.overrides.get(def.id) ?? def.url,
        budget: { key, perSecond: budget.perSecond },
        noRetries: budget.noRetries === true,
        floorMs: range.floorSec * 1000,
        ceilingMs: range.ceilingSec * 1000,
        intervalMs: range.floorSec * 1000,
        intervalReason: 'first poll',
        lastNewAt: null,
        nextAt: 0,
        inFlight: false,
        polls: 0,
        failures: 0,
        skipped: 0,
        lastDocument: null,
        lastAttempt: null,
        previousAttempt: null,
        lastSuccess: null,
        lastError: null,
        consecutiveFailures: 0,
        items: 0,
        etagHits: 0,
        notBefore: 0,
        newItems: 0,
        newest: null,
        // After a restart, paging reaches back to what the snapshot holds.
        marker: startMarker(def, opts.wires),
        pollNewest: null,
        pages: 0,
        pagingGaps: 0,
      };
      this.byId.set(def.id, s);
      return s;
    });
  }

  /** Polls every source now, then each when it is due, until stopped (again after a stop: a replica that becomes the leader once more). */
  start(): void {
    this.stopped = false;
    clearInterval(this.timer);
    void (this.restored ? Promise.resolve() : this.runOnce()).then(() => {
      this.firstRunDone = true;
      this.resolveFirstRun();
    });
    this.timer = setInterval(() => {
      const now = steadyNow();
      for (const s of this.sources) if (this.isDue(s, now)) void this.poll(s);
    }, TICK_MS);
    this.timer.unref();
  }

  /**
   * Stops scheduling. Polls still in flight are not waited for (a hanging source could hold a
   * shutdown for its whole deadline); their results are dropped, and the pool's shutdown ends
   * them.
   */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /**
   * Takes over the schedule a previous leader left (see PollState), before `start`. A source
   * without one is polled at the first tick.
   */
  restore(states: ReadonlyMap<string, PollState>): void {
    for (const [id, p] of states) {
      const s = this.byId.get(id);
      if (!s || s.inFlight) continue;
      const steady = (t: number | null) => (t === null ? null : steadyOf(t));
      s.etag = p.etag;
      s.lastModified = p.lastModified;
      s.intervalMs = Math.min(s.ceilingMs, Math.max(s.floorMs, p.intervalMs));
      s.intervalReason = p.intervalReason;
      s.lastNewAt = steady(p.lastNewAt);
      s.notBefore = steadyOf(p.notBefore);
      s.consecutiveFailures = p.consecutiveFailures;
      s.lastAttempt = steady(p.lastAttempt);
      s.lastSuccess = steady(p.lastSuccess);
      // Due one interval after the last poll: the adaptive interval, not the slow check of a
      // push the previous leader held (its subscriptions end with it).
      s.nextAt = (s.lastAttempt ?? 0) + s.intervalMs;
      if (p.marker) s.marker = p.marker;
    }
    this.restored = true;
  }

  private pollState(s: SourceRuntime): PollState {
    const wall = (t: number | null) => (t === null ? null : wallOf(t));
    return {
      ...(s.etag !== undefined && { etag: s.etag }),
      ...(s.lastModified !== undefined && { lastModified: s.lastModified }),
      intervalMs: s.intervalMs,
      intervalReason: s.intervalReason,
      lastNewAt: wall(s.lastNewAt),
      notBefore: wallOf(s.notBefore),
      consecutiveFailures: s.consecutiveFailures,
      lastAttempt: wall(s.lastAttempt),
      lastSuccess: wall(s.lastSuccess),
      marker: s.marker,
    };
  }

  /** Polls every source that is not in flight or backing off, whatever its interval; resolves when all are applied. */
  async runOnce(now = steadyNow()): Promise<void> {
    await Promise.all(this.sources.filter((s) => !s.inFlight && now >= s.notBefore).map((s) => this.poll(s)));
  }

  private isDue(s: SourceRuntime, now: number): boolean {
    return !s.inFlight && !this.stopped && now >= s.notBefore && now >= s.nextAt;
  }

  private async poll(s: SourceRuntime): Promise<void> {
    s.inFlight = true;
    try {
      for (let page = 0; ; page++) {
        if (this.stopped) return;
        // The request and the parse are dated by the wall clock; the schedule by the steady one.
        const now = Date.now();
        if (page === 0) {
          s.previousAttempt = s.lastAttempt;
          s.lastAttempt = steadyNow();
          s.polls++;
        }
        const request = buildRequest(s.def, pageUrl(s, page), now);
        if (page === 0 && s.etag) request.etag = s.etag;
        if (page === 0 && s.lastModified) request.lastModified = s.lastModified;
        if (s.noRetries) request.retries = 0;
        const result = await this.runTask({ source: plainSource(s.def), request, now, fetcher: this.opts.fetcher });
        if (!(await this.record(s, result, page))) break;
      }
    } finally {
      s.inFlight = false;
      const jitter = 1 + (Math.random() - 0.5) * 0.2;
      s.nextAt = (s.lastAttempt ?? steadyNow()) + this.effectiveIntervalMs(s) * jitter;
      if (!this.stopped) this.opts.onPolled?.(s.def.id, this.pollState(s));
    }
  }

  /** The interval in force: the adaptive one, or the slow check while a hub pushes the source. */
  private effectiveIntervalMs(s: SourceRuntime): number {
    return this.opts.websub?.active(s.def.id) ? Math.max(PUSH_CHECK_MS, s.ceilingMs) : s.intervalMs;
  }

  private async runTask(task: PollTask): Promise<PollResult> {
    const tickers = this.opts.tickers?.();
    if (tickers) task.tickers = tickers;
    try {
      return await this.opts.run(task);
    } catch (err) {
      // A worker crash or a bug in the task: the source fails this poll, the service goes on.
      return { kind: 'error', code: 'worker_failed', message: String((err as Error)?.message ?? err).slice(0, 300), ms: 0 };
    }
  }

  /**
   * A document a WebSub hub pushed for `sourceId` (already authenticated): parsed by the
   * worker pool and applied as a polled one is.
   */
  async deliver(sourceId: string, body: Uint8Array, contentType: string | undefined, topic: string): Promise<void> {
    const s = this.byId.get(sourceId);
    if (!s || this.stopped) return;
    const document = { body, url: topic, ...(contentType !== undefined && { contentType }) };
    const result = await this.runTask({ source: plainSource(s.def), document, now: Date.now(), fetcher: this.opts.fetcher });
    if (this.stopped) return;
    if (result.kind !== 'items') {
      log.warn('websub: a notification could not be read', { source: sourceId, ...(result.kind === 'error' && { code: result.code, message: result.message }) });
      return;
    }
    await this.applyDocument(s, result, Date.now());
  }

  /** Records one page's result; true when the next page is needed. */
  private async record(s: SourceRuntime, result: PollResult, page: number): Promise<boolean> {
    if (this.stopped) return false;
    const now = steadyNow();
    if (result.kind === 'error') return this.fail(s, result, page, now);
    if (page === 0) this.opts.websub?.discovered(s.def.id, s.url, result.hints.hubs, result.hints.self, now);
    let added = 0;
    let more = false;
    if (result.kind === 'items') {
      const applied = await this.applyDocument(s, result, Date.now());
      // Entries, but none young enough for the wire: a source gone stale is no quiet zero.
      if (page === 0 && result.count > 0 && applied.tooOld === result.count) {
        const newest = new Date(applied.newestOfAll!).toISOString();
        const message = `${result.count} of ${result.count} items older than the wire's ${s.def.wire.retention} retention; the newest is from ${newest}`;
        return this.fail(s, { code: 'parse_no_items', message }, page, now);
      }
      added = applied.added;
      more = this.needsNextPage(s, result.span, page);
    } else {
      s.etagHits++;
    }
    s.consecutiveFailures = 0;
    s.notBefore = 0;
    s.lastSuccess = now;
    if (page === 0) {
      if (result.etag !== undefined) s.etag = result.etag;
      if (result.lastModified !== undefined) s.lastModified = result.lastModified;
    }
    if (page === 0) {
      s.newItems = 0;
      s.pages = 0;
    }
    s.newItems += added;
    s.pages = page + 1;
    if (!more) this.adapt(s, result.hints.maxAgeMs);
    return more;
  }

  /** A failed poll: counted, backed off (doubling per failure), and what the server asked for obeyed. */
  private fail(s: SourceRuntime, error: { code: string; message: string; status?: number; retryAfterMs?: number }, page: number, now: number): false {
    s.consecutiveFailures++;
    s.failures++;
    s.lastError = { at: new Date(wallOf(now)).toISOString(), code: error.code, message: error.message };
    if (error.status !== undefined) s.lastError.status = error.status;
    if (error.status === 429 || error.status === 503) this.setInterval(s, s.intervalMs * 2, `asked to slow down (HTTP ${error.status})`);
    const backoff = Math.min(MAX_BACKOFF_MS, s.intervalMs * 2 ** (s.consecutiveFailures - 1));
    s.notBefore = now + Math.max(error.retryAfterMs ?? 0, s.consecutiveFailures > 1 ? backoff : 0);
    log.warn('poll failed', { source: s.def.id, page, code: error.code, message: error.message, failures: s.consecutiveFailures });
    return false;
  }

  /**
   * Paging: whether the pages so far reach back to the newest entry of the previous poll. They
   * do when they hold that entry, or an entry strictly older: times have whole seconds, and
   * EDGAR accepts several filings in one second, so an entry as old as the mark may be one
   * not seen yet.
   */
  private needsNextPage(s: SourceRuntime, span: Span | null, page: number): boolean {
    const paging = s.def.paging;
    if (!paging || !span) return false;
    if (page === 0) s.pollNewest = { time: span.newest, id: span.newestId };
    const m = s.marker;
    const reached = m === null || span.oldest < m.time || (m.id !== null && span.ids.includes(m.id));
    if (!reached && page + 1 < paging.maxPages) return true;
    if (!reached) {
      s.pagingGaps++;
      log.warn('paging ran out before reaching the previous poll: entries between may be missing', { source: s.def.id, pages: page + 1 });
    }
    const newest = s.pollNewest ?? { time: span.newest, id: span.newestId };
    if (m === null || newest.time >= m.time) s.marker = newest;
    return false;
  }

  /** After a whole poll: the next interval, from what it found and what the server asked. */
  private adapt(s: SourceRuntime, maxAgeMs: number | undefined): void {
    const push = this.opts.websub;
    if (push?.active(s.def.id)) push.checked(s.def.id, s.newItems);
    const now = steadyNow();
    if (s.newItems > 0 || s.lastNewAt === null) {
      s.lastNewAt = now;
      this.setInterval(s, s.floorMs, 'new items in the last poll');
    } else {
      const quietMs = now - s.lastNewAt;
      this.setInterval(s, quietMs * QUIET_SHARE, `no new items for ${Math.round(quietMs / 1000)} s`);
    }
    if (maxAgeMs !== undefined && maxAgeMs > s.intervalMs && s.floorMs < s.ceilingMs) {
      this.setInterval(s, maxAgeMs, `the server's Cache-Control max-age (${Math.round(maxAgeMs / 1000)} s)`);
    }
  }

  private setInterval(s: SourceRuntime, ms: number, reason: string): void {
    s.intervalMs = Math.min(s.ceilingMs, Math.max(s.floorMs, ms));
    s.intervalReason = s.intervalMs === s.floorMs && s.floorMs === s.ceilingMs ? 'a fixed interval' : reason;
  }

  private async applyDocument(s: SourceRuntime, result: Extract<PollResult, { kind: 'items' }>, now: number): Promise<Applied> {
    s.items = result.count;
    s.skipped += result.skipped;
    this.noteSkips(s, result);
    const index = this.opts.wires.get(s.def.wire.id);
    const applied = index ? await applyItems(index, result.items, now) : { added: 0, newest: null, tooOld: 0, newestOfAll: null, changed: [] };
    if (applied.changed.length) this.opts.onApplied?.(s.def.wire.id, applied.changed);
    if (applied.newest !== null && (s.newest === null || applied.newest > s.newest.published)) s.newest = { published: applied.newest, seenAt: Date.now() };
    if (result.warnings.length) log.debug('poll warnings', { source: s.def.id, warnings: result.warnings });
    return applied;
  }

  /** Time of the last successful poll of any source. */
  lastPoll(): number | null {
    let last: number | null = null;
    for (const s of this.sources) if (s.lastSuccess !== null && (last === null || s.lastSuccess > last)) last = s.lastSuccess;
    return last;
  }

  /**
   * The median time between the last two polls of the breaking sources, in seconds: measured,
   * not configured (null until one has been polled twice).
   */
  observedIntervalSec(): number | null {
    const gaps = this.sources
      .filter((s) => s.def.wire.tier === 'breaking' && s.previousAttempt !== null)
      .map((s) => s.lastAttempt! - s.previousAttempt!)
      .sort((a, b) => a - b);
    return gaps.length ? round(gaps[Math.floor(gaps.length / 2)]! / 1000) : null;
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
    // Schedule times are steady; shown as wall-clock dates.
    const iso = (t: number | null) => (t === null ? null : new Date(wallOf(t)).toISOString());
    const now = steadyNow();
    return this.sources.map((s) => {
      const push = this.opts.websub;
      const onPush = push?.active(s.def.id) ?? false;
      const freshness: SourceStatus['freshness'] = {
        interval_sec: round(this.effectiveIntervalMs(s) / 1000),
        floor_sec: s.floorMs / 1000,
        ceiling_sec: s.ceilingMs / 1000,
        interval_reason: onPush ? 'a WebSub hub pushes this source: polled only as a check' : s.intervalReason,
        new_items: s.newItems,
        newest_item: s.newest && {
          published: new Date(s.newest.published).toISOString(),
          seen_at: new Date(s.newest.seenAt).toISOString(),
          lag_sec: round((s.newest.seenAt - s.newest.published) / 1000),
        },
        budget: { host: s.budget.key, per_second: s.budget.perSecond },
      };
      if (s.def.paging) {
        freshness.pages = s.pages;
        freshness.paging_gaps = s.pagingGaps;
      }
      return {
        id: s.def.id,
        wire: s.def.wire.paid[0]!.path,
        filter: s.def.filter ?? null,
        filters: filtersOf(s.def),
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
        next_poll_after: s.notBefore > now ? iso(s.notBefore) : null,
        freshness,
        delivery: push ? push.status(s.def.id) : null,
      };
    });
  }
}

/** After a restart, paging reaches back to the newest item the snapshot holds. */
function startMarker(def: SourceDef & { wire: { id: string } }, wires: ReadonlyMap<string, WireIndex>): SourceRuntime['marker'] {
  const newest = def.paging ? wires.get(def.wire.id)?.newest() : undefined;
  return newest ? { time: newest.published, id: null } : null;
}

/** The URL of page `page` of a paging source (page 0: the URL as configured). */
function pageUrl(s: SourceRuntime, page: number): string {
  const paging = s.def.paging;
  if (!paging || page === 0) return s.url;
  const url = new URL(s.url);
  url.searchParams.set(paging.param, String(page * paging.size));
  return url.href;
}

/** The catalogue entry without its back-reference to the wire, so it clones into a worker. */
function plainSource(s: SourceDef & { wire?: unknown }): SourceDef {
  const { wire: _wire, ...plain } = s;
  return plain;
}
