/**
 * Ingest throughput (`npm run bench:parse`): parse + normalise (in a worker in production)
 * and index (on the serving thread) of a generated 1,000-item RSS 2.0 feed and a generated
 * 5,000-item USGS GeoJSON feed, in items per second.
 */
import { Bench } from 'tinybench';
import { SOURCES } from '../src/catalog/index.js';
import { parseSource } from '../src/ingest/parse/index.js';
import { WireIndex } from '../src/search/wire-index.js';

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
  properties: { mag: 2.5 + (i % 40) / 10, place: `${i} km N of ${words(i, 2)}`, time: now - i * 30_000, url: `https://earthquake.usgs.gov/earthquakes/eventpage/us${i}`, title: `M ${2.5 + (i % 40) / 10} - ${i} km N of Somewhere`, alert: null, tsunami: 0, felt: null },
  geometry: { type: 'Point', coordinates: [-150, 61, 10] },
}));
const jsonBytes = Buffer.from(JSON.stringify({ type: 'FeatureCollection', metadata: {}, features }));

const rssSource = SOURCES.find((s) => s.id === 'cnbc-finance')!;
const jsonSource = SOURCES.find((s) => s.id === 'usgs-2.5')!;
const rssItems = parseSource(rssSource, rssBytes, undefined, now).items;
const jsonItems = parseSource(jsonSource, jsonBytes, undefined, now).items;

const bench = new Bench({ time: 3000, iterations: 5 });
bench
  .add('RSS 1,000 items: parse + normalise', () => void parseSource(rssSource, rssBytes, undefined, now))
  .add('RSS 1,000 items: index into an empty wire', () => new WireIndex({ maxAgeMs: 72 * 3_600_000, maxItems: 20_000 }).add(rssItems, now))
  .add('GeoJSON 5,000 items: parse + normalise', () => void parseSource(jsonSource, jsonBytes, undefined, now))
  .add('GeoJSON 5,000 items: index into an empty wire', () => new WireIndex({ maxAgeMs: 7 * 86_400_000, maxItems: 5_000 }).add(jsonItems, now));
await bench.run();

const counts = [1000, 1000, 5000, 5000];
console.table(
  bench.tasks.map((t, i) => {
    const mean = (t.result as { latency?: { mean: number } }).latency!.mean;
    return { task: t.name, 'ms per feed': Math.round(mean * 10) / 10, 'items/s': Math.round((counts[i]! / mean) * 1000) };
  }),
);
