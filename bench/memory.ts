/**
 * Memory at real volume, and the warm restart (`npm run bench:memory`).
 *
 * Two fills, each in a fresh process: every wire at the volume its retention implies at the
 * publication rates below (`real`), then every wire at its item cap (`cap`, the worst case).
 * For each: RSS and heap after a full GC, the snapshot's bytes and write time, and then a
 * restart from that snapshot in another fresh process: the time from its start until it
 * serves the full wires, and its RSS. Items are synthetic with a Zipf vocabulary (10-word
 * titles, 45-word summaries, as real headlines and their summaries run).
 *
 * Targets: under 1 GiB RSS in the worst case; a warm restart serving full wires within 2 s.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { retentionMs, WIRES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { saveIndex, snapshotDir } from '../src/ingest/snapshot.js';
import { setLogLevel } from '../src/log.js';
import type { Item } from '../src/search/item.js';
import { createIndexes, start } from '../src/start.js';
import { getBody } from './http-body.js';
import { rng, vocabulary, zipfPicker } from './synthetic.js';
import { fieldsOf, type FieldDef } from '../src/catalog/index.js';

/**
 * Items a day per wire, all its sources together, and where the figure comes from (counts of
 * the real documents in fixtures/real/ where there is one; the publishers' own volumes else).
 */
const PER_DAY: Record<string, [number, string]> = {
  news: [660, '22 feeds of ~30 items a day (the CNBC, BBC and NPR captures carry 10–52 items over about a day)'],
  edgar: [2100, 'EDGAR filings a day in the 8 forms: Form 4 ~1,500, 8-K ~300, 6-K ~100, 10-Q ~100 averaged over the year, 13F, 10-K, SC 13D, S-1 the rest'],
  cve: [18, 'KEV ~1 a day (1,252 entries over 3 years), Ubuntu USN ~5, MSRC ~5 averaged, Debian DSA ~2, ZDI ~5'],
  reg: [90, 'Federal Register documents a day (the capture: 1,000 in its first two weeks of 2024), all four types'],
  weather: [500, 'NWS extreme/severe/immediate alerts issued a day, averaged over the year'],
  quake: [65, 'USGS: 2.5+ ~50 a day (the 2.5_day capture: 49), 4.5+ ~14 (the capture: 14), significant a few a week'],
  arxiv: [800, 'new cs.AI, cs.LG, cs.CL and cs.CR submissions a weekday'],
  fed: [5, 'Federal Reserve ~2 a day, ECB ~3, FOMC a few a quarter'],
  hn: [160, 'hnrss front page, Show HN and rising churn'],
  status: [12, 'incidents and their updates across 7 status pages'],
  ailab: [5, 'five lab blogs, about one post a day each'],
  security: [40, 'four feeds of ~10 items a day (the BleepingComputer capture: 12 in a day)'],
  court: [25, 'CourtListener opinions of four courts and GovInfo D.C. Circuit'],
  bills: [50, 'GovInfo bill versions while Congress sits, and public laws'],
  enforcement: [6, 'SEC press and litigation releases, FTC press releases'],
  recalls: [4, 'CPSC ~1 a day, FDA ~3'],
  crypto: [90, 'three feeds of ~30 items a day'],
  space: [3, 'NASA releases'],
  sports: [150, 'BBC Sport ~100 a day, ESPN ~50'],
  contracts: [500, 'USAspending contract awards a day across the five queries (far more are awarded; each query pages 100)'],
  jobs: [120, 'Remotive ~20 a day, Remote OK ~30, seven We Work Remotely feeds ~10 each'],
};

const DAY = 86_400_000;
const [mode, arg, dirArg] = process.argv.slice(2);
const mb = (bytes: number) => Math.round(bytes / 1048576);

function volume(scenario: string): Map<string, number> {
  return new Map(WIRES.map((w) => [w.id, scenario === 'cap' ? w.maxItems : Math.min(w.maxItems, Math.round((PER_DAY[w.id]![0] * retentionMs(w)) / DAY))]));
}

function itemsFor(wire: (typeof WIRES)[number], count: number, now: number): Item[] {
  const random = rng(wire.id.length * 7919 + count);
  const pick = zipfPicker(vocabulary(5000, random), random);
  const words = (n: number) => Array.from({ length: n }, pick).join(' ');
  const span = retentionMs(wire) - 60_000;
  return Array.from({ length: count }, (_, i) => ({
    id: `${wire.id}-${i}`,
    title: words(8 + Math.floor(random() * 5)),
    url: `https://example.com/${wire.id}/${i}`,
    source: 'Synthetic',
    filter: wire.filter.values[i % wire.filter.values.length]!,
    published: now - Math.floor(random() * span),
    summary: words(35 + Math.floor(random() * 20)),
    ...dataFor(wire.id, random, words),
  }));
}

let listedCompanies: [number, string, string, string][] | undefined;
/**
 * Listed companies as SEC's map lists them (the real capture the demo and the tests use), read
 * when a fill first asks: a restart is timed from this process's start and must not include it.
 */
const LISTED = () =>
  (listedCompanies ??= (JSON.parse(readFileSync(new URL('../../fixtures/real/sec-company_tickers_exchange-2025-12-14.json', import.meta.url), 'utf8')) as { data: [number, string, string, string][] })
    .data);
/** The 8-K item numbers (Form 8-K's general instructions). */
const ITEMS_8K = [
  '1.01',
  '1.02',
  '1.03',
  '1.04',
  '1.05',
  '2.01',
  '2.02',
  '2.03',
  '2.04',
  '2.05',
  '2.06',
  '3.01',
  '3.02',
  '3.03',
  '4.01',
  '4.02',
  '5.01',
  '5.02',
  '5.03',
  '5.04',
  '5.05',
  '5.06',
  '5.07',
  '5.08',
  '6.01',
  '7.01',
  '8.01',
  '9.01',
];

/**
 * Structured fields as the wire declares them (src/catalog/fields.ts), every one stated: a
 * string of two words (a date where the format says so), a number, a list of two, an object of
 * its declared members. The values the facet index keys on come from their real domains, as
 * real items' do: tickers and CIKs of listed companies from SEC's map (a random word would make
 * every item's tag unique, which no real wire does), 8-K items from the form's list. Real items
 * state fewer fields: this is the worst case.
 */
function dataFor(wire: string, random: () => number, words: (n: number) => string): { data?: Record<string, unknown> } {
  const fields = fieldsOf(wire);
  if (fields.length === 0) return {};
  const companies = LISTED();
  const listed = () => companies[Math.floor(random() * companies.length)]!;
  const special: Record<string, () => unknown> = {
    cik: () => String(listed()[0]).padStart(10, '0'),
    ticker: () => listed()[2],
    tickers: () => [listed()[2], listed()[2]],
    items: () => [ITEMS_8K[Math.floor(random() * ITEMS_8K.length)]!, '9.01'],
  };
  const value = (schema: FieldDef['schema'], name = ''): unknown => {
    if (special[name]) return special[name]();
    if (schema.type === 'string') return schema.format === 'date' ? '2026-11-27' : schema.format === 'date-time' ? '2026-11-27T12:00:00.000Z' : words(2);
    if (schema.type === 'number') return Math.round(random() * 1e6) / 100;
    if (schema.type === 'integer') return Math.floor(random() * 1000);
    if (schema.type === 'boolean') return random() < 0.5;
    if (schema.type === 'object') return Object.fromEntries(Object.entries(schema.properties).map(([k, s]) => [k, value(s as FieldDef['schema'], k)]));
    // A list: two of its items (strings, or objects of string members).
    const items = (schema as { items: FieldDef['schema'] }).items;
    return [value(items), value(items)];
  };
  return { data: Object.fromEntries(fields.map((f) => [f.name, value(f.schema, f.name)])) };
}

const gcNow = () => (globalThis as { gc?: () => void }).gc?.();
const memory = () => {
  gcNow();
  const m = process.memoryUsage();
  return { rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed) };
};

if (mode === 'fill') {
  // A fresh process: fill, measure, write the snapshot.
  const now = Date.now();
  const wires = createIndexes();
  let items = 0;
  for (const [id, count] of volume(arg!)) {
    const wire = WIRES.find((w) => w.id === id)!;
    wires.get(id)!.add(itemsFor(wire, count, now), now);
    items += wires.get(id)!.size;
  }
  const filled = memory();
  const started = performance.now();
  for (const [id, index] of wires) await saveIndex(dirArg!, id, index);
  const writeMs = performance.now() - started;
  const dir = snapshotDir(dirArg!);
  const bytes = readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
  process.stdout.write(JSON.stringify({ items, ...filled, snapshot_mb: mb(bytes), snapshot_write_ms: Math.round(writeMs) }) + '\n');
} else if (mode === 'restart') {
  // A fresh process: start the service on the snapshot as `npm start` does (this script loads
  // no more of it first), and time until it serves full wires.
  setLogLevel('error');
  const service = await start(loadConfig({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dirArg!, INGEST: '0', PAY_TO_ADDRESS: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' }));
  // Not with fetch (see http-body.ts): a client in its own process, as every real one is, does
  // not cost the service the loading of its HTTP library.
  const health = JSON.parse(await getBody(`http://127.0.0.1:${service.port}/health`)) as { wires: Record<string, { items: number }> };
  const serving = performance.now(); // since this process started
  const items = Object.values(health.wires).reduce((s, w) => s + w.items, 0);
  const after = memory();
  await service.stop();
  process.stdout.write(JSON.stringify({ items_served: items, restart_ms: Math.round(serving), restart_rss_mb: after.rss_mb, restart_heap_mb: after.heap_mb }) + '\n');
} else {
  const self = fileURLToPath(import.meta.url);
  const run = (...args: string[]) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', self, ...args], { encoding: 'utf8', maxBuffer: 1 << 20 })) as Record<string, number>;
  const rows: Record<string, Record<string, number>> = {};
  for (const scenario of ['real', 'cap']) {
    const dir = mkdtempSync(join(tmpdir(), 'wires-memory-'));
    rows[scenario === 'cap' ? 'every wire at its cap' : 'real volume'] = { ...run('fill', scenario, dir), ...run('restart', scenario, dir) };
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('items per wire at real volume (per day × retention, capped):');
  console.table(Object.fromEntries([...volume('real')].map(([id, n]) => [id, { 'per day': PER_DAY[id]![0], items: n, basis: PER_DAY[id]![1] }])));
  console.table(rows);
  console.log('targets: RSS < 1024 MB with every wire at its cap; warm restart serving full wires < 2,000 ms');
}
