/**
 * The work of one poll, run inside a Piscina worker thread: fetch, decode, parse and
 * normalise. The serving thread only receives finished items.
 *
 * Each worker keeps one Fetcher (an undici Agent with a keep-alive pool per origin) for its
 * whole life, so consecutive polls of a host reuse connections.
 */
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'piscina';
import { budgetOf, type SourceDef } from '../catalog/index.js';
import { HostBudgets } from './budget.js';
import { Fetcher, type FetcherOptions, type FetchRequest } from './fetch/fetcher.js';
import { lossReasons, noItemsReason, parseSource, ParseError, type ParseContext, type ParsedItem, type Span } from './parse/index.js';
import { CompanyMap } from '../tickers/company-map.js';
import { Tagger } from '../tickers/tagger.js';
import type { TickerMapRef } from '../tickers/ticker-source.js';

export interface PollTask {
  source: SourceDef;
  /** What to fetch; or `document`, a body already received (a WebSub content notification). */
  request?: FetchRequest;
  document?: { body: Uint8Array; contentType?: string; url: string };
  now: number;
  fetcher: FetcherOptions;
  /** SEC's ticker map, for the parsers' tickers (the file and its version: reread on a change). */
  tickers?: TickerMapRef;
}

/** WebSub discovery and the server's freshness hint, from the document and its headers. */
export interface PollHints {
  /** `Cache-Control: max-age` less `Age`, in ms. */
  maxAgeMs?: number;
  /** Hub links as written, from the document and from `Link` headers. */
  hubs: string[];
  /** The topic: the self link of the document or of its `Link` headers. */
  self?: string;
}

export type PollResult =
  | {
      kind: 'items';
      /** The items as UTF-8 JSON lines (see `encodeItems`). */
      items: Uint8Array;
      count: number;
      /** Entries the document held. */
      entries: number;
      /** Entries the source's own rule does not serve (another EDGAR form…). */
      dropped: number;
      /** The most frequent reason, as "N of M entries dropped: reason". */
      dropReason: string | null;
      /** Entries the source serves that could not become an item. */
      skipped: number;
      /** The most frequent reason, as "N of M entries skipped: reason". */
      skipReason: string | null;
      warnings: string[];
      /** Publication times of the document's newest and oldest entries (for paging). */
      span: Span | null;
      hints: PollHints;
      etag?: string;
      lastModified?: string;
      bytes: number;
      ms: number;
    }
  | { kind: 'not-modified'; etag?: string; lastModified?: string; hints: PollHints; ms: number }
  | { kind: 'error'; code: string; message: string; status?: number; retryAfterMs?: number; ms: number };

let fetcher: Fetcher | undefined;

/**
 * Parsing is throughput work; answering requests is latency work. On Linux a nice value is
 * per thread and `setPriority(0, …)` applies to the calling thread, so this lowers the
 * priority of this worker thread only: when cores are short, the serving thread runs first
 * and polls take longer (bench/ingest-latency measures both). Elsewhere the call would
 * lower the whole process, so it is Linux only.
 */
export const WORKER_NICE = 19;
if (process.platform === 'linux') {
  try {
    setPriority(0, WORKER_NICE);
  } catch {
    /* not permitted here: run at normal priority */
  }
}

/** The hosts' request windows, shared with every other worker (the serving thread made them). */
const budgets = new HostBudgets((workerData as { budgets?: SharedArrayBuffer } | undefined)?.budgets);

export async function runPoll(task: PollTask): Promise<PollResult> {
  if (task.document)
    return parseDocument(task, { kind: 'ok', body: task.document.body, contentType: task.document.contentType, finalUrl: task.document.url, bytes: task.document.body.length, ms: 0 }, { hubs: [] });
  fetcher ??= new Fetcher(task.fetcher);
  // The budget follows the catalogue's host, so it holds when WIRES_SOURCES points a source elsewhere.
  await budgets.take(budgetOf(task.source).key);
  const res = await fetcher.fetch(task.request!);
  if (res.kind === 'error') {
    const out: PollResult = { kind: 'error', code: res.code, message: res.message, ms: res.ms };
    if (res.status !== undefined) out.status = res.status;
    if (res.retryAfterMs !== undefined) out.retryAfterMs = res.retryAfterMs;
    return out;
  }
  const hints: PollHints = { hubs: res.linkHubs ?? [] };
  if (res.maxAgeMs !== undefined) hints.maxAgeMs = res.maxAgeMs;
  if (res.linkSelf !== undefined) hints.self = res.linkSelf;
  if (res.kind === 'not-modified') return { kind: 'not-modified', ms: res.ms, hints, ...validators(res) };
  return parseDocument(task, res, hints);
}

const validators = (r: { etag?: string; lastModified?: string }) => ({
  ...(r.etag !== undefined && { etag: r.etag }),
  ...(r.lastModified !== undefined && { lastModified: r.lastModified }),
});

type Received = { kind: 'ok'; body: Uint8Array; contentType?: string | undefined; finalUrl: string; bytes: number; ms: number; etag?: string; lastModified?: string };

function parseDocument(task: PollTask, res: Received, hints: PollHints): PollResult {
  const started = performance.now();
  try {
    // Relative links resolve against where the document was finally served from.
    const parsed = parseSource(task.source, res.body, res.contentType, task.now, res.finalUrl, contextOf(task.tickers));
    const { dropReason, skipReason } = lossReasons(parsed);
    const none = noItemsReason(parsed);
    if (none !== null) return { kind: 'error', code: 'parse_no_items', message: none, ms: res.ms };
    hints.hubs.push(...parsed.hubs);
    if (hints.self === undefined && parsed.self !== undefined) hints.self = parsed.self;
    return {
      kind: 'items',
      items: encodeItems(parsed.items),
      count: parsed.items.length,
      entries: parsed.entries,
      dropped: parsed.dropped,
      dropReason,
      skipped: parsed.skipped,
      skipReason,
      warnings: parsed.warnings.slice(0, 10),
      span: parsed.span,
      hints,
      bytes: res.bytes,
      ms: res.ms + (performance.now() - started),
      ...validators(res),
    };
  } catch (err) {
    if (err instanceof ParseError) return { kind: 'error', code: `parse_${err.code}`, message: err.message.slice(0, 300), ms: res.ms };
    throw err;
  }
}

/**
 * Items cross the thread boundary as one byte array of JSON lines rather than as objects:
 * structured-cloning 5,000 objects costs the serving thread several milliseconds in one
 * go, while copying bytes is a memcpy, and the lines are then decoded a slice at a time.
 */
export function encodeItems(items: readonly ParsedItem[]): Uint8Array {
  let text = '';
  for (const item of items) text += JSON.stringify(item) + '\n';
  return new TextEncoder().encode(text);
}

let context: { version: number; file: string; value: ParseContext } | null = null;

/** The parse context of a task's ticker map, read and its tagger built once per version of it (once a day). */
function contextOf(ref: TickerMapRef | undefined): ParseContext {
  if (!ref) return {};
  if (context?.version === ref.version && context.file === ref.file) return context.value;
  try {
    const companies = CompanyMap.parse(readFileSync(ref.file, 'utf8'));
    const tagger = new Tagger(companies, { names: true });
    context = { ...ref, value: { companies, tag: (headline, summary) => tagger.tagStory(headline, summary) } };
  } catch {
    // Replaced while read, or removed: parse without tickers this once.
    return context?.value ?? {};
  }
  return context.value;
}

/** Piscina calls the default export. */
export default runPoll;
