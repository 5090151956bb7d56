/**
 * Seconds behind the source, for each way an item arrives, with the shipped defaults (no
 * POLL_* overrides): what a bot sees between a publisher making an item public and the item
 * reaching it.
 *
 *   - EDGAR: a simulated EDGAR (test/helpers/edgar-sim.ts: getcurrent's format, paging, SEC's
 *     User-Agent rule and 10 requests/s limit) lists filings as a Poisson process of
 *     EDGAR_PER_SEC (default 1, a busy afternoon), then a burst of 300 filings in one minute
 *     (the 16:00–17:30 ET 8-K wave), then the steady rate again;
 *   - WebSub: a news feed (`techcrunch`) whose document names a hub (test/helpers/websub-hub.ts,
 *     the W3C Recommendation's hub side); each new story pings the hub;
 *   - adaptive: a breaking news feed (`yahoo-finance`) publishing a story every ADAPTIVE_MEAN_SEC
 *     on average (default 20, Poisson), answering conditional GETs with 304.
 *
 * Per path: published → visible in a paid query (a bot paying for the route every POLL_MS),
 * and → delivered to a paid stream subscriber, p50 and p99; requests per minute to its host;
 * for EDGAR also the most requests in any one second and the filings missed.
 *
 *   npm run bench:freshness   (this runs after bench/freshness.ts; BENCH_MIN=5 POLL_MS=250)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { SOURCES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { setLogLevel } from '../src/log.js';
import { startService } from '../src/service.js';
import { startEdgarSim, type SimFiling } from '../test/helpers/edgar-sim.js';
import { decodeHeader, encodePayment, signPayment } from '../test/helpers/payments.js';
import { freePort } from '../test/helpers/loopback.js';
import { startPublisher, type Publisher } from '../test/helpers/publisher.js';
import { startWebSubHub } from '../test/helpers/websub-hub.js';
import { refusedUpgrade } from '../test/helpers/ws.js';

const BENCH_MS = Number(process.env.BENCH_MIN ?? 5) * 60_000;
const POLL_MS = Number(process.env.POLL_MS ?? 250);
const EDGAR_PER_SEC = Number(process.env.EDGAR_PER_SEC ?? 1);
const ADAPTIVE_MEAN_SEC = Number(process.env.ADAPTIVE_MEAN_SEC ?? 20);
const WEBSUB_EVERY_MS = 5_000;
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const USER_AGENT = 'Wires Bench bench@example.com';
const exp = (meanMs: number) => -Math.log(1 - Math.random()) * meanMs;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One path's stamps: item key → published, first seen by the paying bot, first pushed to the stream. */
class Stamps {
  readonly published = new Map<string, number>();
  readonly polled = new Map<string, number>();
  readonly pushed = new Map<string, number>();
  see(map: Map<string, number>, key: string): void {
    if (this.published.has(key) && !map.has(key)) map.set(key, Date.now());
  }
  delays(map: Map<string, number>): number[] {
    return [...this.published].map(([k, at]) => (map.get(k) ?? NaN) - at);
  }
}
const pct = (values: number[], p: number) => {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};

const sim = await startEdgarSim();
const hub = await startWebSubHub();
const pushedFeed = await startPublisher({ hub: hub.url });
const adaptiveFeed = await startPublisher();
const port = await freePort();

const dir = mkdtempSync(join(tmpdir(), 'wires-freshness-sources-'));
const overrides: Record<string, string> = Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/closed']));
overrides.edgar = sim.url;
overrides.techcrunch = pushedFeed.url;
overrides['yahoo-finance'] = adaptiveFeed.url;
writeFileSync(join(dir, 'sources.json'), JSON.stringify(overrides));
setLogLevel('error');
sim.publishMany(100);
const service = await startService(
  loadConfig({
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    USER_AGENT,
    DATA_DIR: dir,
    WIRES_SOURCES: join(dir, 'sources.json'),
    PAY_TO_ADDRESS: PAY_TO,
    SETTLEMENT: 'optimistic',
    OPTIMISTIC_MAX_UNSETTLED_USD: '100000',
    FACILITATOR_URL: 'http://127.0.0.1:9',
    FAILED_PAYMENTS_BURST: '0',
  }),
);
const base = `http://127.0.0.1:${port}`;
await service.scheduler!.firstRun;
await hub.waitForSubscription(pushedFeed.url, 30_000);

const paths = { edgar: new Stamps(), websub: new Stamps(), adaptive: new Stamps() };
const accession = (url: string) => /(\d{10}-\d\d-\d{6})-index\.htm/.exec(url)?.[1];
const keyOf = (wire: string, a: { url: string; title: string }) => (wire === 'edgar' ? accession(a.url) : a.title);
const pathOf = (wire: string, title: string) => (wire === 'edgar' ? paths.edgar : title.startsWith('Pushed') ? paths.websub : paths.adaptive);

/** A payment for a stream block: the amount from the upgrade's 402. */
async function payStream(path: string): Promise<string> {
  const offer = await refusedUpgrade(`ws://127.0.0.1:${port}${path}`);
  const amount = decodeHeader(offer.headers['payment-required'] as string).accepts[0].amount as string;
  return encodePayment((await signPayment({ amount })).payload);
}

// Paid streams: one subscriber per wire, subscribed from the URL.
const streams: WebSocket[] = [];
for (const [wire, query] of [
  ['edgar', ''],
  ['news', '&category=tech'],
  ['news', '&category=markets'],
] as const) {
  const path = `/stream?wire=${wire}${query}`;
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers: { 'PAYMENT-SIGNATURE': await payStream(path) } });
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString());
    if (m.type === 'item') {
      const key = keyOf(wire, m.item);
      if (key) pathOf(wire, m.item.title).see(pathOf(wire, m.item.title).pushed, key);
    }
  });
  await new Promise((resolve, reject) => ws.once('message', resolve).once('error', reject));
  // A URL without a filter subscribes to nothing: every form is asked for in a message.
  if (query === '') ws.send(JSON.stringify({ type: 'subscribe', params: {} }));
  streams.push(ws);
}

// The paying bot: one paid query per route every POLL_MS, each with a fresh authorization.
let running = true;
const bot = (async () => {
  const routes = [
    ['edgar', '/edgar/filings?limit=50'],
    ['news', '/headlines?category=tech&limit=50'],
    ['news', '/headlines?category=markets&limit=50'],
  ] as const;
  const amounts = new Map<string, string>();
  for (const [, path] of routes) amounts.set(path, decodeHeader((await fetch(base + path)).headers.get('payment-required')).accepts[0].amount);
  while (running) {
    const started = Date.now();
    await Promise.all(
      routes.map(async ([wire, path]) => {
        const payment = encodePayment((await signPayment({ amount: amounts.get(path)! })).payload);
        const res = await fetch(base + path, { headers: { 'PAYMENT-SIGNATURE': payment } });
        if (res.status !== 200) return void (await res.arrayBuffer());
        for (const a of (await res.json()).articles as { url: string; title: string }[]) {
          const key = keyOf(wire, a);
          if (key) pathOf(wire, a.title).see(pathOf(wire, a.title).polled, key);
        }
      }),
    );
    await sleep(Math.max(0, POLL_MS - (Date.now() - started)));
  }
})();

const record = (f: SimFiling) => paths.edgar.published.set(f.accession, Date.now());
const sold = new Set(Object.values(SOURCES.find((s) => s.id === 'edgar')!.routes!).flat());
const isSold = (form: string) => sold.has(form.replace(/\/A$/, ''));
const publishers = [
  // EDGAR: steady, then 300 filings in one minute, then steady again.
  (async () => {
    const third = (BENCH_MS - 60_000) / 2;
    const steady = async (ms: number) => {
      for (const end = Date.now() + ms; Date.now() < end; await sleep(exp(1000 / EDGAR_PER_SEC))) {
        const f = sim.publish();
        if (isSold(f.form)) record(f);
      }
    };
    await steady(third);
    for (let i = 0; i < 300; i++) {
      const f = sim.publish();
      if (isSold(f.form)) record(f);
      await sleep(200);
    }
    await steady(third);
  })(),
  (async () => {
    for (let i = 0, end = Date.now() + BENCH_MS; Date.now() < end; i++) {
      const title = `Pushed story ${i}`;
      pushedFeed.items.push({ title, at: Date.now() });
      paths.websub.published.set(title, Date.now());
      await hub.publish(pushedFeed.url);
      await sleep(WEBSUB_EVERY_MS);
    }
  })(),
  (async () => {
    for (let i = 0, end = Date.now() + BENCH_MS; Date.now() < end; i++) {
      await sleep(exp(ADAPTIVE_MEAN_SEC * 1000));
      const title = `Adaptive story ${i}`;
      adaptiveFeed.items.push({ title, at: Date.now() });
      paths.adaptive.published.set(title, Date.now());
    }
  })(),
];
const startedAt = Date.now();
await Promise.all(publishers);
await sleep(70_000); // the last items' polls, at the slowest interval
running = false;
await bot;
const minutes = (Date.now() - startedAt) / 60_000;

const perMinute = (times: number[]) => (times.filter((t) => t >= startedAt).length / minutes).toFixed(1);
// The service's polls, not the hub's fetches of the topic.
const polls = (feed: Publisher) => feed.requests.filter((r) => r.userAgent === USER_AGENT).map((r) => r.wall);
const rows: Record<string, object> = {};
const row = (name: string, s: Stamps, requests: string) => {
  const polled = s.delays(s.polled);
  const pushed = s.delays(s.pushed);
  const f = (v: number) => (v / 1000).toFixed(2);
  rows[name] = {
    items: s.published.size,
    'paid query p50 s': f(pct(polled, 50)),
    'paid query p99 s': f(pct(polled, 99)),
    'stream p50 s': f(pct(pushed, 50)),
    'stream p99 s': f(pct(pushed, 99)),
    missed: polled.filter((v) => !Number.isFinite(v)).length,
    'polls/min to its host': requests,
  };
  return { p50: pct(pushed, 50), p99: pct(pushed, 99), missed: polled.filter((v) => !Number.isFinite(v)).length };
};
const edgarRow = row('EDGAR (getcurrent, every 2 s)', paths.edgar, perMinute(sim.requests.map((r) => r.at)));
const pushRow = row('WebSub feed (hub push)', paths.websub, perMinute(polls(pushedFeed)));
const adaptiveRow = row('adaptive breaking feed', paths.adaptive, perMinute(polls(adaptiveFeed)));
console.log(
  `${minutes.toFixed(1)} min; EDGAR ${EDGAR_PER_SEC}/s with a burst of 300 filings in a minute; a pushed story every ${WEBSUB_EVERY_MS / 1000} s; an adaptive story every ${ADAPTIVE_MEAN_SEC} s on average; paid queries every ${POLL_MS} ms`,
);
console.table(rows);
const refused = sim.requests.filter((r) => r.status !== 200).length;
console.log(`EDGAR: at most ${sim.maxPerSecond()} requests in any second (SEC allows 10), ${refused} refused, ${sim.requests.filter((r) => r.start > 0).length} paging requests`);
const check = (ok: boolean, text: string) => console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
check(edgarRow.p50 <= 2000 && edgarRow.p99 <= 5000, 'EDGAR published → stream p50 ≤ 2 s and p99 ≤ 5 s');
check(edgarRow.missed === 0, 'EDGAR: nothing missed in the burst');
check(sim.maxPerSecond() <= 10 && refused === 0, 'EDGAR: never over 10 requests in any second');
check(pushRow.p50 <= 500, 'WebSub published → stream p50 ≤ 500 ms');
check(adaptiveRow.p50 <= 10_000, 'adaptive breaking feed published → stream p50 ≤ 10 s');
for (const ws of streams) ws.terminate();
await service.stop();
await Promise.all([sim.close(), hub.close()]);
await Promise.all([pushedFeed.close(), adaptiveFeed.close()]);
