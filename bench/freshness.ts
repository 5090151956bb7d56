/**
 * How fresh is what a user gets? A local source publishes probe items at known times; the
 * service polls it as it polls a real source (the breaking tier, every POLL_INTERVAL_SEC,
 * conditional GET) and in another process (bench/freshness-clients.ts, core 1) a bot polls
 * the paid route while SUBSCRIBERS paid streams wait for the same items. Reported, p50 and
 * p99 over the probes:
 *
 *   - published → visible in a paid query (the bot polls every POLL_MS);
 *   - published → delivered to a stream subscriber;
 *   - index applied → delivered to the last of SUBSCRIBERS subscribers (targets: < 5 ms);
 *   - the serving thread's own time to match and publish one item to all of them;
 *   - the baseline: a bare uWS app in this process publishing messages of the same size to as
 *     many raw sockets of the same client process (publish → first and last arrival);
 *   - preview p99 while the probes fan out against idle (target: < 2×).
 *
 *   npm run bench:freshness        (PROBES=40, SUBSCRIBERS=1000, POLL_MS=20)
 *
 * Every stamp is the monotonic clock (process.hrtime), shared by the processes of a machine.
 */
import { PIN, moveHelpers, onCore1, runLoad } from './placement.js';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SOURCES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { setLogLevel } from '../src/log.js';
import { startService } from '../src/service.js';
import { loadUws } from '../src/http/uws.js';
import { articleJson } from '../src/http/envelope.js';

const PROBES = Number(process.env.PROBES ?? 40);
const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 1000);
const POLL_MS = Number(process.env.POLL_MS ?? 20);
const PUBLISH_EVERY_MS = 400;
/** The baseline's probes are numbered from here, apart from the service's. */
const BARE_FROM = 100_000;
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const PROBE_SOURCE = 'cnbc-finance'; // news, filter markets, breaking tier
const now = () => Number(process.hrtime.bigint()) / 1e6;

// The probe source: an RSS document of the newest probes, with an ETag, as a feed serves it.
const published: { title: string; at: number; date: string }[] = [];
const feed = createServer((req, res) => {
  const etag = `"${published.length}"`;
  if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { ETag: etag }).end();
  const items = published
    .slice(-20)
    .map(
      (p) =>
        `<item><title>${p.title}</title><link>https://example.com/probe/${encodeURIComponent(p.title)}</link><guid>${p.title}</guid><pubDate>${p.date}</pubDate><description>A probe.</description></item>`,
    )
    .join('');
  res
    .writeHead(200, { 'Content-Type': 'application/rss+xml', ETag: etag })
    .end(`<?xml version="1.0"?><rss version="2.0"><channel><title>probe</title><link>https://example.com/</link>${items}</channel></rss>`);
});
await new Promise<void>((r) => feed.listen(0, '127.0.0.1', r));
const dir = mkdtempSync(join(tmpdir(), 'wires-freshness-'));
const overrides = Object.fromEntries(SOURCES.map((s) => [s.id, s.id === PROBE_SOURCE ? `http://127.0.0.1:${(feed.address() as AddressInfo).port}/probe` : 'http://127.0.0.1:9/closed']));
writeFileSync(join(dir, 'sources.json'), JSON.stringify(overrides));

setLogLevel('error');
const service = await startService(
  loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dir,
    WIRES_SOURCES: join(dir, 'sources.json'),
    POLL_INTERVAL_SEC: '1',
    PAY_TO_ADDRESS: PAY_TO,
    SETTLEMENT: 'optimistic',
    OPTIMISTIC_MAX_UNSETTLED_USD: '1000',
    FACILITATOR_URL: 'http://127.0.0.1:9',
  }),
);
moveHelpers();

// When the index applies each probe, and how long the serving thread spends publishing it.
const applied = new Map<string, number>();
const publishMs: number[] = [];
const news = service.wires.get('news')!;
const hubListener = news.onStored!;
news.onStored = (item, terms, update, slot) => {
  const t0 = now();
  if (item.title.startsWith('Freshness probe') && !applied.has(item.title)) applied.set(item.title, t0);
  hubListener(item, terms, update, slot);
  if (item.title.startsWith('Freshness probe')) publishMs.push(now() - t0);
};

// The baseline: uWS alone, publishing to every socket subscribed to one topic.
const { uws } = loadUws();
const bare = uws.App().ws('/raw', { idleTimeout: 0, open: (ws) => void ws.subscribe('probe') });
const barePort = await new Promise<number>((resolve, reject) =>
  bare.listen('127.0.0.1', 0, (socket) => (socket ? resolve(uws.us_socket_local_port(socket)) : reject(new Error('bare uWS did not listen')))),
);

/**
 * The subscribers other than subscriber 0 are read by bench/fanout-client.c (epoll, one
 * thread), compiled here, unless FANOUT_CLIENT=node or there is no C compiler: Node sockets
 * cost the client about 10 µs per socket event, which "delivered to all" would measure.
 */
function fanoutClient(): string | undefined {
  if (process.env.FANOUT_CLIENT === 'node') return undefined;
  const binary = join(dir, 'fanout-client');
  const source = fileURLToPath(new URL('../../bench/fanout-client.c', import.meta.url));
  if (spawnSync('cc', ['-O2', '-o', binary, source], { stdio: 'inherit' }).status === 0) return binary;
  console.warn('warning: no C compiler (cc): the subscribers are Node sockets, and "delivered to all" includes their cost');
  return undefined;
}
const fanout = fanoutClient();
const [cmd, args] = onCore1([fileURLToPath(new URL('./freshness-clients.js', import.meta.url)), String(service.port), String(SUBSCRIBERS), String(POLL_MS), String(barePort)]);
const clients = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, PAY_TO, FANOUT_CLIENT: fanout ?? '' } });
const lines = createInterface({ input: clients.stdout! })[Symbol.asyncIterator]();
const opening = now();
await lines.next(); // ready
console.log(`${SUBSCRIBERS} paid streams subscribed in ${((now() - opening) / 1000).toFixed(1)} s`);

const preview = `http://127.0.0.1:${service.port}/news/preview?q=rate&category=markets`;
const publish = async (from: number, count: number) => {
  for (let i = from; i < from + count; i++) {
    published.push({ title: `Freshness probe ${i}`, at: now(), date: new Date().toUTCString() });
    await new Promise((r) => setTimeout(r, PUBLISH_EVERY_MS));
  }
};
// Phase 1: the latencies, with nothing else asking (the preview load would share core 1 with
// the subscribers and time itself into their arrivals).
await publish(0, PROBES);
await new Promise((r) => setTimeout(r, 2500)); // the last probe's poll
// The baseline, with the message the service pushed for a probe (same size, another number).
const pushed = `{"type":"item","sub":"news?category=markets&q=freshness%20probe","update":false,"item":${articleJson(news.get('markets', 'Freshness probe 0')!, Date.now(), true, 1)}}`;
const bareAt = new Map<string, number>();
for (let i = 0; i < PROBES; i++) {
  const title = `Freshness probe ${BARE_FROM + i}`;
  const message = pushed.replace('Freshness probe 0"', `${title}"`);
  bareAt.set(title, now());
  bare.publish('probe', message);
  await new Promise((r) => setTimeout(r, PUBLISH_EVERY_MS));
}
// Phase 2: preview latency idle, then while as many probes fan out.
const seconds = Math.ceil((PROBES * PUBLISH_EVERY_MS) / 1000);
await runLoad(preview, 1, 2); // warm-up
const idle = await runLoad(preview, 1, seconds);
const busyRun = runLoad(preview, 1, seconds);
await publish(PROBES, PROBES);
const busy = await busyRun;
await new Promise((r) => setTimeout(r, 2500));
clients.stdin!.write('done\n');
const seen = JSON.parse((await lines.next()).value as string) as Record<string, [number, number, number, number, number]>;

const pct = (values: number[], p: number) => {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const rows: Record<string, { 'p50 ms': string; 'p99 ms': string; probes: number }> = {};
const row = (name: string, values: number[]) => {
  const v = values.filter(Number.isFinite);
  rows[name] = { 'p50 ms': pct(v, 50).toFixed(2), 'p99 ms': pct(v, 99).toFixed(2), probes: v.length };
};
const pubAt = new Map(published.map((p) => [p.title, p.at]));
const probes = [...pubAt.keys()].slice(0, PROBES);
row(
  'published → visible in a paid query',
  probes.map((t) => (seen[t]?.[0] ?? NaN) - pubAt.get(t)!),
);
row(
  'published → index applied',
  probes.map((t) => (applied.get(t) ?? NaN) - pubAt.get(t)!),
);
row(
  'published → delivered to a subscriber',
  probes.map((t) => (seen[t]?.[1] ?? NaN) - pubAt.get(t)!),
);
row(
  `applied → first arrival of ${SUBSCRIBERS}`,
  probes.map((t) => (seen[t]?.[4] ?? NaN) - (applied.get(t) ?? NaN)),
);
row(
  `applied → delivered to all ${SUBSCRIBERS}`,
  probes.map((t) => (seen[t]?.[2] ?? NaN) - (applied.get(t) ?? NaN)),
);
row(
  'applied → subscriber 0 (the ws client)',
  probes.map((t) => (seen[t]?.[1] ?? NaN) - (applied.get(t) ?? NaN)),
);
row('serving thread: match + publish one item', publishMs.slice(0, PROBES));
const bare1 = [...bareAt.keys()];
row(
  `bare uWS: publish → first arrival of ${SUBSCRIBERS}`,
  bare1.map((t) => (seen[t]?.[4] ?? NaN) - bareAt.get(t)!),
);
row(
  `bare uWS: publish → delivered to all ${SUBSCRIBERS}`,
  bare1.map((t) => (seen[t]?.[2] ?? NaN) - bareAt.get(t)!),
);
const reached = [...pubAt.keys()].map((t) => seen[t]?.[3] ?? 0);

console.log(`pinning: ${PIN}; ${PROBES} probes published every ${PUBLISH_EVERY_MS} ms, polled every 1 s (breaking tier), paid query every ${POLL_MS} ms`);
console.log(`subscribers 1…${SUBSCRIBERS - 1} and the baseline's read by ${fanout ? 'the C client (epoll)' : 'Node sockets'}`);
console.table(rows);
console.log(`subscribers reached per probe: min ${Math.min(...reached)}, max ${Math.max(...reached)} (of ${SUBSCRIBERS})`);
console.log(`preview latency (1 connection, core 1), idle and while ${PROBES} more probes fan out:`);
console.table({
  idle: { 'p50 ms': idle.p50, 'p99 ms': idle.p99, 'p99.9 ms': idle.p999, requests: idle.requests },
  'during fan-out': { 'p50 ms': busy.p50, 'p99 ms': busy.p99, 'p99.9 ms': busy.p999, requests: busy.requests },
});
console.log(`preview p99 during fan-out / idle: ${(busy.p99 / idle.p99).toFixed(2)}× (target < 2×)`);
clients.kill();
await service.stop();
(bare as unknown as { close(): void }).close();
feed.close();
