/**
 * Replays the real captures of fixtures/real/ (byte for byte as their publishers served them)
 * with every date in them moved by one constant, so that the document's newest entry is a few
 * minutes old when the fixture server starts. Without the move the service would drop their
 * items as older than the wire's retention.
 *
 * What moves: every date that is a whole value — an XML text node (`<pubDate>…</pubDate>`,
 * `<updated>…</updated>`, or the whole CDATA section of one), a JSON string
 * (`"2025-12-14T20:45:43"`) or a JSON number that is an epoch time in seconds or milliseconds
 * (`"time": 1688419585`). Each keeps its textual format:
 * RFC 822 with or without the day name or the seconds, 2- or 4-digit year, its zone notation
 * (`GMT`, `EDT`, `+0000`); ISO 8601 with its separator, fraction digits and zone (`Z`,
 * `-05:00`, none); date-only `YYYY-MM-DD`. Dates inside running text (an EDGAR summary's
 * "Filed: 2016-02-25", a feed title "Latest Filings - Thu, 25 Feb 2016 …") and inside URLs
 * stay as they are. Every other byte is untouched: the text is handled as Latin-1, so any
 * ASCII-compatible encoding (EDGAR's ISO-8859-1, UTF-8) passes through unchanged.
 *
 * The constant: `start - LEAD_MS - newest`, in whole minutes (so dates without seconds, and
 * fractions of a second, shift exactly), where `newest` is the newest item date the service's
 * own parser reads from the document. Captures in one `clock` group (the USGS 2.5 and 4.5
 * day feeds, taken a day apart, share a quake) share one constant: the same quake keeps one time.
 */
import { readFileSync } from 'node:fs';
import { SOURCES, type SourceDef } from '../catalog/index.js';
import { NAMED_ZONES } from '../ingest/parse/dates.js';
import { parseSource } from '../ingest/parse/index.js';

export const REAL_DIR = new URL('../../../fixtures/real/', import.meta.url);

/** How long before the server's start the newest entry of a replayed capture is dated. */
export const LEAD_MS = 5 * 60_000;

export interface RealCapture {
  file: string;
  sourceId: string;
  contentType: string;
  finalUrl: string;
}

/**
 * Which capture plays which source. A capture plays its own source, and a sibling only where
 * the sibling publishes the same document (CoinDesk's and Cointelegraph's one feed URL each feeds a
 * `news-*` source and a `crypto` one). Where a source has two captures, the newer format plays.
 *
 * Not played, on purpose (the hand-written fixture stays; see fixtures/feeds/index.json):
 * - the EDGAR captures: each lists one form (10-K, 13F-HR, Form 4), while the `edgar` source
 *   reads the listing of every form; the hand-written all-forms listing gives every form filter
 *   value its filings;
 * - a BBC, CNBC, Statuspage, Ars Technica or WWR capture for its siblings: another section,
 *   provider or category's stories would be served under the wrong filter value;
 * - `remotive-api-remote-jobs` (a `?limit=20` query of every category, not `software-dev`) and
 *   `federalregister-documents` (all four document types, not rules only): most of their items
 *   would disagree with the filter value they would be served under;
 * - the USAspending capture: its query asked for grants, not contracts, and for fields without
 *   an award date;
 * - the Azure status capture: Azure lists only active incidents, and that day it had none, so
 *   its channel is empty and the demo's Azure wire would be too;
 * - the CPSC capture: its dates are `Month D, YYYY` with no time, which the date shifter does
 *   not move (CPSC's feed is read for its items, not replayed);
 * - the Federal Reserve's 2016 `press_all` capture: moved to now beside the 2026 `press_monetary`
 *   capture, the same kind of story ("Federal Reserve issues FOMC statement") would be served
 *   under `fed` and `fomc` with two different links, which the real feeds never do.
 *
 * Played under a sibling feed of the same publisher and template, whose stories belong to the
 * same filter value: the FTC's competition press releases as `ftc-press`, and the SEC's
 * administrative proceedings as `sec-litigation` (both served as the `ftc` and `sec`
 * enforcement filters).
 */
export const REPLAY: Readonly<Record<string, { file: string; clock?: string }>> = {
  'usgs-significant': { file: 'usgs-significant_week-2017-12.geojson' },
  'usgs-4.5': { file: 'usgs-4.5_day-2023-07.geojson', clock: 'usgs-2023-07' },
  'usgs-2.5': { file: 'usgs-2.5_day-2023-07.geojson', clock: 'usgs-2023-07' },
  'cisa-kev': { file: 'cisa-kev-2025-01-27.json' },
  techcrunch: { file: 'techcrunch-feedjira.xml' },
  'status-github': { file: 'status-github-history-2026-08-22.atom' },
  'status-gcp': { file: 'status-gcp-incidents-2022-07-03.json' },
  'nws-severe': { file: 'nws-alerts-active-zone-ORZ004-2019-12-20.json' },
  'huggingface-blog': { file: 'huggingface-blog-2023-01-04.xml' },
  arstechnica: { file: 'arstechnica-feed-2023-12-04.xml' },
  theverge: { file: 'theverge-index-2023-12-10.xml' },
  'cnbc-finance': { file: 'cnbc-finance-10000664-2026-08-14.xml' },
  'cnbc-world': { file: 'cnbc-world-100727362-2026-03-08.xml' },
  'npr-world': { file: 'npr-news-1001-2026-08-22.xml' },
  'bbc-world': { file: 'bbc-news-world-2025-06-23.xml' },
  'bbc-business': { file: 'bbc-news-business-2026-08-14.xml' },
  'bbc-sport': { file: 'bbc-sport-football-rss-2026-08-03.xml' },
  aljazeera: { file: 'aljazeera-all-2026-08-13.xml' },
  'news-coindesk': { file: 'coindesk-rss-2026-08-11.xml', clock: 'coindesk' },
  coindesk: { file: 'coindesk-rss-2026-08-11.xml', clock: 'coindesk' },
  'news-cointelegraph': { file: 'cointelegraph-rss-2025-12-12.xml', clock: 'cointelegraph' },
  cointelegraph: { file: 'cointelegraph-rss-2025-12-12.xml', clock: 'cointelegraph' },
  decrypt: { file: 'decrypt-feed-2025-12-12.xml' },
  thehackernews: { file: 'thehackernews-feedburner-2024-05-19.xml' },
  'sec-press': { file: 'sec-pressreleases-2025-01-24.rss' },
  'status-aws': { file: 'status-aws-ec2-us-east-1-2022-03-01.rss' },
  'fda-recalls': { file: 'fda-food-safety-recalls-2025-11-13.xml' },
  'yahoo-finance': { file: 'yahoofinance-rssindex-2026-08-14.xml' },
  'nasa-releases': { file: 'nasa-news-release-feed-2026-02-18.xml' },
  bleepingcomputer: { file: 'bleepingcomputer-feed-2025-07-24.xml' },
  remoteok: { file: 'remoteok-api-2026-03-17.json' },
  'wwr-devops': { file: 'weworkremotely-remote-devops-sysadmin-jobs-2022-11-07.rss' },
  'debian-dsa': { file: 'debian-dsa-rdf-2024-05-07.rdf' },
  espn: { file: 'espn-ncb-news-2019-08-20.xml' },
  'openai-news': { file: 'openai-news-rss-2025-07-28.xml' },
  'google-ai-blog': { file: 'google-blog-technology-ai-rss-2025-07-24.xml' },
  'deepmind-blog': { file: 'deepmind-blog-rss-2025-07-23.xml' },
  'ftc-press': { file: 'ftc-press-release-competition-2026-07-28.xml' },
  'sec-litigation': { file: 'sec-admin-proceedings-2026-07-28.xml' },
  'fed-monetary': { file: 'fed-press_monetary-2026-08-16.xml' },
  'ecb-press': { file: 'ecb-press-rss-2026-08-16.xml' },
  'hn-frontpage': { file: 'hnrss-frontpage-2026-05-19.xml' },
  'ubuntu-usn': { file: 'ubuntu-usn-rss-2025-09-21.xml' },
  'arxiv-ai': { file: 'arxiv-rss-cs.AI-2026-07-27.xml' },
};

export interface ReplayedDocument {
  file: string;
  body: Buffer;
  contentType: string;
  /** Milliseconds added to every date. */
  shiftMs: number;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Epoch times accepted as dates: 2000-01-01 to 2100-01-01. */
const EPOCH_MIN_S = 946_684_800;
const EPOCH_MAX_S = 4_102_444_800;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function zoneMinutes(zone: string): number | undefined {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (m) return (m[1] === '-' ? -1 : 1) * (+m[2]! * 60 + +m[3]!);
  return NAMED_ZONES[zone.toUpperCase()];
}

const RFC822 =
  /^(?:(Mon|Tue|Wed|Thu|Fri|Sat|Sun)(,\s*))?(\d{1,2})(\s+)(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)(\s+)(\d{4}|\d{2})(\s+)(\d{2}):(\d{2})(?::(\d{2}))?(\s+)([A-Za-z]{1,4}|[+-]\d{4})$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})([T ])(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `text` moved by `shift` ms in its own format, or undefined when it is not a date this knows. */
export function shiftDateText(text: string, shift: number): string | undefined {
  let m: RegExpExecArray | null;
  if ((m = ISO.exec(text))) {
    const off = m[9] === undefined ? 0 : zoneMinutes(m[9]);
    if (off === undefined) return undefined;
    const sec = m[7] === undefined ? 0 : +m[7];
    const local = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[5]!, +m[6]!, sec);
    if (!Number.isFinite(local)) return undefined;
    const d = new Date(local + shift);
    let out = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}${m[4]}${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
    if (m[7] !== undefined) out += `:${pad(d.getUTCSeconds())}${m[8] ?? ''}`;
    return out + (m[9] ?? '');
  }
  if ((m = DATE_ONLY.exec(text))) {
    const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!);
    if (!Number.isFinite(ms)) return undefined;
    return new Date(Math.floor((ms + shift) / DAY) * DAY).toISOString().slice(0, 10);
  }
  if ((m = RFC822.exec(text))) {
    const off = zoneMinutes(m[13]!);
    const month = MONTHS.indexOf(m[5]!);
    if (off === undefined || month < 0) return undefined;
    const twoDigitYear = m[7]!.length === 2;
    const year = twoDigitYear ? 2000 + +m[7]! - (+m[7]! >= 50 ? 100 : 0) : +m[7]!;
    // Local wall time in the date's own zone, moved; the zone notation stays as written.
    const local = Date.UTC(year, month, +m[3]!, +m[9]!, +m[10]!, m[11] === undefined ? 0 : +m[11]);
    if (!Number.isFinite(local)) return undefined;
    const d = new Date(local + shift);
    const dayText = m[3]!.length === 1 ? String(d.getUTCDate()) : pad(d.getUTCDate());
    const yearText = twoDigitYear ? pad(d.getUTCFullYear() % 100) : String(d.getUTCFullYear());
    const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${m[11] === undefined ? '' : ':' + pad(d.getUTCSeconds())}`;
    return `${m[1] === undefined ? '' : DAYS[d.getUTCDay()]! + m[2]!}${dayText}${m[4]}${MONTHS[d.getUTCMonth()]!}${m[6]}${yearText}${m[8]}${time}${m[12]}${m[13]}`;
  }
  return undefined;
}

function shiftEpoch(digits: string, shift: number): string | undefined {
  const n = Number(digits);
  if (digits.length === 10 && n >= EPOCH_MIN_S && n <= EPOCH_MAX_S) return String(n + Math.round(shift / 1000));
  if (digits.length === 13 && n >= EPOCH_MIN_S * 1000 && n <= EPOCH_MAX_S * 1000) return String(n + shift);
  return undefined;
}

/** The document with every whole-value date moved by `shift` ms (see the module comment). */
export function shiftDocument(bytes: Uint8Array, shift: number): Buffer {
  const text = Buffer.from(bytes).toString('latin1');
  const first = text.trimStart()[0];
  let out: string;
  if (first === '{' || first === '[') {
    out = text
      // String values and keys alike; a key is never a date.
      .replace(/"([0-9][0-9A-Za-z:.+\- ]{7,34})"/g, (all, value: string) => {
        const moved = shiftDateText(value, shift);
        return moved === undefined ? all : `"${moved}"`;
      })
      .replace(/(:\s*)(\d{10}|\d{13})(?=\s*[,}\]])/g, (all, colon: string, digits: string) => {
        const moved = shiftEpoch(digits, shift);
        return moved === undefined ? all : colon + moved;
      });
  } else {
    // Text nodes only: `>value<`, blanks around the value kept; and a CDATA section that is an
    // element's whole text (the Federal Reserve's `<pubDate><![CDATA[…]]></pubDate>`).
    out = text
      .replace(/>(\s*)([^<>\s][^<>]{6,40}?)(\s*)</g, (all, lead: string, value: string, trail: string) => {
        const moved = shiftDateText(value, shift);
        return moved === undefined ? all : `>${lead}${moved}${trail}<`;
      })
      .replace(/>(\s*<!\[CDATA\[\s*)([^\s\]<>][^\]<>]{6,40}?)(\s*\]\]>\s*)</g, (all, lead: string, value: string, trail: string) => {
        const moved = shiftDateText(value, shift);
        return moved === undefined ? all : `>${lead}${moved}${trail}<`;
      });
  }
  return Buffer.from(out, 'latin1');
}

/** Parses far in the future, at a midnight: no item is clamped, a date-only one is its day. */
const PARSE_NOW = Date.UTC(2100, 0, 1);

/** The newest item date the service's parser reads from a capture, in ms. */
export function newestEntry(source: SourceDef, capture: RealCapture, bytes: Uint8Array): number {
  const { items } = parseSource(source, bytes, capture.contentType, PARSE_NOW, capture.finalUrl);
  let newest = -Infinity;
  for (const item of items) if (item.published < PARSE_NOW && item.published > newest) newest = item.published;
  if (!Number.isFinite(newest)) throw new Error(`${capture.file}: no dated item to replay from`);
  return newest;
}

export function readRealIndex(): RealCapture[] {
  return JSON.parse(readFileSync(new URL('index.json', REAL_DIR), 'utf8')) as RealCapture[];
}

/**
 * Source id → its replayed capture, dates moved relative to `start`. Done once: the body
 * (and so its ETag) stays the same for the server's life, as a real feed's does between updates.
 */
export function replayRealCaptures(start: number): Map<string, ReplayedDocument> {
  const index = readRealIndex();
  const byFile = new Map(index.map((c) => [c.file, c]));
  const bytesOf = new Map<string, Buffer>();
  const newestOf = new Map<string, number>(); // file → newest entry
  for (const [sourceId, { file }] of Object.entries(REPLAY)) {
    const capture = byFile.get(file);
    if (!capture) throw new Error(`fixtures/real/index.json has no ${file}`);
    if (bytesOf.has(file)) continue;
    const source = SOURCES.find((s) => s.id === capture.sourceId) ?? SOURCES.find((s) => s.id === sourceId);
    if (!source) throw new Error(`no catalogue source ${capture.sourceId}`);
    const bytes = readFileSync(new URL(file, REAL_DIR));
    bytesOf.set(file, bytes);
    newestOf.set(file, newestEntry(source, capture, bytes));
  }
  const clockNewest = new Map<string, number>();
  for (const { file, clock } of Object.values(REPLAY)) {
    const key = clock ?? file;
    clockNewest.set(key, Math.max(clockNewest.get(key) ?? -Infinity, newestOf.get(file)!));
  }
  const shifted = new Map<string, Buffer>();
  const out = new Map<string, ReplayedDocument>();
  for (const [sourceId, { file, clock }] of Object.entries(REPLAY)) {
    const shiftMs = Math.round((start - LEAD_MS - clockNewest.get(clock ?? file)!) / MINUTE) * MINUTE;
    const key = `${file}@${shiftMs}`;
    if (!shifted.has(key)) shifted.set(key, shiftDocument(bytesOf.get(file)!, shiftMs));
    out.set(sourceId, { file, body: shifted.get(key)!, contentType: byFile.get(file)!.contentType, shiftMs });
  }
  return out;
}
