/**
 * Real documents, byte for byte (fixtures/real/, provenance in fixtures/real/PROVENANCE.md).
 *
 * The fixtures in fixtures/feeds/ were written from the same reading of the formats as the
 * parsers, so they cannot show where that reading is wrong. These captures were published by
 * the sources themselves and kept in public repositories; each one is parsed with the catalogue
 * source whose parser path applies, and checked for what a reader of the wire would notice:
 *
 *   - every entry of the document becomes an item, except the skips named in index.json;
 *   - titles are clean text (no markup, no undecoded entities, no mojibake);
 *   - every URL is absolute http(s), and points where the document's own link points (for JSON
 *     APIs, the entry's own page field where the API has one);
 *   - every publication time agrees with the document's own date for that entry;
 *   - stored in a wire, no item replaces another, except the repeats index.json names.
 *
 * The expected values are read from the document here, independently of the parser: entries
 * are counted with plain patterns or JSON.parse, and dates are read with a small reader below.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { filtersOf, SOURCES, type SourceDef } from '../src/catalog/index.js';
import { noItemsReason, parseSource, type ParseResult } from '../src/ingest/parse/index.js';
import { WireIndex } from '../src/search/wire-index.js';

interface Capture {
  file: string;
  sourceId: string;
  contentType: string;
  finalUrl: string;
  expectSkips: { reason: string; count: number }[];
  /** Entries that are one story listed twice, which a wire rightly holds once. */
  expectMerged?: { reason: string; count: number };
  /**
   * Other catalogue sources served by the same generator and template, which this capture
   * stands for. Each is checked on it as its own source is; `keeps` is how many items the
   * sibling's own filter keeps (an EDGAR form, an award size), when not as many as its own.
   */
  sameTemplate?: { sourceId: string; keeps?: number; reason?: string }[];
  /** Why the document rightly holds no entry at all. */
  expectEmpty?: string;
}

/** What the test reads from the document itself for one entry. */
interface Expected {
  /** Title as plain text, for matching an item to its entry. */
  title: string;
  /** The entry's own link, resolved against xml:base / the document URL (JSON: the API's page field, where there is one). */
  link?: string;
  /** The entry's own date, epoch ms, and whether the source gave only a day. */
  date?: { ms: number; dateOnly: boolean; raw: string };
}

const DIR = new URL('../../fixtures/real/', import.meta.url);
const CAPTURES = JSON.parse(readFileSync(new URL('index.json', DIR), 'utf8')) as Capture[];
const DAY_MS = 86_400_000;
/** A title built from parts, one of them missing: "Recipient:", "Engineer at". */
const DANGLING_TITLE = /(?:[:|–—-]|\bat)\s*$/;
/** In a summary the parser composes from a JSON row's fields, a field left empty: "performed in .". */
const EMPTY_SLOT = /\b(?:in|from|to|at|by|of|for) [.,](?:\s|$)/;

// ---- an independent reader of the documents ----------------------------------------------

const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlDecode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (whole, body: string) => {
    if (body[0] !== '#') return XML_ENTITIES[body.toLowerCase()] ?? whole;
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    return String.fromCodePoint(code);
  });
}

/** Text content of an XML element's inner markup: CDATA unwrapped or entities decoded. */
function xmlText(inner: string): string {
  let out = '';
  let last = 0;
  const cdata = /<!\[CDATA\[([\s\S]*?)\]\]>/g;
  for (let m: RegExpExecArray | null; (m = cdata.exec(inner)); ) {
    out += xmlDecode(inner.slice(last, m.index)) + m[1];
    last = m.index + m[0].length;
  }
  return out + xmlDecode(inner.slice(last));
}

/** Plain text for matching: tags (not a literal `<->`) and common HTML entities out, whitespace collapsed. */
function plain(text: string): string {
  return xmlDecode(text.replace(/<\/?[A-Za-z][^>]*>/g, ' '))
    .replace(/&nbsp;|&#160;/g, ' ')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

/** First child element `name` of an XML fragment (exact name, so `title` does not match `media:title`). */
function child(block: string, name: string): { attrs: string; inner: string } | undefined {
  const re = new RegExp(`<${name.replace(':', '\\:')}(\\s[^>]*?)?(?:/>|>([\\s\\S]*?)</${name.replace(':', '\\:')}\\s*>)`);
  const m = re.exec(block);
  return m ? { attrs: m[1] ?? '', inner: m[2] ?? '' } : undefined;
}

function attr(attrs: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${name.replace(':', '\\:')}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(attrs);
  return m ? xmlDecode(m[2] ?? m[3] ?? '') : undefined;
}

const ZONES: Readonly<Record<string, number>> = {
  UT: 0,
  UTC: 0,
  GMT: 0,
  Z: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A small date reader for what the captures contain: RFC 822, ISO 8601, date-only, epoch. */
function readDate(value: unknown): Expected['date'] {
  if (typeof value === 'number') return { ms: value > 1e11 ? value : value * 1000, dateOnly: false, raw: String(value) };
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const raw = value.trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw))) return { ms: Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!), dateOnly: true, raw };
  if ((m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(raw))) {
    let zone = (m[3] ?? 'Z').toUpperCase();
    if (/^[+-]\d{4}$/.test(zone)) zone = `${zone.slice(0, 3)}:${zone.slice(3)}`;
    return { ms: Date.parse(`${m[1]}T${m[2]}${zone}`), dateOnly: false, raw };
  }
  m = /^(?:[A-Za-z]{3},?\s*)?(\d{1,2})\s+([A-Za-z]{3})[A-Za-z]*\.?\s+(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([+-]\d{4}|[A-Za-z]{1,3})?$/.exec(raw);
  if (m) {
    let year = +m[3]!;
    if (year < 100) year += year < 50 ? 2000 : 1900;
    const zone = m[7] ?? 'GMT';
    const offset = /^[+-]/.test(zone) ? (zone[0] === '-' ? -1 : 1) * (+zone.slice(1, 3) * 60 + +zone.slice(3, 5)) : ZONES[zone.toUpperCase()];
    if (offset === undefined) return undefined;
    const ms = Date.UTC(year, MONTHS.indexOf(m[2]!.toLowerCase()), +m[1]!, +m[4]!, +m[5]!, +(m[6] ?? 0)) - offset * 60_000;
    return { ms, dateOnly: false, raw };
  }
  if ((m = /^([A-Za-z]+)\.? (\d{1,2}),? (\d{4})$/.exec(raw))) {
    return { ms: Date.UTC(+m[3]!, MONTHS.indexOf(m[1]!.slice(0, 3).toLowerCase()), +m[2]!), dateOnly: true, raw };
  }
  return undefined;
}

function resolve(link: string | undefined, base: string): string | undefined {
  if (!link) return undefined;
  try {
    const url = new URL(link.trim(), base);
    url.hash = '';
    for (const key of [...url.searchParams.keys()]) if (key.toLowerCase().startsWith('utm_')) url.searchParams.delete(key);
    return url.href;
  } catch {
    return undefined;
  }
}

function xmlEntries(doc: string, finalUrl: string): Expected[] {
  const root = /<(feed|rss|rdf:RDF)\b([^>]*)>/.exec(doc);
  const docBase = resolve(attr(root?.[2] ?? '', 'xml:base'), finalUrl) ?? finalUrl;
  const isAtom = root?.[1] === 'feed';
  const blocks = isAtom ? (doc.match(/<entry[\s>][\s\S]*?<\/entry>/g) ?? []) : (doc.match(/<item[\s>][\s\S]*?<\/item>/g) ?? []);
  return blocks.map((block) => {
    const title = plain(xmlText(child(block, 'title')?.inner ?? ''));
    let link: string | undefined;
    let date: Expected['date'];
    if (isAtom) {
      const base = resolve(attr(/^<entry\b([^>]*)>/.exec(block)?.[1] ?? '', 'xml:base'), docBase) ?? docBase;
      const links = [...block.matchAll(/<link\b([^>]*?)\/?>/g)].map((l) => l[1] ?? '');
      const alt = links.find((a) => (attr(a, 'rel') ?? 'alternate') === 'alternate') ?? links[0];
      link = resolve(alt === undefined ? undefined : attr(alt, 'href'), base);
      date = readDate(xmlText(child(block, 'published')?.inner ?? '')) ?? readDate(xmlText(child(block, 'updated')?.inner ?? ''));
    } else {
      const guid = child(block, 'guid');
      const guidLink = guid && attr(guid.attrs, 'isPermaLink') !== 'false' ? xmlText(guid.inner) : undefined;
      link = resolve(xmlText(child(block, 'link')?.inner ?? '') || guidLink, docBase);
      date = readDate(xmlText(child(block, 'pubDate')?.inner ?? '')) ?? readDate(xmlText(child(block, 'dc:date')?.inner ?? ''));
    }
    return { title, link, date };
  });
}

type Row = Record<string, unknown>;
const at = (obj: unknown, path: string): unknown => path.split('.').reduce<unknown>((cur, key) => (cur && typeof cur === 'object' ? (cur as Row)[key] : undefined), obj);

/**
 * Where each JSON API keeps its entries, which field is the entry's title and which its date,
 * and (where the API gives one) which field is the entry's own page.
 */
const JSON_SHAPES: readonly { prefix: string; items: string; title: string; date: (r: Row) => unknown; link?: string }[] = [
  { prefix: 'cisa-kev', items: 'vulnerabilities', title: 'cveID', date: (r) => r.dateAdded },
  { prefix: 'usgs-', items: 'features', title: 'properties.title', date: (r) => at(r, 'properties.time') },
  { prefix: 'nws-', items: 'features', title: 'properties.headline', date: (r) => at(r, 'properties.sent') },
  { prefix: 'fedreg-', items: 'results', title: 'title', date: (r) => r.publication_date, link: 'html_url' },
  { prefix: 'status-gcp', items: '', title: 'external_desc', date: (r) => r.begin },
  { prefix: 'usaspending-', items: 'results', title: 'Recipient Name', date: (r) => r['Base Obligation Date'] },
  { prefix: 'remotive', items: 'jobs', title: 'title', date: (r) => r.publication_date, link: 'url' },
  { prefix: 'remoteok', items: '', title: 'position', date: (r) => r.date, link: 'url' },
];

function jsonEntries(doc: unknown, sourceId: string, finalUrl: string): Expected[] {
  const shape = JSON_SHAPES.find((s) => sourceId.startsWith(s.prefix));
  assert.ok(shape, `no JSON shape known to the test for ${sourceId}`);
  const rows = shape.items === '' ? doc : at(doc, shape.items);
  assert.ok(Array.isArray(rows), `${sourceId}: no array at "${shape.items}"`);
  return (rows as Row[]).map((r) => {
    const link = shape.link === undefined ? undefined : at(r, shape.link);
    return {
      title: plain(String(at(r, shape.title) ?? '')),
      link: typeof link === 'string' ? resolve(link, finalUrl) : undefined,
      date: readDate(shape.date(r)),
    };
  });
}

// ---- what a reader would notice ----------------------------------------------------------

const TAG = /<\/?[a-z][a-z0-9:-]*(\s[^>]*)?\/?>/i;
const ENTITY = /&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});/i;
const MOJIBAKE = /Ã[\u0080-\u00bf]|â€|Â[\u00a0-\u00bf]|\uFFFD/;

const norm = (s: string) => s.replace(/…$/, '').toLowerCase().replace(/\s+/g, ' ').trim();

/** The entry an item came from: same title text (the item's may be shortened, or a prefix). */
function matchEntry(itemTitle: string, entries: Expected[], used: Set<number>): number {
  const t = norm(itemTitle);
  let best = -1;
  for (let i = 0; i < entries.length; i++) {
    if (used.has(i)) continue;
    const e = norm(entries[i]!.title);
    if (e === '') continue;
    if (t === e) return i;
    if (best < 0 && (t.includes(e) || e.includes(t))) best = i;
  }
  return best;
}

const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));

/**
 * Parses `cap` as catalogue source `sourceId` and checks what a reader of the wire would
 * notice. `keeps`: the items expected when the source's own filter keeps fewer than the
 * capture's source does (with `keepsReason`), else every entry less the named skips.
 */
function checkCapture(cap: Capture, sourceId: string, keeps?: number, keepsReason?: string): void {
  const source = SOURCES.find((s) => s.id === sourceId) as SourceDef | undefined;
  assert.ok(source, `source ${sourceId} is not in the catalogue`);
  const bytes = readFileSync(new URL(cap.file, DIR));
  const latin1 = bytes.toString('latin1');
  const xml = /^\s*(\xef\xbb\xbf)?\s*</.test(latin1);
  // Read as the document declares; the counts and dates below are ASCII either way.
  const text = xml && /^\s*<\?xml[^>]*encoding=["']iso-8859-1["']/i.test(latin1) ? latin1 : bytes.toString('utf8');
  const entries = xml ? xmlEntries(text, cap.finalUrl) : jsonEntries(JSON.parse(text.replace(/^\uFEFF/, '')), sourceId, cap.finalUrl);
  if (cap.expectEmpty === undefined) assert.ok(entries.length > 0, `${cap.file}: the test found no entries in the document`);
  else assert.equal(entries.length, 0, `${cap.file}: expected no entries (${cap.expectEmpty})`);

  const dated = entries.map((e) => e.date?.ms).filter((ms): ms is number => ms !== undefined && Number.isFinite(ms));
  const now = (dated.length ? Math.max(...dated) : Date.parse('2026-01-01T00:00:00Z')) + 3_600_000;

  let result: ParseResult;
  try {
    result = parseSource(source, bytes, cap.contentType, now, cap.finalUrl);
  } catch (err) {
    assert.fail(`${cap.file} (${sourceId}): parse threw ${(err as Error).name}: ${(err as Error).message}`);
  }
  const { items, skipped, warnings } = result;
  // An empty document is a poll that found nothing new; only entries without items fail a poll.
  if (cap.expectEmpty !== undefined) assert.equal(result.entries, 0, `${cap.file}: an empty document must not count as entries skipped`);
  const named = cap.expectSkips.reduce((n, s) => n + s.count, 0);
  const expected = keeps ?? entries.length - named;
  const skipText = keepsReason ?? (cap.expectSkips.map((s) => `${s.count} ${s.reason}`).join('; ') || 'none');
  assert.equal(
    items.length,
    expected,
    `${cap.file} (${sourceId}): ${items.length} of ${entries.length} entries parsed, expected ${expected} ` +
      `(named skips: ${skipText}); parser skipped ${skipped}; warnings: ${warnings.slice(0, 3).join(' | ') || 'none'}`,
  );
  // A document with entries of which the source keeps none is a failed poll, never a quiet zero.
  const none = noItemsReason(result);
  assert.equal(none !== null, expected === 0 && entries.length > 0, `${cap.file} (${sourceId}): a poll of it ${none === null ? 'succeeds' : `fails: ${none}`}`);

  const problems: string[] = [];
  const used = new Set<number>();
  for (const item of items) {
    const label = `"${item.title.slice(0, 70)}"`;
    if (!filtersOf(source).includes(item.filter)) problems.push(`${label}: served under ${item.filter}, the source's filter values are ${filtersOf(source).join(', ')}`);
    if (TAG.test(item.title)) problems.push(`${label}: markup in title`);
    if (ENTITY.test(item.title)) problems.push(`${label}: undecoded entity in title`);
    if (MOJIBAKE.test(item.title)) problems.push(`${label}: mojibake in title`);
    // A field the document left out (JSON null, a missing element) shows as a dangling joint.
    if (DANGLING_TITLE.test(item.title)) problems.push(`${label}: title ends in a separator (a missing part)`);
    if (cap.contentType === 'application/json' && EMPTY_SLOT.test(item.summary)) problems.push(`${label}: summary has an empty slot: ${item.summary.slice(0, 90)}`);
    let url: URL | undefined;
    try {
      url = new URL(item.url);
    } catch {
      /* reported below */
    }
    if (!url || !/^https?:$/.test(url.protocol) || !url.host) problems.push(`${label}: url is not absolute http(s): ${item.url}`);

    const i = matchEntry(item.title, entries, used);
    if (i < 0) {
      problems.push(`${label}: no entry of the document has this title`);
      continue;
    }
    used.add(i);
    const entry = entries[i]!;
    // The document's link, or that page with a fragment telling apart entries that share it.
    if (entry.link && item.url !== entry.link && item.url.split('#')[0] !== entry.link) problems.push(`${label}: url ${item.url}, the document links ${entry.link}`);
    if (entry.date && Number.isFinite(entry.date.ms)) {
      const ok = entry.date.dateOnly ? Math.floor(item.published / DAY_MS) === Math.floor(entry.date.ms / DAY_MS) : Math.abs(item.published - entry.date.ms) <= 1000;
      if (!ok) problems.push(`${label}: published ${iso(item.published)}, the document says ${entry.date.raw} (${iso(entry.date.ms)})`);
    }
  }
  assert.deepEqual(problems, [], `${cap.file} (${sourceId}): ${problems.length} problem(s) in ${items.length} items:\n  ${problems.slice(0, 15).join('\n  ')}`);

  // Stored in a wire, every item stays an item: a wire takes a known URL for a new version of
  // that story, so entries sharing a link must not replace each other.
  const wire = new WireIndex({ maxAgeMs: Number.POSITIVE_INFINITY, maxItems: 1_000_000 });
  wire.add(items, now);
  const merged = cap.expectMerged?.count ?? 0;
  assert.equal(wire.size, items.length - merged, `${cap.file}: ${items.length} items parsed, ${wire.size} held by a wire (named merges: ${cap.expectMerged?.reason ?? 'none'})`);
}

for (const cap of CAPTURES) {
  test(`${cap.file} as ${cap.sourceId}`, () => checkCapture(cap, cap.sourceId));
  for (const sibling of cap.sameTemplate ?? []) {
    test(`${cap.file} as ${sibling.sourceId} (same template)`, () => checkCapture(cap, sibling.sourceId, sibling.keeps, sibling.reason));
  }
}
