/**
 * A simulated SEC EDGAR "latest filings" (getcurrent) Atom endpoint over loopback HTTP, for tests
 * and the freshness benchmark of the EDGAR poller.
 *
 * It serves documents in the shape of the real captures (fixtures/real/edgar-getcurrent-*.xml):
 * ISO-8859-1 XML (the 2026 capture edgar-getcurrent-4-2026-08-27.xml: https id, scheme and links), relative feed links, times in US Eastern time with the offset of the day, one
 * entry per filing party, HTML-escaped summaries, and `urn:tag:sec.gov,2008:accession-number=`
 * ids. It enforces what SEC documents for automated access: a declared User-Agent with a contact
 * e-mail address, and at most 10 requests in any second (see /work/shared/SOURCES.md,
 * "## /edgar/filings").
 */
import { listenLoopback, mulberry32 } from './loopback.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface SimFiling {
  accession: string;
  form: string;
  company: string;
  cik: string;
  acceptedMs: number;
  /** For ownership forms (4, 3, 5, SC 13D/G, SCHEDULE 13D): the other party, listed as a second entry. */
  reporting?: { name: string; cik: string };
}

export interface EdgarSim {
  /** http://127.0.0.1:PORT/cgi-bin/browse-edgar?action=getcurrent&type=&company=&dateb=&owner=include&start=0&count=100&output=atom */
  url: string;
  /** http://127.0.0.1:PORT */
  base: string;
  /** Adds a filing now (acceptedMs defaults to Date.now()); returns it. Accession numbers unique and increasing. */
  publish(f?: Partial<SimFiling>): SimFiling;
  /** Adds n random filings with a realistic form mix; returns them. */
  publishMany(n: number): SimFiling[];
  /** Every request: time (ms), query start/count/type, status. */
  requests: { at: number; start: number; count: number; type: string; status: number; userAgent: string | undefined }[];
  /** Most requests in any sliding 1000 ms window so far. */
  maxPerSecond(): number;
  close(): Promise<void>;
}

export interface EdgarSimOptions {
  /** Requests allowed in any sliding 1000 ms window (SEC: 10). */
  limitPerSecond?: number;
  /** Seed for the random names, CIKs, forms and sizes (default: random). */
  seed?: number;
}

const PATH = '/cgi-bin/browse-edgar';
const ALLOWED_COUNTS = new Set([10, 20, 40, 80, 100]);
// Assumption: EDGAR answers a `count` outside {10, 20, 40, 80, 100} with its default page of 40.
const DEFAULT_COUNT = 40;

/** Forms and their share (in percent) of random filings. */
const FORM_MIX: readonly [string, number][] = [
  ['4', 45],
  ['8-K', 12],
  ['424B2', 10],
  ['10-Q', 8],
  ['6-K', 5],
  ['13F-HR', 5],
  ['SC 13G', 5],
  ['10-K', 2],
  ['SCHEDULE 13D', 2],
  ['S-1', 1],
  ['D', 1],
  ['497', 1],
  ['NPORT-P', 1], // EDGAR's form name for a monthly N-PORT report
  ['8-K/A', 1],
  ['10-Q/A', 1],
];

/** Document size range in KB, by form without `/A`. */
const SIZE_KB: Readonly<Record<string, [number, number]>> = {
  '3': [3, 8],
  '4': [3, 14],
  '5': [3, 10],
  '8-K': [15, 2500],
  '10-Q': [2000, 12000],
  '10-K': [4000, 30000],
  '6-K': [10, 1200],
  '13F-HR': [8, 600],
  '424B2': [30, 900],
  'SC 13G': [8, 40],
  'SC 13D': [15, 200],
  'SCHEDULE 13G': [8, 40],
  'SCHEDULE 13D': [15, 200],
  'S-1': [1200, 9000],
  D: [4, 10],
  '497': [40, 2500],
  'NPORT-P': [80, 3000],
};

function baseForm(form: string): string {
  return form.toUpperCase().replace(/\/A$/, '');
}
/** Section 16 forms: insider (Reporting) and company (Issuer). */
function isSection16(form: string): boolean {
  const b = baseForm(form);
  return b === '3' || b === '4' || b === '5';
}
/** Beneficial-ownership schedules: holder (Filed by) and company (Subject). */
function isSchedule13(form: string): boolean {
  return /^(SC|SCHEDULE) 13[DG]$/.test(baseForm(form));
}
function isOwnership(form: string): boolean {
  return isSection16(form) || isSchedule13(form);
}

// ---- US Eastern time -------------------------------------------------------------------------

/** UTC ms of the n-th Sunday of a month at the given UTC hour. */
function nthSundayUtc(year: number, month: number, n: number, utcHour: number): number {
  const firstDow = new Date(Date.UTC(year, month, 1)).getUTCDay();
  const day = 1 + ((7 - firstDow) % 7) + 7 * (n - 1);
  return Date.UTC(year, month, day, utcHour);
}
/** ET offset from UTC in minutes: -240 in daylight time (second Sunday of March 2:00 EST to first Sunday of November 2:00 EDT), else -300. */
function etOffsetMinutes(ms: number): number {
  const year = new Date(ms).getUTCFullYear();
  const start = nthSundayUtc(year, 2, 2, 7); // 02:00 EST = 07:00 UTC
  const end = nthSundayUtc(year, 10, 1, 6); // 02:00 EDT = 06:00 UTC
  return ms >= start && ms < end ? -240 : -300;
}
const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A Date whose UTC fields read as ET wall-clock time. */
function etWall(ms: number): { d: Date; offset: number } {
  const offset = etOffsetMinutes(ms);
  return { d: new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000), offset };
}
function ymd(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}
/** `2018-04-24T08:22:51-04:00` */
function etIso(ms: number): string {
  const { d, offset } = etWall(ms);
  const off = `-${pad(Math.abs(offset) / 60)}:00`;
  return `${ymd(d)}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${off}`;
}
/** `Tue, 24 Apr 2018 08:22:51 EDT` */
function etTitleDate(ms: number): string {
  const { d, offset } = etWall(ms);
  return `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${offset === -240 ? 'EDT' : 'EST'}`;
}
/**
 * EDGAR's filing date: the ET date of acceptance, or the next business day when accepted on a
 * weekend or after 17:30 ET (22:00 for Section 16 forms) — the captures show 13F-HRs accepted at
 * 18:18 and 20:00 filed the next day. Federal holidays are not modelled.
 */
function filingDate(ms: number, form: string): string {
  const { d } = etWall(ms);
  const secs = d.getUTCHours() * 3600 + d.getUTCMinutes() * 60 + d.getUTCSeconds();
  const cutoff = isSection16(form) ? 22 * 3600 : 17 * 3600 + 30 * 60;
  const day = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
  if (secs > cutoff) day.setUTCDate(day.getUTCDate() + 1);
  while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day.setUTCDate(day.getUTCDate() + 1);
  return ymd(day);
}

// ---- XML ------------------------------------------------------------------------------------

/** Escapes for XML text and attributes; characters outside ISO-8859-1 become numeric references. */
function esc(s: string): string {
  let out = s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  // XML 1.0 forbids these control characters.
  out = out.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
  return out.replace(/[^\u0000-\u00ff]/gu, (c) => `&#${c.codePointAt(0)};`);
}

function formatSize(kb: number): string {
  return kb >= 1024 ? `${Math.round(kb / 1024)} MB` : `${kb} KB`;
}

function entryXml(f: SimFiling, partyName: string, partyCik: string, role: string, filed: string, size: string): string {
  const accNoDashes = f.accession.replace(/-/g, '');
  const cikNum = String(Number(partyCik));
  return (
    `<entry>\n` +
    `<title>${esc(f.form)} - ${esc(partyName)} (${partyCik}) (${role})</title>\n` +
    `<link rel="alternate" type="text/html" href="https://www.sec.gov/Archives/edgar/data/${cikNum}/${accNoDashes}/${f.accession}-index.htm"/>\n` +
    `<summary type="html">\n &lt;b&gt;Filed:&lt;/b&gt; ${filed} &lt;b&gt;AccNo:&lt;/b&gt; ${f.accession} &lt;b&gt;Size:&lt;/b&gt; ${size}\n</summary>\n` +
    `<updated>${etIso(f.acceptedMs)}</updated>\n` +
    `<category scheme="https://www.sec.gov/" label="form type" term="${esc(f.form)}"/>\n` +
    `<id>urn:tag:sec.gov,2008:accession-number=${f.accession}</id>\n` +
    `</entry>\n`
  );
}

function feedXml(entries: string[], nowMs: number): string {
  return (
    `<?xml version="1.0" encoding="ISO-8859-1" ?>\n` +
    `<feed xmlns="http://www.w3.org/2005/Atom">\n` +
    `<title>Latest Filings - ${etTitleDate(nowMs)}</title>\n` +
    `<link rel="alternate" href="/cgi-bin/browse-edgar?action=getcurrent"/>\n` +
    `<link rel="self" href="/cgi-bin/browse-edgar?action=getcurrent"/>\n` +
    `<id>https://www.sec.gov/cgi-bin/browse-edgar?action=getcurrent</id>\n` +
    `<author><name>Webmaster</name><email>webmaster@sec.gov</email></author>\n` +
    `<updated>${etIso(nowMs)}</updated>\n` +
    entries.join('') +
    `</feed>\n`
  );
}

const UNDECLARED_HTML =
  '<!DOCTYPE html>\n<html><head><title>SEC.gov | Request Rate Threshold Exceeded</title></head><body>' +
  '<h1>Your Request Originates from an Undeclared Automated Tool</h1>' +
  '<p>To allow for equitable access to all users, SEC reserves the right to limit requests originating from undeclared automated tools. ' +
  'Please declare your traffic by updating your user agent to include company specific information.</p></body></html>\n';
const RATE_HTML =
  '<!DOCTYPE html>\n<html><head><title>SEC.gov | Request Rate Threshold Exceeded</title></head><body>' +
  '<h1>Request Rate Threshold Exceeded</h1>' +
  '<p>Your request has exceeded the maximum allowed rate of 10 requests per second. ' +
  'Please limit your request rate to comply with SEC fair access guidelines.</p></body></html>\n';

// ---- random data ----------------------------------------------------------------------------

const WORDS = [
  'ACME',
  'APEX',
  'BLUE RIDGE',
  'CYPRESS',
  'SUMMIT',
  'HARBOR',
  'NORTHWIND',
  'PINNACLE',
  'REDWOOD',
  'SILVERLAKE',
  'GRANITE',
  'MERIDIAN',
  'ORION',
  'VANTAGE',
  'EVERGREEN',
  'FALCON',
  'IRONWOOD',
  'LIBERTY',
  'MAPLE',
  'PACIFIC',
  'QUANTUM',
  'STERLING',
  'TIDEWATER',
  'UNION',
  'WESTBROOK',
  'AURORA',
  'BEACON',
  'CRESTVIEW',
  'DELTA',
  'HELIX',
];
const SUFFIXES = ['CORP', 'INC', 'HOLDINGS, INC.', 'BANCORP', 'THERAPEUTICS, INC.', 'TECHNOLOGIES INC', 'ENERGY CORP', 'GROUP PLC', 'REIT INC', 'Inc.'];
const LAST = ['SMITH', 'JOHNSON', 'Nguyen', 'GARCIA', 'Doe', 'MILLER', 'Okafor', 'Chen', 'Kowalski', 'MÜLLER', 'Peña', "O'BRIEN"];
const FIRST = ['JOHN', 'Jane', 'MARIA', 'David', 'WEI', 'Christian', 'ANNA', 'Robert', 'José', 'Fatima'];

interface Party {
  name: string;
  cik: string;
}

interface SimRecord {
  f: SimFiling;
  seq: number;
  /** The filing's entries, in listing order, pre-rendered. */
  entries: string[];
}

/** Sorted by acceptance time then publication order, ascending. */
function after(a: SimRecord, b: SimRecord): boolean {
  return a.f.acceptedMs !== b.f.acceptedMs ? a.f.acceptedMs > b.f.acceptedMs : a.seq > b.seq;
}

export async function startEdgarSim(opts: EdgarSimOptions = {}): Promise<EdgarSim> {
  const limit = opts.limitPerSecond ?? 10;
  const rand = mulberry32(opts.seed ?? Math.floor(Math.random() * 2 ** 32));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

  const usedCiks = new Set<string>();
  const newCik = (): string => {
    for (;;) {
      const cik = pad(between(1_000_000, 2_099_999), 10);
      if (!usedCiks.has(cik)) {
        usedCiks.add(cik);
        return cik;
      }
    }
  };
  // Pools, so that the same issuers and holders recur as on EDGAR.
  const companies: Party[] = [];
  const people: Party[] = [];
  const funds: Party[] = [];
  const fromPool = (pool: Party[], size: number, make: () => string): Party => {
    if (pool.length < size && (pool.length === 0 || rand() < 0.5)) {
      const p = { name: make(), cik: newCik() };
      pool.push(p);
      return p;
    }
    return pick(pool);
  };
  const company = () =>
    fromPool(companies, 400, () => {
      const r = rand();
      if (r < 0.05) return `${pick(WORDS)} & ${pick(WORDS)} ${pick(SUFFIXES)}`;
      if (r < 0.08)
        return `Société ${pick(WORDS)
          .toLowerCase()
          .replace(/^./, (c) => c.toUpperCase())} S.A.`;
      return `${pick(WORDS)} ${pick(SUFFIXES)}`;
    });
  const person = () => fromPool(people, 800, () => `${pick(LAST)} ${pick(FIRST)}${rand() < 0.5 ? ` ${String.fromCharCode(65 + between(0, 25))}` : ''}`);
  const fund = () =>
    fromPool(
      funds,
      200,
      () =>
        `${pick(WORDS)
          .toLowerCase()
          .replace(/\b\w/g, (c) => c.toUpperCase())} Capital Management, LLC`,
    );
  const randomForm = (): string => {
    let r = rand() * 100;
    for (const [form, w] of FORM_MIX) {
      r -= w;
      if (r < 0) return form;
    }
    return '8-K';
  };

  const records: SimRecord[] = [];
  const accessions = new Set<string>();
  let seq = 0;
  const agent = '0001193125'; // one filing agent, so generated accession numbers increase
  let accSeq = between(100_000, 300_000);

  const publish = (p: Partial<SimFiling> = {}): SimFiling => {
    const form = p.form ?? randomForm();
    const acceptedMs = p.acceptedMs ?? Date.now();
    let accession = p.accession;
    if (accession === undefined) {
      const yy = pad(etWall(Date.now()).d.getUTCFullYear() % 100);
      do accession = `${agent}-${yy}-${pad(accSeq++, 6)}`;
      while (accessions.has(accession));
    } else if (!/^\d{10}-\d{2}-\d{6}$/.test(accession)) {
      throw new Error(`edgar-sim: accession ${accession} is not 0000000000-00-000000`);
    } else if (accessions.has(accession)) {
      throw new Error(`edgar-sim: accession ${accession} already published`);
    }
    const upper = baseForm(form);
    let party: Party;
    if (p.company !== undefined || p.cik !== undefined) {
      party = { name: p.company ?? company().name, cik: p.cik ?? newCik() };
    } else if (upper === '13F-HR' || upper === 'D') {
      party = fund();
    } else {
      party = company();
    }
    const f: SimFiling = { accession, form, company: party.name, cik: pad(Number(party.cik.replace(/\D/g, '') || '0'), 10), acceptedMs };
    if (isOwnership(form)) {
      const other = p.reporting ?? (isSection16(form) ? person() : rand() < 0.5 ? fund() : person());
      f.reporting = { name: other.name, cik: pad(Number(other.cik.replace(/\D/g, '') || '0'), 10) };
    }
    // Other forms list only the filer: a `reporting` given for them is not listed.

    const [lo, hi] = SIZE_KB[upper] ?? [10, 500];
    const size = formatSize(between(lo, hi));
    const filed = filingDate(acceptedMs, form);
    const entries: string[] = [];
    if (f.reporting && isSection16(form)) {
      entries.push(entryXml(f, f.reporting.name, f.reporting.cik, 'Reporting', filed, size));
      entries.push(entryXml(f, f.company, f.cik, 'Issuer', filed, size));
    } else if (f.reporting) {
      entries.push(entryXml(f, f.company, f.cik, 'Subject', filed, size));
      entries.push(entryXml(f, f.reporting.name, f.reporting.cik, 'Filed by', filed, size));
    } else {
      entries.push(entryXml(f, f.company, f.cik, 'Filer', filed, size));
    }
    const rec: SimRecord = { f, seq: seq++, entries };
    // Insert in order; usually at the end.
    let i = records.length;
    while (i > 0 && after(records[i - 1]!, rec)) i--;
    records.splice(i, 0, rec);
    accessions.add(accession);
    return { ...f, ...(f.reporting ? { reporting: { ...f.reporting } } : {}) };
  };

  const publishMany = (n: number): SimFiling[] => {
    const out: SimFiling[] = [];
    for (let i = 0; i < n; i++) out.push(publish());
    return out;
  };

  const requests: EdgarSim['requests'] = [];
  let windowStart = 0; // index of the oldest request inside the current 1000 ms window
  let maxWindow = 0;

  const page = (type: string, owner: string, start: number, count: number): string[] => {
    const prefix = type.trim().toUpperCase();
    const out: string[] = [];
    let skipped = 0;
    for (let i = records.length - 1; i >= 0 && out.length < count; i--) {
      const r = records[i]!;
      if (prefix && !r.f.form.toUpperCase().startsWith(prefix)) continue;
      const own = isOwnership(r.f.form);
      if (owner === 'exclude' && own) continue;
      if (owner === 'only' && !own) continue;
      for (const e of r.entries) {
        if (skipped < start) skipped++;
        else if (out.length < count) out.push(e);
      }
    }
    return out;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const now = Date.now();
    const ua = req.headers['user-agent'];
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      url = undefined;
    }
    const q = url?.searchParams;
    const type = q?.get('type') ?? '';
    const rawCount = Number(q?.get('count') ?? '');
    const count = ALLOWED_COUNTS.has(rawCount) ? rawCount : DEFAULT_COUNT;
    const rawStart = q?.get('start') ?? '0';
    // Assumption: a start that is not a non-negative integer is read as 0.
    const start = /^\d{1,9}$/.test(rawStart) ? Number(rawStart) : 0;

    const rec = { at: now, start, count, type, status: 0, userAgent: ua };
    requests.push(rec);
    while (windowStart < requests.length && requests[windowStart]!.at <= now - 1000) windowStart++;
    const inWindow = requests.length - windowStart;
    if (inWindow > maxWindow) maxWindow = inWindow;

    const send = (status: number, headers: Record<string, string>, body: string | Buffer) => {
      rec.status = status;
      const buf = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
      res.writeHead(status, { ...headers, 'Content-Length': String(buf.length) });
      res.end(req.method === 'HEAD' ? undefined : buf);
    };
    const html = { 'Content-Type': 'text/html', 'Cache-Control': 'no-cache' };

    if (inWindow > limit) return send(403, html, RATE_HTML);
    if (!ua?.includes('@')) return send(403, html, UNDECLARED_HTML);
    if (!url || url.pathname !== PATH) return send(404, html, '<html><body><h1>Not Found</h1></body></html>\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, { ...html, Allow: 'GET, HEAD' }, '<html><body><h1>Method Not Allowed</h1></body></html>\n');
    if ((q?.get('action') ?? '') !== 'getcurrent' || (q?.get('output') ?? '') !== 'atom') {
      return send(400, html, '<html><body><h1>Bad Request</h1><p>This simulator serves only action=getcurrent&amp;output=atom.</p></body></html>\n');
    }
    const owner = (q?.get('owner') ?? 'include').toLowerCase();
    const xml = feedXml(page(type, owner, start, count), now);
    send(200, { 'Content-Type': 'application/atom+xml', 'Cache-Control': 'no-cache' }, Buffer.from(xml, 'latin1'));
  };

  const server: Server = createServer((req, res) => {
    req.on('error', () => {});
    res.on('error', () => {});
    try {
      handle(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end('internal error');
    }
  });
  const port = await listenLoopback(server);
  const base = `http://127.0.0.1:${port}`;

  return {
    url: `${base}${PATH}?action=getcurrent&type=&company=&dateb=&owner=include&start=0&count=100&output=atom`,
    base,
    publish,
    publishMany,
    requests,
    maxPerSecond: () => maxWindow,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
