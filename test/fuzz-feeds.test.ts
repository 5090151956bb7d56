/**
 * The parsers fuzzed: mutations of every document of the corpus (fixtures/real/ byte for byte,
 * fixtures/feeds/ rendered) are parsed with their catalogue source, and every input must
 *
 *   - return a result whose items all have a non-empty title, an absolute http(s) URL and a
 *     finite publication time, or throw a ParseError: never another exception;
 *   - finish within its time budget (2 s, or 0.5 s per MB for bigger inputs); a worker thread
 *     runs the inputs and a watchdog here terminates it when one does not finish at all;
 *   - not grow the heap out of proportion to its size (inputs of 1 MB and more; growth counts
 *     the garbage made during the parse, sampled with process.memoryUsage().heapUsed; see
 *     MAX_HEAP_FACTOR for why the bound is 64× and not 20×).
 *
 * Reproduce: FUZZ_SEED=<seed> (default 0x5eed) FUZZ_ITERATIONS=<n> (default 1000, about 35 s on
 * two cores); FUZZ_ONLY=<iteration> replays one iteration of a seed. Every failure names its
 * seed, iteration and mutations. The inputs that once crashed, hung or blew up are kept as
 * fixed regression cases below.
 */
import assert from 'node:assert/strict';
import { mulberry32 } from './helpers/loopback.js';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { SOURCES, type SourceDef } from '../src/catalog/index.js';
import { renderFixture } from '../src/ingest/fixture-template.js';
import { ParseError, parseSource, type ParseResult } from '../src/ingest/parse/index.js';
import { htmlToText } from '../src/ingest/parse/text.js';
import { escapeStrayAmps, stripDoctypes } from '../src/ingest/parse/xml.js';

const NOW = Date.parse('2026-11-23T15:30:00Z');
const MB = 1024 * 1024;
const FIXTURES = new URL('../../fixtures/', import.meta.url);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) >>> 0 : 0x5eed;
const ITERATIONS = Number(process.env.FUZZ_ITERATIONS ?? 1000);
const ONLY = process.env.FUZZ_ONLY !== undefined ? Number(process.env.FUZZ_ONLY) : undefined;
/** Time one parse may take: 2 s, or 0.5 s per MB for inputs over 4 MB. */
const budgetMs = (bytes: number) => Math.max(2000, (bytes / MB) * 500);
/**
 * Heap growth allowed during one parse of an input of 1 MB or more, as a multiple of its size.
 * The aim is 20×, but fast-xml-parser (5.12) builds every text node and attribute value one
 * character at a time (`textData += xmlData[i]`): a chain of cons strings, ~30–55 bytes of
 * heap per character of the longest value until it is flattened. A 1 MB attribute grows the
 * heap by ~55 MB. The check stays at 64× so that anything worse than that linear cost
 * (an expansion, a quadratic copy) still fails.
 */
const MAX_HEAP_FACTOR = 64;
/** The parsing worker's young generation, fixed (Node 20's default): see inWorker. */
const YOUNG_GENERATION_MB = 48;

// ---- the corpus -----------------------------------------------------------------------------

interface Doc {
  name: string;
  source: SourceDef;
  body: Buffer;
  contentType: string | undefined;
  url: string | undefined;
}

function loadCorpus(): Doc[] {
  const byId = (id: string) => {
    const s = SOURCES.find((x) => x.id === id);
    if (!s) throw new Error(`no catalogue source ${id}`);
    return s;
  };
  const docs: Doc[] = [];
  const real = JSON.parse(readFileSync(new URL('real/index.json', FIXTURES), 'utf8')) as { file: string; sourceId: string; contentType: string; finalUrl: string }[];
  for (const c of real) {
    docs.push({ name: `real/${c.file}`, source: byId(c.sourceId), body: readFileSync(new URL(`real/${c.file}`, FIXTURES)), contentType: c.contentType, url: c.finalUrl });
  }
  const feeds = JSON.parse(readFileSync(new URL('feeds/index.json', FIXTURES), 'utf8')) as Record<string, string>;
  for (const [id, file] of Object.entries(feeds)) {
    docs.push({ name: `feeds/${file}@${id}`, source: byId(id), body: Buffer.from(renderFixture(readFileSync(new URL(`feeds/${file}`, FIXTURES)), NOW)), contentType: undefined, url: undefined });
  }
  return docs;
}

// ---- a seeded PRNG (mulberry32) ---------------------------------------------------------------

type Rng = () => number;
/** The generator of one iteration: iterations replay on their own (FUZZ_ONLY). */
const iterationRng = (seed: number, i: number) => mulberry32((seed ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0);
const int = (rng: Rng, n: number) => Math.floor(rng() * n);
const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[int(rng, xs.length)]!;

// ---- mutations --------------------------------------------------------------------------------

interface Input {
  body: Buffer;
  contentType: string | undefined;
}
type Mutation = (rng: Rng, input: Input, doc: Doc, corpus: Doc[]) => { input: Input; desc: string };

/** Byte-preserving string view: ASCII edits on it keep every other byte as it was. */
const latin1 = (b: Buffer) => b.toString('latin1');
const bytes = (s: string) => Buffer.from(s, 'latin1');
const isJson = (b: Buffer) => /^[\s\ufeff\u00ef\u00bb\u00bf]*[[{]/.test(latin1(b.subarray(0, 64)));

/** A position inside character data: just after a `>` that is not followed by `<`. */
function textPosition(rng: Rng, s: string): number {
  for (let tries = 0; tries < 20; tries++) {
    const at = s.indexOf('>', int(rng, s.length));
    if (at >= 0 && s[at + 1] !== '<' && at + 1 < s.length) return at + 1;
  }
  return int(rng, s.length + 1);
}
/** Just after the opening tag of a title (where a bad title hurts), else any text position. */
function titlePosition(rng: Rng, s: string): number {
  const titles: number[] = [];
  const re = /<title\b[^>]*>/g;
  for (let m: RegExpExecArray | null; (m = re.exec(s)) && titles.length < 200; ) titles.push(m.index + m[0].length);
  return titles.length ? pick(rng, titles) : textPosition(rng, s);
}
const insertAt = (s: string, at: number, what: string) => s.slice(0, at) + what + s.slice(at);
/** After the XML declaration, if any: where a DOCTYPE goes. */
const prologEnd = (s: string) => /^\s*<\?xml[^>]*>/.exec(s)?.[0].length ?? 0;

const CHARSETS = ['ISO-8859-1', 'UTF-16', 'UTF-16BE', 'windows-1252', 'x-bogus-charset', 'UTF-32', 'utf-7', 'Shift_JIS', 'replacement', 'us-ascii', 'koi8-r', 'utf-8', 'UTF-8 ', ''];
const BAD_UTF8 = [[0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82], [0xff], [0xfe], [0xf4, 0x90, 0x80, 0x80], [0xc3], [0x00]];
const ENTITY_TRICKS = [
  '&#x110000;',
  '&#0;',
  '&#x0;',
  '&#xD800;',
  '&#xDFFF;',
  '&#99999999;',
  '&#x;',
  '&#;',
  '&amp',
  '&#x41',
  '&lt',
  '&unknown;',
  '&#-1;',
  '&#x0000000041;',
  '&',
  '&&&',
  '&#1114111;',
  '&#xFFFE;',
  '&nbsp;',
  '&lol;',
];
const LAUGHS = (() => {
  let d = '<!DOCTYPE lolz [<!ENTITY lol "lol">';
  for (let k = 2; k <= 9; k++) d += `<!ENTITY lol${k} "${`&lol${k === 2 ? '' : k - 1};`.repeat(10)}">`;
  return d + ']>';
})();
const EXTERNAL = '<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd"><!ENTITY web SYSTEM "http://127.0.0.1:1/x"><!ENTITY % p SYSTEM "http://127.0.0.1:1/x.dtd"> %p;]>';

const MUTATIONS: Record<string, Mutation> = {
  truncate: (rng, { body, contentType }) => {
    const at = int(rng, body.length);
    return { input: { body: body.subarray(0, at), contentType }, desc: `truncate@${at}` };
  },
  flip: (rng, { body, contentType }) => {
    const b = Buffer.from(body);
    const n = 1 + int(rng, 16);
    for (let k = 0; k < n && b.length; k++) {
      const at = int(rng, b.length);
      b[at] = rng() < 0.5 ? b[at]! ^ (1 << int(rng, 8)) : int(rng, 256);
    }
    return { input: { body: b, contentType }, desc: `flip×${n}` };
  },
  splice: (rng, { body, contentType }) => {
    const a = int(rng, body.length + 1);
    const len = int(rng, Math.min(4096, body.length - a + 1));
    const op = int(rng, 3);
    const junk = Buffer.from(Array.from({ length: 1 + int(rng, 64) }, () => int(rng, 256)));
    const b =
      op === 0
        ? Buffer.concat([body.subarray(0, a), body.subarray(a + len)])
        : op === 1
          ? Buffer.concat([body.subarray(0, a + len), body.subarray(a, a + len), body.subarray(a + len)])
          : Buffer.concat([body.subarray(0, a), junk, body.subarray(a)]);
    return { input: { body: b, contentType }, desc: `${['delete', 'duplicate', 'insert'][op]}@${a}+${op === 2 ? junk.length : len}` };
  },
  declaredEncoding: (rng, { body, contentType }) => {
    const cs = pick(rng, CHARSETS);
    let s = latin1(body);
    const decl = /^(\s*<\?xml[^>]*?)(\s+encoding=["'][^"']*["'])?(\s*\?>)/.exec(s);
    s = decl ? `${decl[1]} encoding="${cs}"${decl[3]}${s.slice(decl[0].length)}` : `<?xml version="1.0" encoding="${cs}"?>${s}`;
    return { input: { body: bytes(s), contentType }, desc: `declared encoding "${cs}"` };
  },
  contentTypeCharset: (rng, { body }) => {
    const cs = pick(rng, CHARSETS);
    const type = pick(rng, ['application/xml', 'application/rss+xml', 'text/html', 'application/json', 'text/plain']);
    const contentType = `${type}; charset=${rng() < 0.2 ? `"${cs}"` : cs}`;
    return { input: { body, contentType }, desc: `Content-Type ${contentType}` };
  },
  reencode: (rng, { body, contentType }) => {
    const text = body.toString('utf8');
    const op = int(rng, 4);
    const le = Buffer.from(text, 'utf16le');
    const be = Buffer.from(le).swap16();
    const b =
      op === 0
        ? Buffer.concat([Buffer.from([0xff, 0xfe]), le])
        : op === 1
          ? Buffer.concat([Buffer.from([0xfe, 0xff]), be])
          : op === 2
            ? le
            : Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf8')]);
    return { input: { body: b, contentType }, desc: ['UTF-16LE with BOM', 'UTF-16BE with BOM', 'UTF-16LE without BOM', 'UTF-16 BOM on UTF-8'][op]! };
  },
  deepNesting: (rng, { body, contentType }) => {
    const depth = pick(rng, [101, 1000, 10_000, 100_000]);
    if (isJson(body)) {
      const s = latin1(body);
      const at = s.indexOf(':', int(rng, s.length));
      const v = '['.repeat(depth) + ']'.repeat(rng() < 0.8 ? depth : int(rng, depth));
      const out = at < 0 ? v : s.slice(0, at + 1) + v + ',' + s.slice(at + 1);
      return { input: { body: bytes(out), contentType }, desc: `JSON arrays nested ${depth} deep` };
    }
    const s = latin1(body);
    const balanced = rng() < 0.7;
    const v = '<a>'.repeat(depth) + (balanced ? '</a>'.repeat(depth) : '');
    return { input: { body: bytes(insertAt(s, textPosition(rng, s), v)), contentType }, desc: `${depth} nested elements${balanced ? '' : ' unclosed'}` };
  },
  hugeAttribute: (rng, { body, contentType }) => {
    const size = pick(rng, [64 * 1024, MB]);
    const value = rng() < 0.5 ? 'A'.repeat(size) : '&amp;'.repeat(size / 5);
    if (isJson(body)) {
      const s = latin1(body);
      const at = s.indexOf('"', int(rng, s.length));
      return { input: { body: bytes(at < 0 ? s : insertAt(s, at + 1, value)), contentType }, desc: `JSON string grown by ${size} bytes` };
    }
    const s = latin1(body);
    const tags: number[] = [];
    const re = /<[A-Za-z][\w:.-]*/g;
    for (let m: RegExpExecArray | null; (m = re.exec(s)) && tags.length < 500; ) tags.push(m.index + m[0].length);
    const at = tags.length ? pick(rng, tags) : 0;
    return { input: { body: bytes(insertAt(s, at, ` x-big="${value}"`)), contentType }, desc: `${size}-byte attribute @${at}` };
  },
  entities: (rng, { body, contentType }) => {
    let s = latin1(body);
    const op = int(rng, 4);
    if (op === 0) s = insertAt(insertAt(s, titlePosition(rng, s), '&lol9;'), prologEnd(s), LAUGHS);
    else if (op === 1) s = insertAt(insertAt(s, titlePosition(rng, s), '&xxe;&web;'), prologEnd(s), EXTERNAL);
    else if (op === 2) for (let k = 0; k < 1 + int(rng, 8); k++) s = insertAt(s, rng() < 0.5 ? titlePosition(rng, s) : textPosition(rng, s), pick(rng, ENTITY_TRICKS));
    else s = insertAt(s, prologEnd(s), pick(rng, ['<!DOCTYPE x [', '<!DOCTYPE', '<!DOCTYPE x [<!ENTITY a "]">', '<!doctype html>']).repeat(1 + int(rng, 5000)));
    return { input: { body: bytes(s), contentType }, desc: ['billion laughs', 'external entities', 'bad character references', 'unterminated DOCTYPEs'][op]! };
  },
  invalidUtf8: (rng, { body, contentType }) => {
    let b = body;
    const n = 1 + int(rng, 8);
    for (let k = 0; k < n; k++) {
      const at = int(rng, b.length + 1);
      b = Buffer.concat([b.subarray(0, at), Buffer.from(pick(rng, BAD_UTF8)), b.subarray(at)]);
    }
    return { input: { body: b, contentType }, desc: `invalid UTF-8 ×${n}` };
  },
  bomInside: (rng, { body, contentType }) => {
    const at = rng() < 0.3 ? 0 : int(rng, body.length + 1);
    const bom = pick(rng, [
      [0xef, 0xbb, 0xbf],
      [0xff, 0xfe],
      [0xfe, 0xff],
    ]);
    return { input: { body: Buffer.concat([body.subarray(0, at), Buffer.from(bom), body.subarray(at)]), contentType }, desc: `BOM ${bom.map((x) => x.toString(16)).join(' ')} @${at}` };
  },
  json: (rng, { body, contentType }) => {
    let doc: unknown;
    try {
      doc = JSON.parse(body.toString('utf8').replace(/^\ufeff/, ''));
    } catch {
      return MUTATIONS.truncate!(rng, { body, contentType }, undefined as never, []);
    }
    // Every node's container and key, then a few of them replaced.
    const slots: [Record<string, unknown>, string][] = [];
    const walk = (v: unknown, depth: number) => {
      if (v === null || typeof v !== 'object' || depth > 12 || slots.length > 50_000) return;
      for (const k of Object.keys(v)) {
        slots.push([v as Record<string, unknown>, k]);
        walk((v as Record<string, unknown>)[k], depth + 1);
      }
    };
    walk(doc, 0);
    const VALUES: (() => unknown)[] = [
      () => null,
      () => 1e308,
      () => -1e308,
      () => 0,
      () => -1,
      () => 123456789012345,
      () => 1.5,
      () => true,
      () => [],
      () => ({}),
      () => ['a', 'b'],
      () => ({ toString: 1 }),
      () => ({ toString: 'x', valueOf: 'y' }),
      () => [{ toString: null }],
      () => '',
      () => ' ',
      () => '<b>x</b> &amp; &#0; &#x110000;',
      () => 'javascript:alert(1)',
      () => '/relative/path',
      () => '//host/x',
      () => 'x'.repeat(100_000),
      () => '2026-02-30',
      () => '99999-01-01T00:00:00Z',
      () => 'Mon, 99 Foo 2026',
      () => '9999999999999',
      () => '\ud800',
    ];
    const n = 1 + int(rng, 6);
    const what: string[] = [];
    for (let k = 0; k < n && slots.length; k++) {
      const [obj, key] = pick(rng, slots);
      if (rng() < 0.15) {
        delete obj[key];
        what.push(`-${key}`);
      } else {
        const f = int(rng, VALUES.length);
        obj[key] = VALUES[f]!();
        what.push(`${key}=#${f}`);
      }
    }
    let s = JSON.stringify(doc) ?? 'null';
    if (rng() < 0.2) {
      // Number literals JSON.stringify cannot write.
      const lit = pick(rng, ['1e400', '-1e400', '123456789012345678901234567890', '-0', '0.0000000000000000000001']);
      s = s.replace(/(?<=:)-?\d+(\.\d+)?(?=[,}])/, lit);
      what.push(lit);
    }
    return { input: { body: Buffer.from(s), contentType }, desc: `JSON ${what.join(' ')}` };
  },
  repeatItems: (rng, { body, contentType }) => {
    // Repeated up to 16 MB: a large first row (a whole nested document) must not make a string too long to build.
    const wanted = pick(rng, [2, 50, 1000, 6000]);
    const capped = (row: string) => Math.max(2, Math.min(wanted, Math.floor((16 << 20) / Math.max(1, row.length))));
    if (isJson(body)) {
      const s = body.toString('utf8');
      const at = s.indexOf('[{');
      const end = at < 0 ? -1 : s.indexOf('},{', at);
      if (end < 0) return { input: { body, contentType }, desc: 'repeat (nothing to repeat)' };
      const row = s.slice(at + 1, end + 1);
      const times = capped(row);
      return { input: { body: Buffer.from(s.slice(0, at + 1) + (row + ',').repeat(times) + s.slice(at + 1)), contentType }, desc: `JSON row ×${times}` };
    }
    const s = latin1(body);
    const m = /<(item|entry)\b[\s\S]*?<\/\1>/.exec(s);
    if (!m) return { input: { body, contentType }, desc: 'repeat (nothing to repeat)' };
    const times = capped(m[0]);
    return { input: { body: bytes(s.slice(0, m.index) + m[0].repeat(times) + s.slice(m.index)), contentType }, desc: `<${m[1]}> ×${times}` };
  },
  markupRuns: (rng, { body, contentType }) => {
    const s = latin1(body);
    const k = pick(rng, [1000, 50_000, 200_000]);
    const run = pick(rng, ['&lt;a', '&lt;br', '&lt;script&gt;', ' ', '<![CDATA[<a]]>', '<![CDATA[<style>]]>', '&amp;lt;p', '\u00a0']);
    return { input: { body: bytes(insertAt(s, titlePosition(rng, s), run.repeat(k))), contentType }, desc: `"${run}" ×${k} in a title` };
  },
  crossover: (rng, { body, contentType }, _doc, corpus) => {
    const other = pick(rng, corpus);
    const a = int(rng, body.length + 1);
    const b = int(rng, other.body.length + 1);
    return { input: { body: Buffer.concat([body.subarray(0, a), other.body.subarray(b)]), contentType }, desc: `head@${a} + ${other.name} tail@${b}` };
  },
};
const MUTATION_NAMES = Object.keys(MUTATIONS);

/** One iteration's input: a corpus document with one to three mutations. */
function generate(seed: number, i: number, corpus: Doc[]): { doc: Doc; input: Input; desc: string } {
  const rng = iterationRng(seed, i);
  const doc = pick(rng, corpus);
  let input: Input = { body: doc.body, contentType: doc.contentType };
  const descs: string[] = [];
  const n = rng() < 0.7 ? 1 : 2 + int(rng, 2);
  for (let k = 0; k < n; k++) {
    const name = pick(rng, MUTATION_NAMES);
    const out = MUTATIONS[name]!(rng, input, doc, corpus);
    input = out.input;
    descs.push(`${name}: ${out.desc}`);
  }
  return { doc, input, desc: `${doc.name} ← ${descs.join(' ; ')}` };
}

// ---- one parse, checked ------------------------------------------------------------------------

interface Outcome {
  label: string;
  bytes: number;
  ms: number;
  /** ParseError code, or 'ok'. */
  kind: string;
  /** The ParseError message with numbers blanked: the distinct errors. */
  message?: string;
  items?: number;
  heapGrowth?: number;
  failure?: string;
}

function validate(r: ParseResult): string | undefined {
  if (!r || !Array.isArray(r.items)) return 'result without an items array';
  for (const it of r.items) {
    if (typeof it.title !== 'string' || it.title.trim() === '') return `item without a title: ${JSON.stringify(it).slice(0, 200)}`;
    let url: URL;
    try {
      url = new URL(it.url);
    } catch {
      return `item URL not absolute: ${JSON.stringify(it.url).slice(0, 200)}`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `item URL not http(s): ${it.url.slice(0, 200)}`;
    if (typeof it.published !== 'number' || !Number.isFinite(it.published)) return `item "${it.title.slice(0, 60)}" published ${String(it.published)}`;
  }
  return undefined;
}

let gc: (() => void) | undefined;
function forceGc(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}

function runOne(label: string, source: SourceDef, input: Input, url: string | undefined): Outcome {
  const size = input.body.length;
  const big = size >= MB;
  if (big) forceGc();
  const heap0 = big ? process.memoryUsage().heapUsed : 0;
  const t0 = performance.now();
  const out: Outcome = { label, bytes: size, ms: 0, kind: 'ok' };
  try {
    const r = parseSource(source, input.body, input.contentType, NOW, url);
    out.ms = performance.now() - t0;
    out.items = r.items.length;
    const bad = validate(r);
    if (bad) out.failure = bad;
  } catch (err) {
    out.ms = performance.now() - t0;
    if (err instanceof ParseError) {
      out.kind = err.code;
      out.message = `${err.code}: ${err.message.replace(/\d+/g, 'N').slice(0, 90)}`;
    } else {
      out.kind = 'crash';
      out.failure = `threw ${(err as Error)?.constructor?.name ?? typeof err}, not a ParseError: ${String((err as Error)?.stack ?? err).slice(0, 600)}`;
    }
  }
  if (big) {
    out.heapGrowth = process.memoryUsage().heapUsed - heap0;
    if (out.heapGrowth > MAX_HEAP_FACTOR * size && !out.failure)
      out.failure = `heap grew by ${(out.heapGrowth / MB).toFixed(0)} MB for a ${(size / MB).toFixed(1)} MB input (over ${MAX_HEAP_FACTOR}×)`;
  }
  if (out.ms > budgetMs(size) && !out.failure) out.failure = `took ${out.ms.toFixed(0)} ms (budget ${budgetMs(size).toFixed(0)} ms)`;
  return out;
}

// ---- the inputs that once failed ---------------------------------------------------------------

const rssDoc = (items: string, prolog = '<?xml version="1.0" encoding="UTF-8"?>') => `${prolog}<rss version="2.0"><channel><title>t</title><link>https://example.com/</link>${items}</channel></rss>`;
const rssItem = (title: string, description = 'd') =>
  `<item><title>${title}</title><link>https://example.com/a</link><description>${description}</description><pubDate>Mon, 23 Nov 2026 15:00:00 GMT</pubDate></item>`;
const K = 200_000;

/** [label, source id, body, what it did before the fix]. */
const REGRESSIONS: [string, string, string, string][] = [
  ['101 nested elements', 'krebs', rssDoc(rssItem('a', '<x>'.repeat(101) + '</x>'.repeat(101))), 'Error "Maximum nested tags exceeded" from the XML parser'],
  ['10,000 nested elements', 'krebs', rssDoc('<a>'.repeat(10_000) + '</a>'.repeat(10_000) + rssItem('a')), 'Error "Maximum nested tags exceeded"'],
  ['an unclosed CDATA section after the root', 'krebs', rssDoc(rssItem('a & b')) + '<![CDATA['.repeat(3), 'Error "CDATA is not closed."'],
  [
    'a JSON title {"toString": 1}',
    'usgs-2.5',
    '{"features":[{"id":"a","properties":{"title":{"toString":1},"url":"https://e.com/","time":1}}]}',
    'TypeError "Cannot convert object to primitive value"',
  ],
  ['a JSON id [{"toString": null}]', 'cisa-kev', '{"vulnerabilities":[{"cveID":[{"toString":null}],"vulnerabilityName":"x","dateAdded":"2026-11-20"}]}', 'TypeError'],
  ['200,000 unclosed &lt;a in a description', 'krebs', rssDoc(rssItem('a', '&lt;a'.repeat(K))), 'quadratic tag stripping: minutes'],
  ['200,000 unclosed <br in CDATA', 'krebs', rssDoc(rssItem('a', `<![CDATA[${'<br'.repeat(K)}]]>`)), 'quadratic line-break pattern: minutes'],
  ['200,000 unclosed <script> in CDATA', 'krebs', rssDoc(rssItem('a', `<![CDATA[${'<script>'.repeat(K)}]]>`)), 'quadratic script/style pattern'],
  ['200,000 unclosed DOCTYPE subsets', 'krebs', '<!DOCTYPE x ['.repeat(K) + rssDoc(rssItem('a')), 'quadratic DOCTYPE pattern'],
  ['200,000 unclosed CDATA sections and a stray &', 'krebs', rssDoc(rssItem('a&b')) + '<![CDATA['.repeat(K), 'quadratic stray-& pattern'],
  [
    'an EDGAR title with 1 MB of spaces',
    'edgar',
    `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><entry><id>x</id><title>8-K ${' '.repeat(MB)}x (Filer)</title><link href="https://e.com/"/><category term="8-K"/><updated>2026-11-20T00:00:00Z</updated></entry></feed>`,
    'quadratic role-suffix pattern: 100 kB took 10 s',
  ],
];

// ---- the worker: runs inputs and reports each ---------------------------------------------------

type Job = { kind: 'fuzz'; seed: number; iterations: number; only?: number } | { kind: 'regressions' } | { kind: 'big' };
type Msg = { type: 'start'; i: number; label: string; bytes: number } | { type: 'done'; i: number; outcome: Outcome } | { type: 'end' };

function work(job: Job): void {
  const port = parentPort!;
  const run = (i: number, label: string, source: SourceDef, input: Input, url?: string) => {
    port.postMessage({ type: 'start', i, label, bytes: input.body.length } satisfies Msg);
    port.postMessage({ type: 'done', i, outcome: runOne(label, source, input, url) } satisfies Msg);
  };
  const byId = (id: string) => SOURCES.find((s) => s.id === id)!;
  if (job.kind === 'regressions') {
    REGRESSIONS.forEach(([label, id, body], i) => run(i, label, byId(id), { body: Buffer.from(body), contentType: undefined }));
  } else if (job.kind === 'big') {
    // 50 MB of real items: TechCrunch's first item repeated (the fetcher caps bodies at 16 MB
    // raw and 32 MB decoded, src/ingest/fetch-options.ts; the parser must still cope).
    const tc = readFileSync(new URL('real/techcrunch-feedjira.xml', FIXTURES), 'latin1');
    const item = /<item>[\s\S]*?<\/item>/.exec(tc)!;
    const n = Math.ceil((50 * MB) / item[0].length);
    const head = tc.slice(0, item.index);
    const tail = tc.slice(tc.indexOf('</channel>'));
    const body = Buffer.from(head + item[0].repeat(n) + tail, 'latin1');
    run(0, `50 MB: ${n} copies of a real TechCrunch item`, byId('techcrunch'), { body, contentType: 'application/rss+xml; charset=UTF-8' }, 'https://techcrunch.com/feed/');
  } else {
    const corpus = loadCorpus();
    const from = job.only ?? 0;
    const to = job.only !== undefined ? job.only + 1 : job.iterations;
    for (let i = from; i < to; i++) {
      const { doc, input, desc } = generate(job.seed, i, corpus);
      run(i, desc, doc.source, input, doc.url);
    }
  }
  port.postMessage({ type: 'end' } satisfies Msg);
}

/**
 * Runs a job in a worker; a watchdog terminates it when one input runs past twice its budget
 * plus 10 s (a hang that a timer in the same thread could not interrupt).
 */
function inWorker(job: Job): Promise<{ outcomes: Outcome[]; hang?: string }> {
  return new Promise((resolve, reject) => {
    // One young generation size on every Node line: the growth sampled is garbage not yet
    // scavenged, and Node 24's default young generation holds about twice Node 20's.
    const worker = new Worker(new URL(import.meta.url), { workerData: job, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    const outcomes: Outcome[] = [];
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    const finish = (hang?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(hang === undefined ? { outcomes } : { outcomes, hang });
    };
    worker.on('message', (m: Msg) => {
      if (m.type === 'start') {
        clearTimeout(timer);
        timer = setTimeout(() => finish(`iteration ${m.i} (${m.label}, ${m.bytes} bytes) did not finish within ${(2 * budgetMs(m.bytes) + 10_000) / 1000} s`), 2 * budgetMs(m.bytes) + 10_000);
      } else if (m.type === 'done') {
        clearTimeout(timer);
        outcomes.push(m.outcome);
      } else finish();
    });
    worker.on('error', (err) => {
      if (!finished) {
        finished = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    worker.on('exit', (code) => finish(code === 0 ? undefined : `worker exited with code ${code} after ${outcomes.length} inputs (out of memory?)`));
  });
}

// ---- the tests ---------------------------------------------------------------------------------

if (!isMainThread) {
  work(workerData as Job);
} else {
  describe('fuzzing the parsers', () => {
    test('the inputs that once crashed, hung or blew up: a result or a ParseError, in time', async () => {
      const { outcomes, hang } = await inWorker({ kind: 'regressions' });
      assert.equal(hang, undefined, hang);
      assert.equal(outcomes.length, REGRESSIONS.length);
      for (const [k, o] of outcomes.entries()) {
        assert.equal(o.failure, undefined, `${o.label} (was: ${REGRESSIONS[k]![3]}): ${o.failure}`);
        assert.ok(o.ms < 1000, `${o.label}: ${o.ms.toFixed(0)} ms`);
      }
      const kinds = Object.fromEntries(outcomes.map((o) => [o.label, o.kind]));
      assert.equal(kinds['101 nested elements'], 'malformed');
      assert.equal(kinds['a JSON title {"toString": 1}'], 'ok');
      console.log(`# regressions: ${outcomes.map((o) => `${o.label} ${o.kind} ${o.ms.toFixed(0)} ms`).join('; ')}`);
    });

    test('linear rewrites of the patterns replace exactly what the patterns did', () => {
      // The old patterns, as references; random documents from the tokens they trip on.
      const BLOCKS = /<(script|style)\b[\s\S]*?<\/\1\s*>/gi;
      const BREAKS = /<\s*(br|\/p|\/div|\/li|\/h\d|p|li)\b[^>]*>/gi;
      const TAGS = /<\/?[a-z!][^>]*>/gi;
      const DOCTYPE = /<!DOCTYPE[^[>]*(\[[\s\S]*?\])?\s*>/gi;
      const STRAY = /(<!\[CDATA\[[\s\S]*?\]\]>)|&(?!(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});)/g;
      const TOKENS = [
        '<script>',
        '<SCRIPT x>',
        '</script>',
        '</Script >',
        '<style>',
        '</style\n>',
        '<scripts>',
        '<br',
        '<br/>',
        '< p>',
        '</p>',
        '<pre>',
        '<a href="x">',
        '<',
        '>',
        ' ',
        'x',
        '&amp;',
        '&',
        '<!DOCTYPE',
        '<!doctype r',
        ' [',
        '[',
        ']',
        ']>',
        '] >',
        '<!ENTITY a "]">',
        '<![CDATA[',
        ']]>',
        '&b;',
        '&#1;',
      ];
      const rng = mulberry32(SEED);
      for (let n = 0; n < 5000; n++) {
        const s = Array.from({ length: 1 + int(rng, 24) }, () => pick(rng, TOKENS)).join('');
        assert.equal(stripDoctypes(s), s.replace(DOCTYPE, ''), `FUZZ_SEED=${SEED} doctype case ${n}: ${JSON.stringify(s)}`);
        assert.equal(
          escapeStrayAmps(s),
          s.replace(STRAY, (_, cdata: string | undefined) => cdata ?? '&amp;'),
          `FUZZ_SEED=${SEED} stray-& case ${n}: ${JSON.stringify(s)}`,
        );
        const tagsOld = s
          .replace(BLOCKS, ' ')
          .replace(BREAKS, ' ')
          .replace(TAGS, '')
          .replace(/[\s\u00a0]+/g, ' ')
          .trim();
        // htmlToText also decodes entities (and runs twice): compare on entity-free text.
        if (!s.includes('&')) assert.equal(htmlToText(s), htmlToText(tagsOld), `FUZZ_SEED=${SEED} html case ${n}: ${JSON.stringify(s)}`);
      }
    });

    test(`mutations of every corpus document (FUZZ_SEED=${SEED}, FUZZ_ITERATIONS=${ITERATIONS}${ONLY !== undefined ? `, FUZZ_ONLY=${ONLY}` : ''})`, async () => {
      const t0 = performance.now();
      const job: Job = ONLY !== undefined ? { kind: 'fuzz', seed: SEED, iterations: ITERATIONS, only: ONLY } : { kind: 'fuzz', seed: SEED, iterations: ITERATIONS };
      const { outcomes, hang } = await inWorker(job);
      const failures = outcomes.flatMap((o, k) => (o.failure ? [`FUZZ_SEED=${SEED} FUZZ_ONLY=${(ONLY ?? 0) + k}: ${o.label}\n    ${o.failure}`] : []));
      const kinds = new Map<string, number>();
      const messages = new Set<string>();
      for (const o of outcomes) {
        kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
        if (o.message) messages.add(o.message);
      }
      const slowest = outcomes.reduce<Outcome | undefined>((a, o) => (!a || o.ms > a.ms ? o : a), undefined);
      const heaps = outcomes.filter((o) => o.heapGrowth !== undefined).map((o) => o.heapGrowth! / o.bytes);
      const errorCodes = [...kinds.keys()].filter((k) => k !== 'ok' && k !== 'crash');
      console.log(
        `# fuzz: seed ${SEED}, ${outcomes.length} iterations in ${((performance.now() - t0) / 1000).toFixed(1)} s; outcomes ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
          `${errorCodes.length} distinct ParseError codes (${errorCodes.join(', ')}), ${messages.size} distinct messages; ` +
          `max parse ${slowest?.ms.toFixed(0)} ms (${slowest?.bytes} bytes: ${slowest?.label.slice(0, 120)}); ` +
          `max heap growth ${heaps.length ? Math.max(...heaps).toFixed(1) : '-'}× over ${heaps.length} inputs ≥ 1 MB; ${failures.length} failures`,
      );
      if (process.env.FUZZ_VERBOSE) for (const m of [...messages].sort()) console.log(`#   ${m}`);
      assert.equal(hang, undefined, `FUZZ_SEED=${SEED}: ${hang}`);
      assert.equal(outcomes.length, ONLY !== undefined ? 1 : ITERATIONS);
      assert.deepEqual(failures, [], `${failures.length} failures:\n${failures.slice(0, 20).join('\n')}`);
    });

    test('a 50 MB feed: parsed in its budget without a blow-up', async () => {
      const { outcomes, hang } = await inWorker({ kind: 'big' });
      assert.equal(hang, undefined, hang);
      const o = outcomes[0]!;
      console.log(`# ${o.label}: ${o.kind}, ${o.items ?? 0} items, ${o.ms.toFixed(0)} ms, heap +${((o.heapGrowth ?? 0) / MB).toFixed(0)} MB (${((o.heapGrowth ?? 0) / o.bytes).toFixed(1)}×)`);
      assert.equal(o.failure, undefined, `${o.label}: ${o.failure}`);
    });
  });
}
