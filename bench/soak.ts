/**
 * A long run under mixed load (`npm run bench:soak`; SOAK_MIN, default 30).
 *
 * The service runs as its own process (`node dist/src/main.js`, on core 0 when the machine
 * has two, on jemalloc as deploy/wires.service runs it; SOAK_ALLOCATOR=glibc for the C
 * library's malloc) on the local devnet in optimistic mode, its sources served from loopback:
 * the demo's recorded feeds, except every RSS source, which a churning feed server answers with
 * new stories on each poll. Every wire starts at its cap (a snapshot of synthetic items from
 * the last 50 minutes), so each new story evicts the oldest from the start. The journal is
 * compacted every MiB (JOURNAL_ROTATE_MB=1). Meanwhile, from this process:
 * - previews at SOAK_PREVIEWS_PER_SEC (100), over every wire, with and without search terms;
 * - optimistic paid calls at 2/s, from 20 payers, with the client package's WiresClient;
 * - failed payments at SOAK_FAILED_PER_SEC (100), each from a new client address (X-Real-IP
 *   from loopback, as nginx sends it): the failed-payment budget's table at its bound;
 * - streams: an unpaid upgrade every 2 s that subscribes and then drops, and a paid stream
 *   every 30 s that follows the news for 20 s;
 * - MCP tool calls at 5/s;
 * - snapshots every minute, and a warm restart half way (SIGTERM, then a new process on the
 *   same DATA_DIR).
 *
 * Every 10 s it samples the service: RSS and open file descriptors from /proc, heap, external
 * memory, event-loop delay p99, open connections and every client-grown table from /metrics,
 * and the bytes in DATA_DIR. It prints the slopes after SOAK_WARMUP_MIN in each process's half
 * (6: the authorization validity plus 60 s, the time the payment tables take to fill; see
 * TABLES_FULL_MIN), and writes bench/results/soak-<date>.svg (a chart per measure) and .json
 * (the samples).
 *
 * Targets after warm-up: RSS and heap slopes under 1 MB per 10 minutes, file descriptors
 * flat, event-loop p99 steady, no errors, and no lost payment: every paid answer is settled,
 * the journal counts them, and the payee's balance moved by exactly what the clients paid.
 *
 * What a leak would move is memory that survives a full collection, so the slopes are fitted
 * to readings taken once a minute right after one: the soak starts the service with its
 * inspector on a loopback port, asks it for a full garbage collection in the main thread and
 * in every worker thread (HeapProfiler.collectGarbage, a pause of about 0.4 s), reads the
 * heap in use at once, and RSS 2 s later, once V8 has returned the freed pages. Readings
 * between collections swing by about 100 MB every two minutes (V8's old generation fills with
 * garbage, then a collection releases it): ten minutes of such a sawtooth fit to anything
 * within ±30 MB per 10 minutes, whatever the trend. The fit to every raw reading is printed
 * too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { PREVIEW_ROUTES, SOURCES, WIRES } from '../src/catalog/index.js';
import { WiresClient } from '../src/client/client.js';
import { Wallet } from '../src/client/sign.js';
import { startFixtureServer } from '../src/demo/fixture-server.js';
import { startDevnet } from '../src/devnet/devnet.js';
import { saveIndex } from '../src/ingest/snapshot.js';
import { ChainReader } from '../src/pay/chain.js';
import { createIndexes } from '../src/service.js';
import { freePort, mulberry32 } from '../test/helpers/loopback.js';
import { connectInspector, type Inspector } from './inspector.js';
import { rssOf } from './proc.js';
import { syntheticItems } from './synthetic.js';

const MINUTES = Number(process.env.SOAK_MIN ?? 30);
/** How long a signed authorization stays valid (the service's default). */
const PAYMENT_TIMEOUT_SEC = 300;
/**
 * The payment tables fill for this long after a start: each paid answer is kept for its
 * payer's retries until the authorization expires plus 60 s, so only then do as many leave
 * as arrive. A fit that starts earlier measures them filling, not a leak.
 */
const TABLES_FULL_MIN = (PAYMENT_TIMEOUT_SEC + 60) / 60;
const WARMUP_MIN = Number(process.env.SOAK_WARMUP_MIN ?? Math.min(Math.max(5, TABLES_FULL_MIN), MINUTES / 6));
const SAMPLE_SEC = 10;
/** Every this many samples, a reading after a full collection. */
const GC_EVERY_SAMPLES = 6;
const GC_SETTLE_MS = 2000;
const PREVIEWS_PER_SEC = Number(process.env.SOAK_PREVIEWS_PER_SEC ?? 100);
const FAILED_PER_SEC = Number(process.env.SOAK_FAILED_PER_SEC ?? 100);
const PAYERS = 20;
/** The service's allocator: jemalloc, preloaded as deploy/wires.service does, or glibc's malloc (SOAK_ALLOCATOR=glibc). */
const ALLOCATOR = process.env.SOAK_ALLOCATOR ?? 'jemalloc';
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const WORDS = 'rate cut inflation bank market oil chip earnings merger tariff court vote storm quake launch model bitcoin bond yield jobs'.split(' ');

const random = mulberry32(2811);
const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
const errors = new Map<string, number>();
const error = (what: string) => errors.set(what, (errors.get(what) ?? 0) + 1);

// --- The world: a churning feed server for every RSS source, the recorded feeds for the rest.
const churn = new Map<string, number>();
const feeds = createServer((req, res) => {
  const source = decodeURIComponent(/^\/churn\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '');
  const n = (churn.get(source) ?? 0) + 1;
  churn.set(source, n);
  const now = Date.now();
  const items = Array.from({ length: 20 }, (_, i) => {
    const id = `${source}-${n}-${i}`;
    const title = `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} story ${id}`;
    return `<item><title>${title}</title><link>https://example.com/${id}</link><guid>${id}</guid><pubDate>${new Date(now - i * 1000).toUTCString()}</pubDate><description>${title}, ${pick(WORDS)} and ${pick(WORDS)} in detail.</description></item>`;
  });
  res
    .writeHead(200, { 'Content-Type': 'application/rss+xml' })
    .end(`<?xml version="1.0"?><rss version="2.0"><channel><title>${source}</title><link>https://example.com/</link>${items.join('')}</channel></rss>`);
});
await new Promise<void>((r) => feeds.listen(0, '127.0.0.1', r));
const feedsUrl = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}`;
const fixtures = await startFixtureServer();
const overrides: Record<string, string> = { ...fixtures.overrides };
const churned = SOURCES.filter((s) => s.format === 'rss');
for (const s of churned) overrides[s.id] = `${feedsUrl}/churn/${encodeURIComponent(s.id)}`;

const devnet = await startDevnet({ payers: PAYERS, fundUsd: 10_000 });
const chain = new ChainReader(devnet.rpcUrl, 10_000);
const payeeAtStart = await chain.balanceOf(devnet.payTo);
const dataDir = mkdtempSync(join(tmpdir(), 'wires-soak-'));
// Every wire at its cap from the start: the wires churn, they do not fill.
{
  const now = Date.now();
  for (const [i, w] of WIRES.entries()) {
    const index = createIndexes().get(w.id)!;
    index.add(syntheticItems(w.maxItems, now, i + 1, 50 * 60_000, w.filter.values), now);
    await saveIndex(join(dataDir, 'data'), w.id, index);
  }
}
const overridesFile = join(dataDir, 'sources.json');
writeFileSync(overridesFile, JSON.stringify(overrides));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env = {
  PATH: process.env.PATH,
  // The allocator's own tuning (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_…), when the run sets it.
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('MALLOC_'))),
  ...(ALLOCATOR === 'jemalloc' ? { LD_PRELOAD: 'libjemalloc.so.2' } : {}),
  PORT: String(port),
  HOST: '127.0.0.1',
  DATA_DIR: join(dataDir, 'data'),
  WIRES_SOURCES: overridesFile,
  PAY_TO_ADDRESS: devnet.payTo,
  FACILITATOR_URL: devnet.facilitatorUrl,
  BASE_RPC_URL: devnet.rpcUrl,
  SETTLEMENT: 'optimistic',
  OPTIMISTIC_MAX_UNSETTLED_USD: '1',
  PAYMENT_TIMEOUT_SEC: String(PAYMENT_TIMEOUT_SEC),
  SNAPSHOT_INTERVAL_SEC: '60',
  JOURNAL_ROTATE_MB: '1',
  POLL_FLOOR_SEC: '2',
  POLL_INTERVAL_SEC: '10',
  WEBSUB: '0',
  LOG_LEVEL: 'info',
};

// --- The service, on core 0 when there are two.
let child: ChildProcess;
let inspector: Inspector;
let logBytes = 0;
async function startServiceProcess(): Promise<number> {
  const t0 = performance.now();
  const inspectPort = await freePort();
  const node = [process.execPath, `--inspect=127.0.0.1:${inspectPort}`, MAIN];
  const [file, ...args] = availableParallelism() >= 2 ? ['taskset', '-c', '0', ...node] : node;
  child = spawn(file!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  // The inspector's own lines are not the service's log.
  child.stderr!.on('data', (c: Buffer) => {
    if (!/Debugger listening|Debugger attached|For help, see|Waiting for the debugger/.test(String(c))) logBytes += c.length;
  });
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = performance.now() - t0;
  const { server } = (await (await fetch(`${base}/health`)).json()) as { server: { allocator: string } };
  if (server.allocator !== ALLOCATOR) throw new Error(`the service runs on ${server.allocator}, not ${ALLOCATOR} (is libjemalloc2 installed? scripts/install-system-deps.sh)`);
  inspector = await connectInspector(inspectPort);
  return ms;
}
const stopServiceProcess = () =>
  new Promise<void>((resolve) => {
    inspector.close();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
await startServiceProcess();

// --- The loads. Each runs on its own pace; `paused` holds them during the restart.
let paused = false;
let stopped = false;
const counts = { previews: 0, paid: 0, failed: 0, mcp: 0, streams: 0, paidStreams: 0 };
function every(ms: number, fn: () => Promise<void>): void {
  const tick = () => {
    if (stopped) return;
    if (!paused) fn().catch((err) => error(`${fn.name || 'load'}: ${(err as Error).message}`));
    setTimeout(tick, ms);
  };
  setTimeout(tick, ms * random());
}

const previewPaths = PREVIEW_ROUTES.map((r) => r.path);
every(1000 / PREVIEWS_PER_SEC, async function preview() {
  const path = pick(previewPaths);
  const route = PREVIEW_ROUTES.find((r) => r.path === path)!;
  const q = route.def.q === 'text' && (route.def.qRequired || random() < 0.5) ? `?q=${pick(WORDS)}` : '';
  const res = await fetch(`${base}${path}${q}`);
  await res.arrayBuffer();
  if (res.status !== 200) error(`preview ${res.status}`);
  counts.previews++;
});

const clients = devnet.payers.map((p) => new WiresClient({ url: base, privateKey: p.privateKey, maxSpendUsd: 1e6 }));
let next = 0;
every(500, async function paid() {
  const client = clients[next++ % clients.length]!;
  const wire = pick(['cve', 'news', 'edgar', 'quake'] as const);
  // /news needs q; the others take it or not.
  const r = await client.wire(wire, (wire === 'news' || random() < 0.5 ? { q: pick(WORDS) } : {}) as never);
  if (!r.paidUsd) error('paid call answered unpaid');
  counts.paid++;
});

// A well-formed payment whose signature does not match its payer: a full verification, refused.
const offer = (await (await fetch(`${base}/.well-known/x402`)).json()) as { routes: { path: string; accepts: Record<string, unknown>[] }[] };
const cveOffer = offer.routes.find((r) => r.path === '/cve/latest')!.accepts[0]!;
const stranger = new Wallet(`0x${randomBytes(32).toString('hex')}`);
let address = 0;
every(1000 / FAILED_PER_SEC, async function failedPayment() {
  const authorization = {
    from: devnet.payers[0]!.address,
    to: devnet.payTo,
    value: String(cveOffer.amount),
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + 120),
    nonce: `0x${randomBytes(32).toString('hex')}`,
  };
  const extra = cveOffer.extra as { name: string; version: string };
  const signature = stranger.signTransfer({ name: extra.name, version: extra.version, chainId: 8453, verifyingContract: String(cveOffer.asset) }, authorization);
  const header = Buffer.from(JSON.stringify({ x402Version: 2, accepted: cveOffer, payload: { signature, authorization } })).toString('base64');
  const n = ++address;
  const res = await fetch(`${base}/cve/latest`, { headers: { 'PAYMENT-SIGNATURE': header, 'X-Real-IP': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } });
  await res.arrayBuffer();
  if (res.status !== 402 && res.status !== 429) error(`failed payment ${res.status}`);
  counts.failed++;
});

every(2000, async function unpaidStream() {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/stream?wire=news&category=markets&q=${pick(WORDS)}`);
  await new Promise<void>((resolve) => {
    ws.on('message', () => ws.close());
    ws.on('error', () => resolve());
    ws.on('close', () => resolve());
    setTimeout(() => ws.terminate(), 3000);
  });
  counts.streams++;
});

every(30_000, async function paidStream() {
  const stream = pick(clients).stream('news', { q: pick(WORDS) });
  await stream.ready;
  await new Promise((r) => setTimeout(r, 20_000));
  stream.close();
  counts.paidStreams++;
});

let rpc = 0;
every(200, async function mcp() {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpc, method: 'tools/call', params: { name: pick(['news_preview', 'cve_preview', 'edgar_preview']), arguments: { q: pick(WORDS), limit: 3 } } }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean } };
  if (res.status !== 200 || body.result?.isError) error(`mcp ${res.status}`);
  counts.mcp++;
});

// --- Sampling.
interface Sample {
  t: number;
  segment: number;
  rss: number;
  heap: number;
  /** Heap in use after the last full collection (wires_heap_live_bytes). */
  live: number;
  /** After a full collection the soak asked for, once a minute (NaN otherwise): RSS, and the heap in use in every thread. */
  rssGc: number;
  heapGc: number;
  external: number;
  fds: number;
  connections: number;
  eldP99: number;
  dataBytes: number;
  tables: Record<string, number>;
}
const samples: Sample[] = [];
let segment = 0;
const t0 = Date.now();
const mb = (n: number) => n / 1048576;

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) total += e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return total;
}

/**
 * The heap in use right after a full collection of every isolate (the main thread's and each
 * worker's: the parser worker's alone swings by 35 MB between its own collections), and RSS
 * once V8 has returned the pages it freed.
 */
async function afterFullCollection(): Promise<{ rss: number; heap: number }> {
  await Promise.all([inspector.call('HeapProfiler.collectGarbage'), inspector.callWorkers('HeapProfiler.collectGarbage')]);
  const usage = await Promise.all([inspector.call<HeapUsage>('Runtime.getHeapUsage'), inspector.callWorkers<HeapUsage>('Runtime.getHeapUsage')]);
  await new Promise((r) => setTimeout(r, GC_SETTLE_MS));
  return { rss: rssOf(child.pid!), heap: [usage[0], ...usage[1]].reduce((sum, u) => sum + u.usedSize, 0) };
}
type HeapUsage = { usedSize: number };

async function sample(collect: boolean): Promise<void> {
  const pid = child.pid!;
  const text = await (await fetch(`${base}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const tables: Record<string, number> = {};
  for (const m of text.matchAll(/^wires_table_entries\{table="([^"]+)"\} (\S+)$/gm)) tables[m[1]!] = Number(m[2]);
  const s: Sample = {
    t: (Date.now() - t0) / 60_000,
    segment,
    rss: rssOf(pid),
    heap: metric('nodejs_heap_size_used_bytes'),
    live: metric('wires_heap_live_bytes'),
    rssGc: Number.NaN,
    heapGc: Number.NaN,
    external: metric('nodejs_external_memory_bytes'),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    connections: metric('wires_connections_open'),
    eldP99: metric('nodejs_eventloop_lag_p99_seconds') * 1000,
    dataBytes: dirBytes(env.DATA_DIR),
    tables,
  };
  samples.push(s);
  if (collect) ({ rss: s.rssGc, heap: s.heapGc } = await afterFullCollection());
}

const end = t0 + MINUTES * 60_000;
const restartAt = t0 + (MINUTES * 60_000) / 2;
let restartMs = 0;
let sampled = 0;
while (Date.now() < end) {
  await new Promise((r) => setTimeout(r, SAMPLE_SEC * 1000));
  if (!restartMs && Date.now() >= restartAt) {
    paused = true;
    await new Promise((r) => setTimeout(r, 3000)); // in-flight calls finish
    await stopServiceProcess();
    segment = 1;
    restartMs = await startServiceProcess();
    paused = false;
    continue;
  }
  await sample(++sampled % GC_EVERY_SAMPLES === 0).catch((err) => error(`sample: ${(err as Error).message}`));
  const s = samples.at(-1);
  const gc = s && Number.isFinite(s.rssGc) ? ` (after a full GC: RSS ${mb(s.rssGc).toFixed(1)} MB, heap ${mb(s.heapGc).toFixed(1)} MB)` : '';
  if (s) process.stderr.write(`${s.t.toFixed(1)} min: RSS ${mb(s.rss).toFixed(1)} MB, heap ${mb(s.heap).toFixed(1)} MB${gc}, fds ${s.fds}, eld p99 ${s.eldP99.toFixed(1)} ms\n`);
}
stopped = true;
await new Promise((r) => setTimeout(r, 25_000)); // the last paid stream ends

// --- Payments: every paid answer settled, counted, and on chain.
const paidUsd = clients.reduce((sum, c) => sum + c.spentUsd, 0);
let settlement = { pending: -1, settled: 0 };
for (let i = 0; i < 120 && settlement.pending !== 0; i++) {
  settlement = ((await (await fetch(`${base}/health`)).json()) as { x402: { settlement: typeof settlement } }).x402.settlement;
  if (settlement.pending) await new Promise((r) => setTimeout(r, 1000));
}
const received = Number((await chain.balanceOf(devnet.payTo)) - payeeAtStart) / 1e6;

// --- Slopes over each process's samples after its warm-up: the median of the slopes between
// every two readings (Theil-Sen). One reading that catches a transient, such as the buffers
// of a snapshot being written, moves a least-squares line over ten readings by several MB
// per 10 minutes; it does not move the median.
function slope(points: { x: number; y: number }[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) if (points[j]!.x !== points[i]!.x) slopes.push((points[j]!.y - points[i]!.y) / (points[j]!.x - points[i]!.x));
  }
  if (!slopes.length) return Number.NaN;
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 ? slopes[mid]! : (slopes[mid - 1]! + slopes[mid]!) / 2;
}
/** One process's samples from `warmup` minutes after its start. */
function after(seg: number, warmup: number): Sample[] {
  const start = seg === 0 ? 0 : MINUTES / 2;
  return samples.filter((s) => s.segment === seg && s.t >= start + warmup);
}
/** A measure's slope in MB per 10 minutes over those samples. */
function per10From(seg: number, warmup: number, f: (s: Sample) => number): number {
  const points = after(seg, warmup).filter((s) => Number.isFinite(f(s)));
  return +(slope(points.map((s) => ({ x: s.t, y: mb(f(s)) }))) * 10).toFixed(2);
}
const segments = [0, 1].map((seg) => {
  const kept = after(seg, WARMUP_MIN);
  const per10 = (f: (s: Sample) => number) => per10From(seg, WARMUP_MIN, f);
  const range = (f: (s: Sample) => number) => {
    const values = kept.map(f).filter(Number.isFinite);
    return [Math.min(...values), Math.max(...values)];
  };
  return {
    minutes: kept.length ? +(kept.at(-1)!.t - kept[0]!.t).toFixed(1) : 0,
    rss_after_gc_mb_per_10min: per10((s) => s.rssGc),
    heap_after_gc_mb_per_10min: per10((s) => s.heapGc),
    // The same from 5 minutes, with the payment tables still filling for the first of them.
    from_5min: { rss_after_gc_mb_per_10min: per10From(seg, 5, (s) => s.rssGc), heap_after_gc_mb_per_10min: per10From(seg, 5, (s) => s.heapGc) },
    rss_after_gc_mb: range((s) => +mb(s.rssGc).toFixed(1)),
    heap_after_gc_mb: range((s) => +mb(s.heapGc).toFixed(1)),
    rss_mb_per_10min: per10((s) => s.rss),
    heap_mb_per_10min: per10((s) => s.heap),
    rss_mb: range((s) => +mb(s.rss).toFixed(1)),
    live_heap_mb_per_10min: per10((s) => s.live),
    external_mb_per_10min: per10((s) => s.external),
    fds: range((s) => s.fds),
    /** Descriptors besides the clients' connections: the service's own (journal, snapshots, polls, workers). */
    own_fds: range((s) => s.fds - s.connections),
    connections: range((s) => s.connections),
    eld_p99_ms: range((s) => +s.eldP99.toFixed(1)),
    data_dir_mb: range((s) => +mb(s.dataBytes).toFixed(2)),
  };
});
const result = {
  minutes: MINUTES,
  warmup_min: WARMUP_MIN,
  allocator: ALLOCATOR,
  load: { ...counts, churned_sources: churned.length },
  restart_ms: Math.round(restartMs),
  log_bytes_per_hour: Math.round((logBytes / MINUTES) * 60),
  segments,
  tables_at_end: samples.at(-1)?.tables,
  payments: { paid_usd: +paidUsd.toFixed(6), received_usd: received, settled: settlement.settled, pending: settlement.pending, agree: Math.abs(received - paidUsd) < 1e-9 && settlement.pending === 0 },
  errors: Object.fromEntries(errors),
};
console.log(JSON.stringify(result, null, 2));

// --- The chart: one panel per measure, both processes on one time axis.
function chart(): string {
  const W = 560;
  const H = 150;
  const panels: [string, (s: Sample) => number][] = [
    ['RSS after a full GC, once a minute (MB)', (s) => mb(s.rssGc)],
    ['heap used after a full GC, every thread, once a minute (MB)', (s) => mb(s.heapGc)],
    ['RSS, every 10 s (MB)', (s) => mb(s.rss)],
    ['heap used, every 10 s (MB)', (s) => mb(s.heap)],
    ['external (MB)', (s) => mb(s.external)],
    ['open connections', (s) => s.connections],
    ['open file descriptors', (s) => s.fds],
    ['event-loop delay p99 (ms)', (s) => s.eldP99],
    ['DATA_DIR (MB)', (s) => mb(s.dataBytes)],
    ['failed-payment clients (thousands)', (s) => (s.tables.failed_payment_clients ?? 0) / 1000],
    ['payment entries', (s) => s.tables.payment_entries ?? 0],
    ['preview answers kept', (s) => s.tables.preview_answers ?? 0],
  ];
  // The last sample lands a little after the run's end.
  const span = Math.max(MINUTES, ...samples.map((s) => s.t));
  const parts: string[] = [];
  panels.forEach(([title, f], i) => {
    const x0 = (i % 2) * (W + 40) + 50;
    const y0 = Math.floor(i / 2) * (H + 50) + 40;
    const values = samples.map(f).filter(Number.isFinite);
    const lo = Math.min(0, ...values);
    const hi = Math.max(...values, lo + 1e-9) * 1.1;
    const x = (t: number) => x0 + (t / span) * W;
    const y = (v: number) => y0 + H - ((v - lo) / (hi - lo)) * H;
    parts.push(`<text x="${x0}" y="${y0 - 8}" font-weight="bold">${title}</text>`);
    parts.push(`<rect x="${x0}" y="${y0}" width="${W}" height="${H}" fill="none" stroke="#bbb"/>`);
    parts.push(`<text x="${x0 - 6}" y="${y0 + 10}" text-anchor="end">${hi.toFixed(hi < 10 ? 1 : 0)}</text><text x="${x0 - 6}" y="${y0 + H}" text-anchor="end">${lo.toFixed(0)}</text>`);
    parts.push(`<text x="${x0}" y="${y0 + H + 16}">0</text><text x="${x0 + W}" y="${y0 + H + 16}" text-anchor="end">${span.toFixed(1)} min</text>`);
    parts.push(`<line x1="${x(MINUTES / 2)}" y1="${y0}" x2="${x(MINUTES / 2)}" y2="${y0 + H}" stroke="#d33" stroke-dasharray="4 3"/>`);
    for (const seg of [0, 1]) {
      const pts = samples.filter((s) => s.segment === seg && Number.isFinite(f(s))).map((s) => `${x(s.t).toFixed(1)},${y(f(s)).toFixed(1)}`);
      if (pts.length) parts.push(`<polyline fill="none" stroke="#1f5fbf" stroke-width="1.5" points="${pts.join(' ')}"/>`);
    }
  });
  const height = Math.ceil(panels.length / 2) * (H + 50) + 30;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * (W + 40) + 40}" height="${height}" font-family="sans-serif" font-size="12" role="img"><title>bench:soak over ${MINUTES} minutes: memory, file descriptors, event-loop delay, data dir and tables</title><rect width="100%" height="100%" fill="white"/>${parts.join('')}<text x="50" y="${height - 8}">bench:soak, ${MINUTES} min; the dashed line is the warm restart.</text></svg>`;
}
mkdirSync(RESULTS, { recursive: true });
const stamp = new Date(t0).toISOString().slice(0, 16).replace(/[:T]/g, '-');
writeFileSync(join(RESULTS, `soak-${stamp}.svg`), chart());
writeFileSync(join(RESULTS, `soak-${stamp}.json`), JSON.stringify({ result, samples }, null, 1));
console.error(`chart: bench/results/soak-${stamp}.svg`);

await stopServiceProcess();
await devnet.stop();
await fixtures.close();
feeds.close();
// Descriptors are judged without the clients' connections, which follow the load generator's
// pool (it opens more while the service pauses for a collection, and keeps them a while).
const ok = segments.every((s) => s.rss_after_gc_mb_per_10min < 1 && s.heap_after_gc_mb_per_10min < 1 && s.own_fds[1]! - s.own_fds[0]! <= 16) && errors.size === 0 && result.payments.agree;
console.error(ok ? 'soak: every target met' : 'soak: a target was missed (see above)');
process.exit(0);
