/**
 * Preview throughput of 1 and 2 replicas behind nginx, and what each request costs each
 * process (`npm run bench:scale-out`).
 *
 * Replica processes (replica mode, on a local redis-server, every wire loaded from a snapshot
 * at its cap) are pinned to core 0; nginx (one worker, the shipped wires-proxy.conf and
 * wires-replicas.conf upstream) and wrk (`-t1 -c10`) to core 1. Three runs of a free preview:
 * one replica direct, one behind nginx, two behind nginx. On two cores the second replica
 * shares the first one's core, so its throughput cannot show here; what can is the CPU time
 * each process spends per request (from /proc/<pid>/stat), from which the curve follows on
 * paper: with R cores for replicas and N for nginx, previews/s ≈ min(R / replica cost,
 * N / nginx cost), since a preview needs nothing shared.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WIRES } from '../src/catalog/index.js';
import { startRedis } from '../src/devnet/redis.js';
import { saveWire } from '../src/ingest/snapshot.js';
import { createIndexes } from '../src/service.js';
import { freePort } from '../test/helpers/loopback.js';
import { DEPLOY, startNginx } from '../test/helpers/nginx.js';
import { spawnService, type ServiceProcess } from '../test/helpers/spawn-service.js';
import { cpuSeconds } from './proc.js';
import { syntheticItems } from './synthetic.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 10;
const PATH = '/cve/preview?q=vulnerability';

if (availableParallelism() < 2) throw new Error('bench:scale-out pins the replicas and the client to different cores: it needs two');
const pin = (pid: number, core: number) => spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });

// Every wire at its cap, as a snapshot each replica loads at start.
const template = mkdtempSync(join(tmpdir(), 'wires-scale-out-'));
{
  const now = Date.now();
  for (const [i, w] of WIRES.entries()) {
    const index = createIndexes().get(w.id)!;
    index.add(syntheticItems(w.maxItems, now, i + 1, 50 * 60_000, w.filter.values), now);
    await saveWire(template, w.id, index.items());
  }
}
const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'wires-scale-out-redis-')), appendfsync: 'everysec' });
if (redis.pid) pin(redis.pid, 1);

async function replica(id: string): Promise<ServiceProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), `wires-scale-out-${id}-`));
  cpSync(template, dataDir, { recursive: true });
  const r = await spawnService({ DATA_DIR: dataDir, INGEST: '0', REDIS_URL: redis.url, REPLICA_ID: id, LOG_LEVEL: 'error' });
  pin(r.child.pid!, 0);
  for (;;) {
    const h = (await (await fetch(`${r.url}/health`)).json()) as { status: string };
    if (h.status !== 'starting') return r;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** User plus system CPU time of a process and its threads, in µs. */
const cpuUs = (pid: number) => cpuSeconds(pid) * 1e6;

interface Run {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  /** CPU µs per request: each replica together, and nginx's worker. */
  replica_us: number;
  nginx_us: number | null;
}

async function wrk(url: string, replicas: ServiceProcess[], nginxWorker: number | null): Promise<Run> {
  const pids = replicas.map((r) => r.child.pid!);
  const before = pids.map(cpuUs);
  const nginxBefore = nginxWorker ? cpuUs(nginxWorker) : 0;
  const child: ChildProcess = spawn('taskset', ['-c', '1', 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--latency', url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('close', resolve));
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const ms = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([0-9.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * { us: 1e-3, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'] : Number.NaN;
  };
  const replicaUs = pids.reduce((sum, pid, i) => sum + cpuUs(pid) - before[i]!, 0);
  return {
    rps: Number(/Requests\/sec:\s+([0-9.]+)/.exec(out)?.[1]),
    p50_ms: +ms('50').toFixed(3),
    p99_ms: +ms('99').toFixed(3),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    replica_us: +(replicaUs / requests).toFixed(1),
    nginx_us: nginxWorker ? +((cpuUs(nginxWorker) - nginxBefore) / requests).toFixed(1) : null,
  };
}

/** nginx with the shipped replicas upstream moved to `replicas`, its worker on core 1. */
async function behindNginx(replicas: ServiceProcess[]) {
  const shipped = /upstream wires \{([\s\S]*?)\n\}/.exec(readFileSync(join(DEPLOY, 'wires-replicas.conf'), 'utf8'))![1]!;
  const servers = replicas.map((r) => `    server 127.0.0.1:${r.port} max_fails=2 fail_timeout=5s;`).join('\n');
  const upstream = shipped.replace(/(\s*server .*\n?)+/, `\n${servers}\n`);
  const proxy = await startNginx(await freePort(), upstream);
  const master = Number(readFileSync(join(proxy.dir, 'nginx.pid'), 'utf8'));
  const worker = Number(
    spawnSync('pgrep', ['-P', String(master)])
      .stdout.toString()
      .trim()
      .split('\n')[0],
  );
  pin(master, 1);
  pin(worker, 1);
  return { proxy, worker };
}

const [a, b] = [await replica('a'), await replica('b')];
const results: Record<string, Run> = {};
await wrk(`${a.url}${PATH}`, [a], null); // warm-up
results['1 replica, direct'] = await wrk(`${a.url}${PATH}`, [a], null);
for (const set of [[a], [a, b]]) {
  const { proxy, worker } = await behindNginx(set);
  await wrk(`${proxy.url}${PATH}`, set, worker); // warm-up
  results[`${set.length} replica${set.length > 1 ? 's' : ''} behind nginx`] = await wrk(`${proxy.url}${PATH}`, set, worker);
  await proxy.stop();
}
console.table(results);

const one = results['1 replica behind nginx']!;
const perCore = (us: number) => Math.round(1e6 / us);
console.log(`a preview costs a replica ${one.replica_us} µs of CPU and nginx ${one.nginx_us} µs (wrk -c${CONNECTIONS}, ${SECONDS} s runs)`);
console.log(`on paper, one core serves ${perCore(one.replica_us)} previews/s per replica and nginx forwards ${perCore(one.nginx_us!)}/s per worker core:`);
for (const r of [1, 2, 4, 8]) {
  const nginxCores = Math.ceil((r * one.nginx_us!) / one.replica_us);
  console.log(`  ${r} replica core(s) + ${nginxCores} nginx core(s): about ${Math.min(r * perCore(one.replica_us), nginxCores * perCore(one.nginx_us!))} previews/s`);
}
await Promise.all([a.kill(), b.kill()]);
await redis.stop();
