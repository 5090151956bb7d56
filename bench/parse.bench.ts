/**
 * Ingest throughput (`npm run bench:parse`): parse + normalise (in a worker in production)
 * and index (on the serving thread) of a generated 1,000-item RSS 2.0 feed and a generated
 * 5,000-item USGS GeoJSON feed, in items per second; the steady state of a busy wire (1,000
 * new items into a full 20,000-item wire, each evicting the oldest); then parse time per document of the
 * corpus (fixtures/real/ and fixtures/feeds/): bytes, items, median ms per parse, MB/s and
 * ms per MB, with a total line.
 */
import { readFileSync } from 'node:fs';
import { Bench } from 'tinybench';
import { SOURCES, type SourceDef } from '../src/catalog/index.js';
import { renderFixture } from '../src/ingest/fixture-template.js';
import { parseSource } from '../src/ingest/parse/index.js';
import { WireIndex } from '../src/search/wire-index.js';
import type { Item } from '../src/search/item.js';
import { syntheticItems } from './synthetic.js';

const now = Date.now();
const WORDS = 'market rate cut inflation bank stocks bond yield oil energy crypto chip model earnings growth'.split(' ');
const words = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');

let rss = '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title><link>https://example.com/</link>';
for (let i = 0; i < 1000; i++) {
  rss += `<item><title><![CDATA[${words(i, 9)} ${i}]]></title><link>https://example.com/a/${i}?utm_source=rss</link><guid isPermaLink="false">g-${i}</guid><pubDate>${new Date(now - i * 60_000).toUTCString()}</pubDate><dc:creator>Staff</dc:creator><description>&lt;p&gt;${words(i + 1, 30)} &amp;amp; more&lt;/p&gt;</description></item>`;
}
rss += '</channel></rss>';
const rssBytes = Buffer.from(rss);

const features = Array.from({ length: 5000 }, (_, i) => ({
  type: 'Feature',
  id: `us${i}`,
  properties: {
    mag: 2.5 + (i % 40) / 10,
    place: `${i} km N of ${words(i, 2)}`,
    time: now - i * 30_000,
    url: `https://earthquake.usgs.gov/earthquakes/eventpage/us${i}`,
    title: `M ${2.5 + (i % 40) / 10} - ${i} km N of Somewhere`,
    alert: null,
    tsunami: 0,
    felt: null,
  },
  geometry: { type: 'Point', coordinates: [-150, 61, 10] },
}));
const jsonBytes = Buffer.from(JSON.stringify({ type: 'FeatureCollection', metadata: {}, features }));

const rssSource = SOURCES.find((s) => s.id === 'cnbc-finance')!;
const jsonSource = SOURCES.find((s) => s.id === 'usgs-2.5')!;
const rssItems = parseSource(rssSource, rssBytes, undefined, now).items;
const jsonItems = parseSource(jsonSource, jsonBytes, undefined, now).items;

// A full wire; every batch is newer than the last, so each new item evicts the oldest one.
const HOUR = 3_600_000;
const full = new WireIndex({ maxAgeMs: 1000 * HOUR, maxItems: 20_000 });
full.add(syntheticItems(20_000, now, 1), now);
let batchNo = 0;
let batch: Item[] = [];

const bench = new Bench({ time: 3000, iterations: 5 });
bench
  .add('RSS 1,000 items: parse + normalise', () => void parseSource(rssSource, rssBytes, undefined, now))
  .add('RSS 1,000 items: index into an empty wire', () => new WireIndex({ maxAgeMs: 72 * 3_600_000, maxItems: 20_000 }).add(rssItems, now))
  .add('GeoJSON 5,000 items: parse + normalise', () => void parseSource(jsonSource, jsonBytes, undefined, now))
  .add('GeoJSON 5,000 items: index into an empty wire', () => new WireIndex({ maxAgeMs: 7 * 86_400_000, maxItems: 5_000 }).add(jsonItems, now))
  .add('1,000 new items into a full 20,000-item wire', () => full.add(batch, now), {
    beforeEach: () => void (batch = syntheticItems(1000, now + ++batchNo * HOUR, 100 + batchNo, HOUR)),
  });
await bench.run();

const counts = [1000, 1000, 5000, 5000, 1000];
console.table(
  bench.tasks.map((t, i) => {
    const mean = (t.result as { latency?: { mean: number } }).latency!.mean;
    return { task: t.name, 'ms per feed': Math.round(mean * 10) / 10, 'items/s': Math.round((counts[i]! / mean) * 1000) };
  }),
);

// ---- Parse time per MB over the corpus: every captured document (fixtures/real/) and every
// recorded-format fixture (fixtures/feeds/, rendered, parsed with the first source using it).
const FIXTURES = new URL('../../fixtures/', import.meta.url);
const realIndex = JSON.parse(readFileSync(new URL('real/index.json', FIXTURES), 'utf8')) as { file: string; sourceId: string; contentType: string; finalUrl: string }[];
const feedIndex = JSON.parse(readFileSync(new URL('feeds/index.json', FIXTURES), 'utf8')) as Record<string, string>;
const corpus: { name: string; source: SourceDef; body: Uint8Array; contentType?: string; url?: string }[] = [];
for (const c of realIndex) {
  corpus.push({ name: `real/${c.file}`, source: SOURCES.find((s) => s.id === c.sourceId)!, body: readFileSync(new URL(`real/${c.file}`, FIXTURES)), contentType: c.contentType, url: c.finalUrl });
}
const seenFiles = new Set<string>();
for (const [id, file] of Object.entries(feedIndex)) {
  if (seenFiles.has(file)) continue;
  seenFiles.add(file);
  corpus.push({ name: `feeds/${file}`, source: SOURCES.find((s) => s.id === id)!, body: renderFixture(readFileSync(new URL(`feeds/${file}`, FIXTURES)), now) });
}

/** Median ms of one parse: at least 5 runs and 300 ms of parsing (at most 200 runs), after a warm-up. */
function medianMs(doc: (typeof corpus)[number]): { ms: number; items: number; runs: number } {
  let items = 0;
  for (let w = 0; w < 2; w++) items = parseSource(doc.source, doc.body, doc.contentType, now, doc.url).items.length;
  const times: number[] = [];
  let spent = 0;
  while (times.length < 200 && (times.length < 5 || spent < 300)) {
    const t = performance.now();
    parseSource(doc.source, doc.body, doc.contentType, now, doc.url);
    const ms = performance.now() - t;
    times.push(ms);
    spent += ms;
  }
  times.sort((a, b) => a - b);
  return { ms: times[times.length >> 1]!, items, runs: times.length };
}

const rows: Record<string, string | number>[] = [];
let totalBytes = 0;
let totalMs = 0;
let totalItems = 0;
for (const doc of corpus) {
  const { ms, items, runs } = medianMs(doc);
  const mb = doc.body.length / 1_048_576;
  totalBytes += doc.body.length;
  totalMs += ms;
  totalItems += items;
  rows.push({ document: doc.name, bytes: doc.body.length, items, runs, 'ms per parse': +ms.toFixed(3), 'MB/s': +(mb / (ms / 1000)).toFixed(1), 'ms per MB': +(ms / mb).toFixed(1) });
}
const totalMb = totalBytes / 1_048_576;
rows.push({
  document: `TOTAL (${corpus.length} documents)`,
  bytes: totalBytes,
  items: totalItems,
  runs: '',
  'ms per parse': +totalMs.toFixed(3),
  'MB/s': +(totalMb / (totalMs / 1000)).toFixed(1),
  'ms per MB': +(totalMs / totalMb).toFixed(1),
});
console.log('\nCorpus parse time (median of runs; MB = 2^20 bytes):');
console.table(rows);
