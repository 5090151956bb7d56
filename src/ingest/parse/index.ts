/**
 * Source document → normalised items. Pure and synchronous: it runs in the worker threads.
 * A broken document is a ParseError; a broken item is skipped and counted, never fatal.
 */
import { SOURCES, type SourceDef } from '../../catalog/index.js';
import type { Item } from '../../search/item.js';
import { parseDate } from './dates.js';
import { decodeBody } from './decode.js';
import { deriveFieldsFor, stated, type DeriveFields, type ParseContext } from './data.js';
import { ParseError, type RawEntry } from './entry.js';
import { mapJson, mappingFor } from './mappings.js';
import { ruleFor } from './source-options.js';
import { absoluteHttpUrl, canonicalUrl, clip, htmlToText, MAX_SUMMARY, MAX_TITLE, plainText } from './text.js';
import { parseXml } from './xml.js';

export { ParseError } from './entry.js';
export type { ParseContext } from './data.js';

export interface ParsedItem extends Item {
  /**
   * The time (or the time of day) is when we first saw the item: the source gave only a date,
   * or no usable date. The wire keeps the first-seen time across polls.
   */
  publishedIsFirstSeen?: boolean;
}

/** What a page of a paging source (EDGAR) says about how far back it reaches. */
export interface Span {
  newest: number;
  /** The id of the first entry with the newest time. */
  newestId: string;
  oldest: number;
  /** Every entry's id as the document writes it, in document order. */
  ids: string[];
}

export interface ParseResult {
  items: ParsedItem[];
  /** Entries the document holds (up to the per-document cap). */
  entries: number;
  /** Entries this source does not serve (another EDGAR form, a test alert…), by its own rule. */
  dropped: number;
  /** Why entries were dropped: reason → count. */
  drops: Record<string, number>;
  /** Of the dropped entries, those the source's rule drops routinely (another EDGAR form). */
  routineDrops: number;
  /** Entries the source serves that could not become an item (no link, no title…). */
  skipped: number;
  /** Why entries were skipped: reason → count. */
  skips: Record<string, number>;
  warnings: string[];
  /** For paging: the dated entries' newest and oldest times and the newest one's id, and every entry's id (dropped ones included). */
  span: Span | null;
  /** WebSub discovery: the hub links the document declares, and its self link. */
  hubs: string[];
  self?: string;
}

/** The most frequent reason of each kind of loss, as "7 of 10 entries skipped: no usable link", or null. */
export function lossReasons(r: ParseResult): { dropReason: string | null; skipReason: string | null } {
  const top = (what: string, count: number, reasons: Record<string, number>) =>
    count === 0 ? null : `${count} of ${r.entries} entries ${what}: ${Object.entries(reasons).sort((a, b) => b[1] - a[1])[0]![0]}`;
  return { dropReason: top('dropped', r.dropped, r.drops), skipReason: top('skipped', r.skipped, r.skips) };
}

/**
 * Why a document that holds entries gave no item, whatever removed them (the source's own
 * rule, a missing link): a failed poll, as the wire would otherwise stay empty while the poll
 * looked fine. Null when there are items, no entries at all (an empty channel: a poll that
 * found nothing new), or only entries the source routinely does not serve (a page of EDGAR
 * forms the wire does not sell).
 */
export function noItemsReason(r: ParseResult): string | null {
  if (r.entries === 0 || r.items.length > 0 || (r.skipped === 0 && r.dropped === r.routineDrops)) return null;
  const { dropReason, skipReason } = lossReasons(r);
  return [dropReason, skipReason].filter(Boolean).join('; ');
}

/** Why an entry did not become an item. */
export type SkipReason = 'no title' | 'no usable link' | 'over the per-document cap';

/** Items beyond this many in one document are skipped: no feed legitimately sends more. */
export const MAX_ITEMS_PER_DOCUMENT = 5000;
/** Publication times further ahead than this are clocks gone wrong: clamped to now. */
const FUTURE_SLACK_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

/**
 * `documentUrl` is where the document was finally fetched from (after redirects): relative
 * links resolve against the nearest `xml:base` in scope, else the feed-level link, else it.
 */
export function parseSource(source: SourceDef, body: Uint8Array, contentType: string | undefined, now: number, documentUrl?: string, context: ParseContext = {}): ParseResult {
  const text = decodeBody(body, contentType);
  const trimmed = text.trimStart();
  if (trimmed === '') throw new ParseError('empty_body', 'empty document');
  const warnings: string[] = [];
  let entries: RawEntry[];
  /** The absolute base of links whose entry declares none of its own. */
  let base: string | undefined;
  let discovered: { hubs?: string[]; self?: string } = {};
  if (trimmed[0] === '{' || trimmed[0] === '[') {
    let doc: unknown;
    try {
      doc = JSON.parse(trimmed);
    } catch (err) {
      throw new ParseError('malformed', `malformed JSON: ${(err as Error).message}`);
    }
    const mapping = mappingFor(source.id);
    if (!mapping) throw new ParseError('unsupported_format', `no JSON mapping for source ${source.id}`);
    const mapped = mapJson(doc, mapping);
    if (!mapped) throw new ParseError('wrong_shape', `JSON of source ${source.id} does not have the expected shape`);
    entries = mapped;
    base = absoluteHttpUrl(documentUrl);
    if (source.format !== 'json') warnings.push(`expected ${source.format}, got JSON`);
  } else if (trimmed[0] === '<') {
    const xml = parseXml(trimmed, documentUrl);
    entries = xml.entries;
    base = xml.base;
    discovered = xml;
    if (source.format !== xml.format) warnings.push(`expected ${source.format}, got ${xml.format}`);
  } else {
    throw new ParseError('unsupported_format', 'neither XML nor JSON');
  }

  let skipped = 0;
  let considered = 0;
  const skips: Record<string, number> = {};
  const skip = (reason: SkipReason, n = 1) => {
    skipped += n;
    skips[reason] = (skips[reason] ?? 0) + n;
  };
  if (entries.length > MAX_ITEMS_PER_DOCUMENT) {
    skip('over the per-document cap', entries.length - MAX_ITEMS_PER_DOCUMENT);
    considered += entries.length - MAX_ITEMS_PER_DOCUMENT;
    warnings.push(`${entries.length} items; only the first ${MAX_ITEMS_PER_DOCUMENT} are read`);
    entries = entries.slice(0, MAX_ITEMS_PER_DOCUMENT);
  }
  let dropped = 0;
  const drops: Record<string, number> = {};
  const rule = ruleFor(source);
  let span: Span | null = null;
  const noteSpan = (raw: RawEntry) => {
    const id = raw.id ?? '';
    const at = parseDate(raw.date);
    if (!at || at.dateOnly) return;
    if (!span) span = { newest: at.ms, newestId: id, oldest: at.ms, ids: [] };
    else if (at.ms > span.newest) [span.newest, span.newestId] = [at.ms, id];
    else if (at.ms < span.oldest) span.oldest = at.ms;
    span.ids.push(id);
  };
  let kept: RawEntry[] = [];
  for (const raw of entries) {
    considered++;
    if (source.paging) noteSpan(raw);
    const dropReason = raw.dropped ?? rule?.drop?.(raw);
    if (dropReason) {
      dropped++;
      drops[dropReason] = (drops[dropReason] ?? 0) + 1;
      continue;
    }
    kept.push(rule?.rewrite ? rule.rewrite(raw) : raw);
  }
  if (rule?.combine) kept = rule.combine(kept);
  const derive = deriveFieldsFor(SOURCE_WIRE.get(source.id), context);
  const seen = new Set<string>();
  const items: ParsedItem[] = [];
  for (const e of kept) {
    const item = normalize(e, source, now, base, warnings, derive);
    if (typeof item === 'string') {
      skip(item);
      continue;
    }
    if (seen.has(item.id)) continue; // the same item twice in one document
    seen.add(item.id);
    items.push(item);
  }
  distinguishSharedLinks(items);
  const routineDrops = rule?.routineDrop ? (drops[rule.routineDrop] ?? 0) : 0;
  const out: ParseResult = { items, entries: considered, dropped, drops, routineDrops, skipped, skips, warnings: warnings.slice(0, 20), span, hubs: discovered.hubs ?? [] };
  if (discovered.self !== undefined) out.self = discovered.self;
  return out;
}

/**
 * A wire takes an item whose URL it already holds under the same filter value for a new
 * version of that story, so different items under one link would collapse into one. AWS
 * Health links every update of every event to its dashboard's home page (15 entries, one
 * URL); BBC News lists a story twice under one link, which is one item. So an entry gets a
 * URL of its own where its link cannot tell it apart: a site's home page (in any poll, even
 * alone), or a link that entries of the document with other titles share. That URL is its
 * guid when the guid is the link with a fragment (AWS's own anchors), else the link with the
 * id as fragment; the page it opens is the same.
 */
function distinguishSharedLinks(items: ParsedItem[]): void {
  const byUrl = new Map<string, ParsedItem[]>();
  for (const item of items) {
    const group = byUrl.get(item.url);
    if (group) group.push(item);
    else byUrl.set(item.url, [item]);
  }
  for (const [url, group] of byUrl) {
    const shared = group.length > 1 && group.some((i) => i.title !== group[0]!.title);
    if (!shared && !isHomePage(url)) continue;
    for (const item of group) if (item.id !== url) item.url = anchorOf(item.id, url) ?? `${url}#${encodeURIComponent(item.id)}`;
  }
}

function isHomePage(url: string): boolean {
  const { pathname, search } = new URL(url);
  return pathname === '/' && search === '';
}

/** The id itself when it is `url` with a fragment. */
function anchorOf(id: string, url: string): string | undefined {
  if (!URL.canParse(id)) return undefined;
  const anchored = new URL(id);
  if (!anchored.hash) return undefined;
  const href = anchored.href;
  anchored.hash = '';
  return anchored.href === url ? href : undefined;
}

/** Source id → its wire's id. */
const SOURCE_WIRE: ReadonlyMap<string, string> = new Map(SOURCES.map((s) => [s.id, s.wire.id]));

function normalize(e: RawEntry, source: SourceDef, now: number, base: string | undefined, warnings: string[], derive: DeriveFields | undefined): ParsedItem | SkipReason {
  const title = clip((e.plainTitle ? plainText : htmlToText)(e.title ?? ''), MAX_TITLE);
  if (!title) {
    warnings.push('item without a title skipped');
    return 'no title';
  }
  const url = canonicalUrl(e.link, e.base ?? base);
  if (!url) {
    warnings.push(`item "${title.slice(0, 60)}" without a usable http(s) link skipped`);
    return 'no usable link';
  }
  const item: ParsedItem = {
    id: (e.id ?? '').trim() || url,
    title,
    url,
    source: source.name,
    filter: e.filter ?? source.filter!,
    published: now,
    summary: clip((e.plainSummary ? plainText : htmlToText)(e.summary ?? ''), MAX_SUMMARY),
  };
  const date = parseDate(e.date);
  if (!date) {
    // No usable date: the item is dated when we first saw it (and keeps that time).
    item.publishedIsFirstSeen = true;
  } else if (date.dateOnly) {
    // A day without a time: first-seen time of day on that day, never in the future.
    item.published = Math.min(now, date.ms + (now % DAY_MS));
    item.publishedIsFirstSeen = true;
  } else if (date.ms > now + FUTURE_SLACK_MS) {
    warnings.push(`item "${title.slice(0, 60)}" dated in the future; clamped to now`);
  } else {
    item.published = Math.min(date.ms, now);
  }
  if (e.state && /^[A-Z]{2}$/.test(e.state)) item.state = e.state;
  const data = stated({ ...derive?.(title, item.summary, e.data ?? {}), ...e.data });
  if (data) item.data = data;
  return item;
}
