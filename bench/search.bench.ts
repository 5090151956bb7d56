/**
 * Search and serialisation over a 20,000-item wire (`npm run bench:micro`).
 *
 * Queries are 1–3 terms drawn from the items' own titles, so frequent words occur. The
 * baseline, measured in the same run, is FlexSearch's `Index` with default options answering
 * the same two-term queries by itself; our figures are reported as ratios against it.
 */
import FlexSearch from 'flexsearch';
import { Bench } from 'tinybench';
import { OTHER_ROUTE, RequestStats } from '../src/metrics.js';
import { serializeEnvelope } from '../src/http/envelope.js';
import { WireIndex } from '../src/search/wire-index.js';
import { tokenize } from '../src/search/tokenize.js';
import { FILTERS, rng, syntheticItems } from './synthetic.js';

const N = 20_000;
const now = Date.now();
const items = syntheticItems(N, now, 7);
const index = new WireIndex({ maxAgeMs: 72 * 3_600_000, maxItems: N });
index.add(items, now);

const baseline = new FlexSearch.Index();
items.forEach((item, i) => baseline.add(i, item.title + ' ' + item.summary));

const random = rng(99);
function queries(terms: number, count = 500): string[] {
  return Array.from({ length: count }, () => {
    const words = tokenize(items[Math.floor(random() * N)]!.title);
    const picked: string[] = [];
    for (let i = 0; i < terms; i++) picked.push(words[Math.floor(random() * words.length)]!);
    return picked.join(' ');
  });
}
const q1 = queries(1);
const q2 = queries(2);
const q3 = queries(3);
const since = now - 72 * 3_600_000;
let k = 0;
const next = (qs: string[]) => qs[k++ % qs.length]!;
const tenHits = index.search({ sinceMs: since, limit: 10 }, now);

const bench = new Bench({ time: 3000, warmupTime: 500 });
bench
  .add('baseline: FlexSearch Index defaults, 2 terms', () => void baseline.search(next(q2), { limit: 10 }))
  .add('search, 1 term', () => void index.search({ q: next(q1), sinceMs: since, limit: 10 }, now))
  .add('search, 2 terms', () => void index.search({ q: next(q2), sinceMs: since, limit: 10 }, now))
  .add('search, 3 terms', () => void index.search({ q: next(q3), sinceMs: since, limit: 10 }, now))
  .add('search, 2 terms + filter', () => void index.search({ q: next(q2), filter: FILTERS[k % 6]!, sinceMs: since, limit: 10 }, now))
  .add('newest first + filter (no q)', () => void index.search({ filter: FILTERS[k++ % 6]!, sinceMs: since, limit: 10 }, now))
  .add('serialise envelope, 10 hits', () => void serializeEnvelope('rate cut', '72h', tenHits, now, performance.now(), true));

await bench.run();

const us = (ms: number) => Math.round(ms * 1000 * 10) / 10;
const latency = (i: number) => {
  const r = bench.tasks[i]!.result as { latency?: { p50: number; p99: number; max: number; samplesCount: number } };
  if (!r.latency) throw new Error(`${bench.tasks[i]!.name} did not complete`);
  return r.latency;
};
const baseP50 = latency(0).p50;
console.log(`search over ${N.toLocaleString('en-US')} items; latency in µs (ratio = baseline p50 / task p50)`);
console.table(
  bench.tasks.map((t, i) => {
    const l = latency(i);
    return { task: t.name, 'p50 µs': us(l.p50), 'p99 µs': us(l.p99), 'max µs': us(l.max), samples: l.samplesCount, 'x faster than baseline': Math.round((baseP50 / l.p50) * 10) / 10 };
  }),
);

// What /metrics costs a request: RequestStats.observe plus the clock read that dates it,
// against the preview's own work (newest first with a filter, top 3 serialised), in the
// same run. The share bounds the throughput /metrics costs: a served preview also pays for
// uWS's parsing and writing, which make the whole larger and the share smaller.
const stats = new RequestStats(['/cve/preview', OTHER_ROUTE]);
const loop = (n: number, fn: (i: number) => void) => {
  for (let i = 0; i < n / 10; i++) fn(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn(i);
  return ((performance.now() - t0) * 1e6) / n; // ns per call
};
const threeHits = index.search({ sinceMs: since, limit: 3 }, now);
let sink = 0;
const previewNs = loop(200_000, (i) => {
  const hits = index.search({ filter: FILTERS[i % 6]!, sinceMs: since, limit: 3 }, now);
  sink += serializeEnvelope(null, '72h', hits.length ? hits : threeHits, now, performance.now(), false).length;
});
// The dispatcher reads the clock once per request anyway (took_ms); observe reads it again.
const started = performance.now();
const observeNs = loop(5_000_000, (i) => stats.observe(0, i % 7 === 0 ? 400 : 200, (performance.now() - started) / 1000));
console.log(
  `metrics per request: ${observeNs.toFixed(0)} ns (observe + clock), ${((100 * observeNs) / (observeNs + previewNs)).toFixed(2)} % of a preview's own ` +
    `JavaScript work (${previewNs.toFixed(0)} ns: search + serialise). A served preview also spends uWS and kernel time ` +
    `(about 20-25 µs a request at 40-50k req/s), so its share of throughput is smaller still${sink < 0 ? '' : ''}`,
);
