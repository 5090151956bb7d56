/**
 * Does ingestion stall requests? The p99 latency of a preview route measured by a load
 * generator in another process (bench/load.ts), first with no ingestion, then while batches of 50,000 new
 * items (10 feeds × 5,000) are fetched, parsed in the worker pool and swapped into the wire,
 * back to back, in the same run. Target: ingestion raises p99 by less than 2×.
 *
 *   npm run bench:ingest
 *
 * The load generator gets its own core (the service, with its worker threads, is pinned to
 * core 0; the load generator and the feed server to core 1, the feed server at low priority),
 * so the measurement sees the service, not a fight over cores with the client. Absolute
 * numbers are only comparable within one run; the ratio is the result.
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { constants } from 'node:perf_hooks';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { WIRES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import { setLogLevel } from '../src/log.js';
import { startService } from '../src/service.js';

const DURATION_SEC = Number(process.env.BENCH_DURATION_SEC ?? 10);
const CONNECTIONS = 10;
const FEEDS = 10;
const LOAD = fileURLToPath(new URL('./load.js', import.meta.url));

interface Latency {
  p50: number;
  p99: number;
  p999: number;
  requests: number;
  errors: number;
}

/** Pins this process (every thread) to core 0 when there are two cores and taskset exists. */
const pinned = availableParallelism() >= 2 && spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]).status === 0;
/** The command line of a helper process: on core 1 when pinned, optionally niced. */
function helper(args: string[], nice = 0): [string, string[]] {
  if (!pinned) return [process.execPath, args];
  return ['taskset', ['-c', '1', ...(nice ? ['nice', '-n', String(nice)] : []), process.execPath, ...args]];
}

function startFeedServer(): Promise<{ port: number; stop(): void }> {
  const [cmd, args] = helper([fileURLToPath(new URL('./feed-server.js', import.meta.url))], 10);
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      resolve({ port: JSON.parse(line).port, stop: () => child.kill() });
    });
  });
}

function load(url: string): Promise<Latency> {
  return new Promise((resolve, reject) => {
    const [cmd, args] = helper([LOAD, url, String(CONNECTIONS), String(DURATION_SEC)]);
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    child.on('exit', () => {
      try {
        resolve(JSON.parse(out) as Latency);
      } catch (err) {
        reject(err);
      }
    });
  });
}

setLogLevel('error');
const feeds = await startFeedServer();
const dir = mkdtempSync(join(tmpdir(), 'wires-bench-'));
const news = WIRES.find((w) => w.id === 'news')!;
const overrides: Record<string, string> = {};
news.sources.slice(0, FEEDS).forEach((s, i) => (overrides[s.id] = `http://127.0.0.1:${feeds.port}/feed/f${i}`));
// Every other source points at a closed port and fails fast.
for (const w of WIRES) for (const s of w.sources) overrides[s.id] ??= 'http://127.0.0.1:9/closed';
writeFileSync(join(dir, 'sources.json'), JSON.stringify(overrides));

const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: dir,
  WIRES_SOURCES: join(dir, 'sources.json'),
  POLL_INTERVAL_SEC: '3600',
  PAY_TO_ADDRESS: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
});
const service = await startService(config);
await service.scheduler!.firstRun; // the wire starts full (the first 50,000-item batch)
const url = `http://127.0.0.1:${service.port}/news/preview?q=market+rate&category=markets`;

await load(url); // warm-up
const idle = await load(url);

// How long the serving thread itself was blocked, as opposed to waiting for a core.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
// The serving thread's garbage-collection pauses, by kind (scavenge, mark-compact, …).
const gcPauses: { kind: number; ms: number }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ kind: (e as PerformanceEntry & { detail?: { kind: number } }).detail?.kind ?? 0, ms: e.duration });
});
gcObserver.observe({ entryTypes: ['gc'] });
let ingesting = true;
let batches = 0;
const ingestLoop = (async () => {
  while (ingesting) {
    await service.scheduler!.runOnce();
    batches++;
  }
})();
const busy = await load(url);
ingesting = false;
await ingestLoop;
loopDelay.disable();
gcObserver.disconnect();

const itemsPerBatch = FEEDS * Number(process.env.ITEMS ?? 5000);
console.log(pinned ? 'service on core 0; load generator and feed server on core 1' : 'not pinned (needs 2 cores and taskset): all processes share the cores');
console.log(`preview p99 while ingesting vs idle (${CONNECTIONS} connections, ${DURATION_SEC}s each, ${batches} batches of ${itemsPerBatch} items during the busy run)`);
console.table({
  idle: { 'p50 ms': idle.p50, 'p99 ms': idle.p99, 'p99.9 ms': idle.p999, requests: idle.requests, errors: idle.errors },
  ingesting: { 'p50 ms': busy.p50, 'p99 ms': busy.p99, 'p99.9 ms': busy.p999, requests: busy.requests, errors: busy.errors },
});
console.log(`event-loop delay while ingesting: p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms, max ${(loopDelay.max / 1e6).toFixed(2)} ms`);
const GC_KIND: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
const longest = gcPauses.reduce((a, b) => (b.ms > a.ms ? b : a), { kind: 0, ms: 0 });
console.log(
  `GC pauses of the serving thread while ingesting: ${gcPauses.length}, longest ${longest.ms.toFixed(2)} ms (${GC_KIND[longest.kind] ?? longest.kind}), ` +
    `${gcPauses.filter((p) => p.ms > 5).length} over 5 ms (target: none)`,
);
// By kind, so a change can be judged on the pauses it targets.
const byKind = new Map<string, number[]>();
for (const p of gcPauses) {
  const name = GC_KIND[p.kind] ?? String(p.kind);
  byKind.set(name, [...(byKind.get(name) ?? []), p.ms]);
}
console.table(
  Object.fromEntries(
    [...byKind].map(([name, ms]) => [
      name,
      { pauses: ms.length, 'over 5 ms': ms.filter((x) => x > 5).length, 'longest ms': Number(Math.max(...ms).toFixed(2)), 'total ms': Number(ms.reduce((a, b) => a + b, 0).toFixed(1)) },
    ]),
  ),
);
console.log(`p99 ratio ingesting/idle: ${(busy.p99 / Math.max(idle.p99, 0.001)).toFixed(2)}x (target < 2x)`);

await service.stop();
feeds.stop();
