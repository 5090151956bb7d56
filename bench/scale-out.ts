/**
 * Previews and paid calls over R replicas, through each front, on the cores this machine has
 * (`npm run bench:scale-out`).
 *
 * Replicas run in replica mode on one local redis-server, every wire loaded at its cap from a
 * snapshot, each pinned to a core of its own: cores 0 … R-1, for R = 1, 2, 4, … up to the cores
 * left after the load generator (on two cores, R = 1). The front and the load generator share
 * the other cores. Fronts, for the free preview `/cve/preview?q=vulnerability` (wrk `--latency`):
 *
 *   - shared port: the replicas listen on one port (SHARED_PORT=1, SO_REUSEPORT) and the kernel
 *     spreads the connections; nothing sits between client and replica. R = 1 is one replica
 *     straight from the client, the baseline;
 *   - shared port with TLS: the same, the replicas serving HTTPS themselves (TLS_CERT_FILE, an
 *     ECDSA P-256 certificate made here; wrk keeps its connections, as clients of a paid API do);
 *   - nginx: the shipped wires-proxy.conf with the shipped replicas upstream, one worker per
 *     front core;
 *   - HAProxy (Debian's), the alternative the deployment guide weighs: `mode http` (keep-alive
 *     to the replicas) and `mode tcp` (bytes only: no JSON errors, no header whitelist, no client
 *     address without the PROXY protocol), a thread per front core. Skipped when not installed.
 *
 * Each run reports requests/s, p50/p99 and the CPU time each process spends per request (from
 * /proc/<pid>/stat): all replicas together, and the front. A preview needs nothing shared, so
 * with F front cores previews/s ≈ min(R / replica cost, F / front cost): the CPU per request is
 * what a two-core machine can show of a many-core curve, and the ratio front/replica is the
 * figure the deployment guide quotes.
 *
 * Paid calls: the replicas share one port and settle optimistically through the devnet's
 * facilitator; each request carries a fresh pre-signed authorization (bench/load.ts), so each
 * is a claim in Redis, a journal entry, a hand-over and an outcome. Reported: paid calls/s, and
 * Redis's CPU µs per paid call (its main thread does all the work), from which the paid calls
 * one Redis core can serve follow. Then the payment store alone (bench/redis-capacity.ts): the
 * Redis CPU of a claim at saturation, beside the previous layout's, and of a whole paid call.
 *
 * BENCH_SECONDS (10) per measured run; BENCH_PAID=0 skips the paid calls and the devnet.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WIRES } from '../src/catalog/index.js';
import type { DevnetInfo } from '../src/devnet/devnet.js';
import { startRedis } from '../src/devnet/redis.js';
import { saveIndex } from '../src/ingest/snapshot.js';
import { createIndexes } from '../src/service.js';
import { freePort } from '../test/helpers/loopback.js';
import { DEPLOY, startNginx } from '../test/helpers/nginx.js';
import { encodePayment, signPayment } from '../test/helpers/payments.js';
import { spawnService, type ServiceProcess } from '../test/helpers/spawn-service.js';
import { getBody } from './http-body.js';
import type { LoadResult } from './placement.js';
import { cpuSeconds } from './proc.js';
import type { RedisCapacity } from './redis-capacity.js';
import { syntheticItems } from './synthetic.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PAID = process.env.BENCH_PAID !== '0';
const PATH = '/cve/preview?q=vulnerability';
const CORES = availableParallelism();
if (CORES < 2) throw new Error('bench:scale-out pins the replicas and the client to different cores: it needs two');
/** Replica counts: powers of two up to the cores left after one for the load generator. */
const COUNTS = [1, 2, 4, 8, 16, 32, 64, 128].filter((r) => r <= CORES - 1);
/** The cores after the first R: the front's and the load generator's. */
const rest = (r: number) => `${r}-${CORES - 1}`;
const pin = (pid: number, cores: string) => spawnSync('taskset', ['-a', '-p', '-c', cores, String(pid)], { stdio: 'ignore' });
const cpuUs = (pid: number) => cpuSeconds(pid) * 1e6;

// Every wire at its cap, as a snapshot each replica loads at start.
const template = mkdtempSync(join(tmpdir(), 'wires-scale-out-'));
{
  const now = Date.now();
  for (const [i, w] of WIRES.entries()) {
    const index = createIndexes().get(w.id)!;
    index.add(syntheticItems(w.maxItems, now, i + 1, 50 * 60_000, w.filter.values), now);
    await saveIndex(template, w.id, index);
  }
}
/**
 * The processes this bench starts, killed if it is interrupted, so that none outlives it and
 * disturbs the next run. Those already stopped stay listed: Linux hands out process ids in
 * order up to pid_max, so none is reused within a run.
 */
const started = new Set<number>();
const track = (pid: number | undefined) => pid !== undefined && started.add(pid);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    process.exit(130);
  });
}

const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'wires-scale-out-redis-')), appendfsync: 'everysec' });
const redisPid = redis.pid!;
track(redisPid);
// Redis and the devnet on the last core, which no replica takes.
pin(redisPid, String(CORES - 1));

let devnet: (DevnetInfo & { process: ChildProcess }) | null = null;
if (PAID) {
  const file = join(mkdtempSync(join(tmpdir(), 'wires-scale-out-devnet-')), 'devnet.json');
  const child = spawn('taskset', ['-c', String(CORES - 1), process.execPath, fileURLToPath(new URL('../src/devnet/main.js', import.meta.url))], {
    env: { ...process.env, DEVNET_FILE: file },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  track(child.pid);
  devnet = { ...(JSON.parse(readFileSync(file, 'utf8')) as DevnetInfo), process: child };
}

// A self-signed certificate for the TLS runs.
const certDir = mkdtempSync(join(tmpdir(), 'wires-scale-out-tls-'));
const TLS = { TLS_CERT_FILE: join(certDir, 'tls.crt'), TLS_KEY_FILE: join(certDir, 'tls.key') };
spawnSync(
  'openssl',
  ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', TLS.TLS_KEY_FILE, '-out', TLS.TLS_CERT_FILE],
  {
    stdio: 'ignore',
  },
);

/** A replica's /health status, over HTTPS (its certificate is this bench's own) or HTTP. */
async function healthStatus(port: number, tls: boolean): Promise<string> {
  const body = await getBody({ host: '127.0.0.1', port, path: '/health', rejectUnauthorized: false, agent: false }, tls);
  return (JSON.parse(body) as { status: string }).status;
}

/** R replicas on one port, replica i pinned to core i, every one serving before it returns. */
async function replicas(count: number, tls = false): Promise<{ port: number; set: ServiceProcess[] }> {
  const port = await freePort();
  const set: ServiceProcess[] = [];
  for (let i = 0; i < count; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), `wires-scale-out-r${i}-`));
    cpSync(template, dataDir, { recursive: true });
    const env: Record<string, string> = { DATA_DIR: dataDir, INGEST: '0', REDIS_URL: redis.url, REPLICA_ID: `r${i}`, LOG_LEVEL: 'error', PORT: String(port), SHARED_PORT: '1' };
    if (tls) Object.assign(env, TLS);
    if (devnet) Object.assign(env, { PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl, SETTLEMENT: 'optimistic', OPTIMISTIC_MAX_UNSETTLED_USD: '1000' });
    const r = await spawnService(env);
    track(r.child.pid);
    pin(r.child.pid!, String(i));
    while ((await healthStatus(port, tls)) === 'starting') await new Promise((resolve) => setTimeout(resolve, 100));
    set.push(r);
  }
  return { port, set };
}

interface Run {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  /** CPU µs per request: the replicas together, and the front (null: none). */
  replica_us: number;
  front_us: number | null;
}

/** CPU time of a set of processes, in µs, read before and after a run. */
const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + cpuUs(pid), 0);

async function wrk(url: string, replicaPids: number[], frontPids: number[], r: number): Promise<Run> {
  const before = [cpuOf(replicaPids), cpuOf(frontPids)];
  const threads = Math.max(1, Math.floor((CORES - r) / 2));
  const child = spawn('taskset', ['-c', rest(r), 'wrk', `-t${threads}`, `-c${10 * r}`, `-d${SECONDS}s`, '--latency', url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  await new Promise((resolve) => child.once('close', resolve));
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const ms = (p: string) => {
    const m = new RegExp(`\\s${p}%\\s+([0-9.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * { us: 1e-3, ms: 1, s: 1000 }[m[2] as 'us' | 'ms' | 's'] : Number.NaN;
  };
  return {
    rps: Math.round(Number(/Requests\/sec:\s+([0-9.]+)/.exec(out)?.[1])),
    p50_ms: +ms('50').toFixed(3),
    p99_ms: +ms('99').toFixed(3),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    replica_us: +((cpuOf(replicaPids) - before[0]!) / requests).toFixed(1),
    front_us: frontPids.length ? +((cpuOf(frontPids) - before[1]!) / requests).toFixed(1) : null,
  };
}

/** nginx with the shipped replicas upstream pointed at `port`, a worker per front core. */
async function behindNginx(port: number, r: number) {
  const shipped = /upstream wires \{([\s\S]*?)\n\}/.exec(readFileSync(join(DEPLOY, 'wires-replicas.conf'), 'utf8'))![1]!;
  const upstream = shipped.replace(/(\s*server .*\n?)+/, `\n    server 127.0.0.1:${port} max_fails=2 fail_timeout=5s;\n`);
  const workers = Math.max(1, Math.ceil((CORES - r) / 2));
  const proxy = await startNginx(await freePort(), upstream, workers);
  const master = Number(readFileSync(join(proxy.dir, 'nginx.pid'), 'utf8'));
  const children = spawnSync('pgrep', ['-P', String(master)])
    .stdout.toString()
    .trim()
    .split('\n')
    .map(Number);
  for (const pid of [master, ...children]) {
    pin(pid, rest(r));
    track(pid);
  }
  return { proxy, workers: children };
}

/** HAProxy in front of `port`, a thread per front core; null when it is not installed. */
async function behindHaproxy(port: number, r: number, mode: 'http' | 'tcp') {
  if (spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'wires-scale-out-haproxy-'));
  const listen = await freePort();
  const threads = Math.max(1, Math.ceil((CORES - r) / 2));
  const http = mode === 'http' ? '  option http-keep-alive\n  http-reuse always\n' : '';
  writeFileSync(
    join(dir, 'haproxy.cfg'),
    `global\n  nbthread ${threads}\n  maxconn 4000\ndefaults\n  mode ${mode}\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n${http}` +
      `frontend front\n  bind 127.0.0.1:${listen}\n  default_backend replicas\nbackend replicas\n  server shared 127.0.0.1:${port}\n`,
  );
  const child = spawn('taskset', ['-c', rest(r), 'haproxy', '-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'inherit'] });
  track(child.pid);
  for (;;) {
    if (
      await fetch(`http://127.0.0.1:${listen}/health`).then(
        (res) => res.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${listen}`, pid: child.pid!, stop: () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))) };
}

/** Optimistic paid calls over the shared port, each with a fresh authorization; Redis's CPU per call. */
async function paidCalls(port: number, replicaPids: number[], r: number) {
  const dir = mkdtempSync(join(tmpdir(), 'wires-scale-out-paid-'));
  const payer = devnet!.payers[0]!;
  const calls = 2000 * r;
  const lines: string[] = [];
  for (let i = 0; i < calls + 200; i++) lines.push(encodePayment((await signPayment({ amount: '5000', payTo: devnet!.payTo, privateKey: payer.privateKey })).payload));
  writeFileSync(join(dir, 'warm.txt'), lines.slice(0, 200).join('\n'));
  writeFileSync(join(dir, 'paid.txt'), lines.slice(200).join('\n'));
  const url = `http://127.0.0.1:${port}/cve/latest?q=vulnerability&limit=3`;
  // bench/placement.ts's runLoad pins this process when imported; here every process is placed by core list.
  const load = (file: string) => {
    const child = spawn('taskset', ['-c', rest(r), process.execPath, fileURLToPath(new URL('./load.js', import.meta.url)), url, String(4 * r), String(SECONDS), file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    return new Promise<LoadResult>((resolve, reject) => child.on('exit', () => (out ? resolve(JSON.parse(out)) : reject(new Error('load generator failed')))));
  };
  await load(join(dir, 'warm.txt'));
  const statsBefore = commandStats();
  const before = [cpuUs(redisPid), cpuOf(replicaPids)];
  const started = performance.now();
  const res = await load(join(dir, 'paid.txt'));
  const seconds = (performance.now() - started) / 1000;
  // The settlements that follow (hand-over, outcome) are part of each call's Redis work.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const paid = res.statuses['200'] ?? 0;
  // What Redis spent it on: each command's calls and CPU per paid call.
  for (const [name, [calls, usec]] of commandStats()) {
    const [calls0, usec0] = statsBefore.get(name) ?? [0, 0];
    if (calls > calls0) commands[`${name} (R=${r})`] = { per_paid_call: +((calls - calls0) / Math.max(1, paid)).toFixed(2), us_per_paid_call: +((usec - usec0) / Math.max(1, paid)).toFixed(1) };
  }
  return {
    paid_per_s: Math.round(paid / seconds),
    p50_ms: res.p50,
    p99_ms: res.p99,
    other_statuses: Object.entries(res.statuses)
      .filter(([s]) => s !== '200')
      .map(([s, n]) => `${s}×${n}`)
      .join(' '),
    replica_us: +((cpuOf(replicaPids) - before[1]!) / Math.max(1, paid)).toFixed(1),
    redis_us: +((cpuUs(redisPid) - before[0]!) / Math.max(1, paid)).toFixed(1),
  };
}

/** Redis's INFO commandstats: command → [calls, CPU µs]. */
const commandStats = () =>
  new Map(
    Array.from(spawnSync('redis-cli', ['-u', redis.url, '--no-auth-warning', 'INFO', 'commandstats'], { encoding: 'utf8' }).stdout.matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g), (m) => [
      m[1]!,
      [Number(m[2]), Number(m[3])] as const,
    ]),
  );
const commands: Record<string, { per_paid_call: number; us_per_paid_call: number }> = {};
const previews: Record<string, Run> = {};
const paid: Record<string, unknown> = {};
for (const r of COUNTS) {
  const { port, set } = await replicas(r);
  const pids = set.map((s) => s.child.pid!);
  const url = `http://127.0.0.1:${port}${PATH}`;
  await wrk(url, pids, [], r); // warm-up
  previews[`${r} replica${r > 1 ? 's' : ''}, shared port`] = await wrk(url, pids, [], r);
  const { proxy, workers } = await behindNginx(port, r);
  await wrk(`${proxy.url}${PATH}`, pids, workers, r); // warm-up
  previews[`${r} replica${r > 1 ? 's' : ''}, nginx (${workers.length} worker${workers.length > 1 ? 's' : ''})`] = await wrk(`${proxy.url}${PATH}`, pids, workers, r);
  await proxy.stop();
  for (const mode of ['http', 'tcp'] as const) {
    const haproxy = await behindHaproxy(port, r, mode);
    if (!haproxy) continue;
    await wrk(`${haproxy.url}${PATH}`, pids, [haproxy.pid], r); // warm-up
    previews[`${r} replica${r > 1 ? 's' : ''}, HAProxy mode ${mode}`] = await wrk(`${haproxy.url}${PATH}`, pids, [haproxy.pid], r);
    await haproxy.stop();
  }
  if (devnet) paid[`${r} replica${r > 1 ? 's' : ''}, shared port`] = await paidCalls(port, pids, r);
  await Promise.all(set.map((s) => s.kill()));
  const secure = await replicas(r, true);
  const securePids = secure.set.map((s) => s.child.pid!);
  const secureUrl = `https://127.0.0.1:${secure.port}${PATH}`;
  await wrk(secureUrl, securePids, [], r); // warm-up
  previews[`${r} replica${r > 1 ? 's' : ''}, shared port with TLS`] = await wrk(secureUrl, securePids, [], r);
  await Promise.all(secure.set.map((s) => s.kill()));
}

console.log(`${CORES} cores; replica i on core i, the front and the load generator on cores ${rest(COUNTS.at(-1)!)}; ${SECONDS} s runs after a warm-up`);
console.log('previews (wrk -c10 per replica):');
console.table(previews);
const base = previews['1 replica, shared port']!;
const proxied = Object.entries(previews).find(([k]) => k.startsWith('1 replica, nginx'))![1];
console.log(
  `per preview: a replica ${proxied.replica_us} µs of CPU, nginx ${proxied.front_us} µs (${(proxied.front_us! / proxied.replica_us).toFixed(2)}× the replica); a shared port adds no process (one replica direct: ${base.replica_us} µs)`,
);
const secure = previews['1 replica, shared port with TLS']!;
console.log(
  `TLS on the replica's own port (kept-alive connections): ${secure.replica_us} µs per preview against ${base.replica_us} µs in plain HTTP, ${(secure.replica_us / base.replica_us).toFixed(2)}× (no front process)`,
);
console.log(`on paper, per core: ${Math.round(1e6 / base.replica_us)} previews/s per replica; nginx forwards ${Math.round(1e6 / proxied.front_us!)}/s per worker`);
if (devnet) {
  console.log('optimistic paid calls (bench/load.ts, 4 connections per replica, a fresh authorization each):');
  console.table(paid);
  console.log("Redis's commands per paid call (INFO commandstats over the measured run):");
  console.table(commands);
  const one = paid['1 replica, shared port'] as { redis_us: number };
  console.log(`Redis: ${one.redis_us} µs of its CPU per paid call at this rate (its idle work included; the cost of one more call is measured below)`);
  devnet.process.kill('SIGTERM');
}
// The payment store alone at saturation, from a process of its own on the first core (no replica runs now).
const capacity = JSON.parse(
  spawnSync('taskset', ['-c', '0', process.execPath, fileURLToPath(new URL('./redis-capacity.js', import.meta.url)), redis.url, String(redisPid)], { encoding: 'utf8' }).stdout,
) as RedisCapacity;
console.log(
  "Redis's CPU per claim at saturation (bench/redis-capacity.ts: the store's claim transaction replayed over 8 connections, 32 in flight each), and per whole paid call through the store (32 at a time):",
);
console.table({
  'a claim': { redis_us: capacity.claim_us, per_core_s: capacity.claims_per_core_s, redis_util: capacity.claim_redis_util },
  "the previous layout's claim script": { redis_us: capacity.previous_claim_us, per_core_s: capacity.previous_claims_per_core_s, redis_util: capacity.previous_redis_util },
  'a whole paid call': { redis_us: capacity.paid_call_us, per_core_s: capacity.paid_calls_per_core_s },
});
console.log(
  `one Redis core: about ${capacity.claims_per_core_s} claims/s (target ≥ 50,000: ≤ 20 µs per claim), ${(capacity.claim_us / capacity.previous_claim_us).toFixed(2)}× the previous layout's CPU per claim; ${capacity.paid_calls_per_core_s} whole paid calls/s`,
);
await redis.stop();
