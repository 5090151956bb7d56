/**
 * Keeps SEC's ticker map (catalog/reference.ts) current: read from the data dir at start, so a
 * restart needs no network, then polled once a day with the SEC User-Agent, one request drawn
 * from sec.gov's budget like any EDGAR poll. A document that is not the map (wrong shape, too
 * few rows) is refused and the map in hand kept; the file is replaced whole or not at all. The
 * ingest workers read the file: each poll task names it with its version.
 */
import { readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { budgetOf } from '../catalog/index.js';
import { TICKER_MAP } from '../catalog/reference.js';
import type { HostBudgets } from '../ingest/budget.js';
import type { Fetcher, FetcherOptions } from '../ingest/fetch/fetcher.js';
import { log } from '../log.js';
import { writePrivateFile } from '../private-files.js';
import { CompanyMap, CompanyMapError } from './company-map.js';

/** Where the ingest workers find the map, and which version it is (they reload on a change). */
export interface TickerMapRef {
  file: string;
  version: number;
}

export interface TickerMapStatus {
  id: string;
  name: string;
  url: string;
  listings: number;
  /** When the map in hand was fetched (its file's time), or null without one. */
  fetched_at: string | null;
  last_poll: string | null;
  last_error: { at: string; message: string } | null;
  next_poll: string | null;
}

export class TickerMapSource {
  private map: CompanyMap | null = null;
  private version = 0;
  private fetchedAt: number | null = null;
  private lastPoll: number | null = null;
  private lastError: { at: number; message: string } | null = null;
  private nextPoll: number | null = null;
  private etag: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Made for the first poll: the HTTP client (undici) is loaded then, not on every start. */
  private fetcher: Promise<Fetcher> | null = null;
  readonly file: string;

  constructor(private readonly opts: { dataDir: string; url: string; fetcher: FetcherOptions; budgets: HostBudgets; intervalMs?: number }) {
    this.file = join(opts.dataDir, 'company_tickers_exchange.json');
  }

  /** The map in hand, if any. */
  get companies(): CompanyMap | null {
    return this.map;
  }

  /** For the poll tasks: null until a map is in hand. */
  get ref(): TickerMapRef | null {
    return this.map ? { file: this.file, version: this.version } : null;
  }

  /**
   * Reads the kept map, then polls now if it is missing or a day old, and daily after.
   * Resolves once a map is in hand or the first poll failed: the first polls of the wires then
   * carry tickers.
   */
  async start(): Promise<void> {
    this.load();
    const interval = this.intervalMs;
    const age = this.fetchedAt === null ? Number.POSITIVE_INFINITY : Date.now() - this.fetchedAt;
    if (age >= interval) await this.poll();
    else this.schedule(interval - age);
  }

  /** Reads the kept map, if there is one (a replica that does not ingest only reads it). */
  load(): void {
    try {
      this.adopt(CompanyMap.parse(readFileSync(this.file, 'utf8')), statSync(this.file).mtimeMs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('ticker map: the kept copy is unreadable; fetching a new one', { file: this.file, error: (err as Error).message });
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    void this.fetcher?.then((fetcher) => fetcher.close());
  }

  private get intervalMs(): number {
    return this.opts.intervalMs ?? TICKER_MAP.intervalSec * 1000;
  }

  private schedule(ms: number): void {
    this.nextPoll = Date.now() + ms;
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref();
  }

  /** One poll; never throws. */
  async poll(): Promise<void> {
    clearTimeout(this.timer);
    this.lastPoll = Date.now();
    try {
      await this.opts.budgets.take(budgetOf(TICKER_MAP).key);
      this.fetcher ??= import('../ingest/fetch/fetcher.js').then(({ Fetcher }) => new Fetcher({ ...this.opts.fetcher, retries: 0 }));
      const res = await (await this.fetcher).fetch({ url: this.opts.url, ...(this.etag !== undefined && { etag: this.etag }) });
      if (res.kind === 'error') throw new Error(`${res.code}: ${res.message}`);
      if (res.kind === 'ok') {
        const text = new TextDecoder().decode(res.body);
        const map = CompanyMap.parse(text);
        const tmp = `${this.file}.tmp`;
        writePrivateFile(tmp, text);
        renameSync(tmp, this.file);
        this.etag = res.etag;
        this.adopt(map, Date.now());
        log.info('ticker map: updated', { listings: map.size });
      } else this.fetchedAt = Date.now();
      this.lastError = null;
    } catch (err) {
      const message = err instanceof CompanyMapError ? `not the ticker map: ${err.message}` : (err as Error).message;
      this.lastError = { at: Date.now(), message: message.slice(0, 300) };
      log.warn('ticker map: poll failed; the map in hand is kept', { url: this.opts.url, error: this.lastError.message });
    }
    if (!this.stopped) this.schedule(this.lastError ? Math.min(this.intervalMs, 3_600_000) : this.intervalMs);
  }

  private adopt(map: CompanyMap, fetchedAt: number): void {
    this.map = map;
    this.version++;
    this.fetchedAt = fetchedAt;
  }

  status(): TickerMapStatus {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      id: TICKER_MAP.id,
      name: TICKER_MAP.name,
      url: this.opts.url,
      listings: this.map?.size ?? 0,
      fetched_at: iso(this.fetchedAt),
      last_poll: iso(this.lastPoll),
      last_error: this.lastError && { at: new Date(this.lastError.at).toISOString(), message: this.lastError.message },
      next_poll: iso(this.nextPoll),
    };
  }
}
