/**
 * Replica mode against one process, same machine, same run (`npm run bench:cluster`):
 *
 * 1. A paid call (optimistic mode, a fresh authorization each) on a service whose payment
 *    store is local (the journal file, released once written) and on ones whose store is
 *    Redis (redis-server on loopback, the shipped redis.conf): with `appendfsync everysec`,
 *    the same "written" level, and as shipped, `always`, the "synced" level (an fsync per
 *    claim). Target: Redis adds at most 0.3 ms at p50 at the same level. Beside it, the claim
 *    alone: the Redis store's claim from the serving core with no load running, which is the
 *    floor a paid call in replica mode pays (one script, one round trip).
 * 2. Takeover: a replica holding unsettled payments is killed; how long until another has
 *    settled them, with REDIS_TAKEOVER_SEC=5.
 * 3. Ingest: the leader applying an item → a follower applying it (p50, p99); then the leader
 *    killed → the first poll by the new leader, with the default lease.
 *
 * Placement as bench:pay-latency: the serving thread alone on core 0; its helpers, the load
 * generator, the devnet and redis-server on core 1.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCES } from '../src/catalog/index.js';
import { loadConfig } from '../src/config.js';
import type { DevnetInfo } from '../src/devnet/devnet.js';
import { startRedis } from '../src/devnet/redis.js';
import { setLogLevel } from '../src/log.js';
import { ChainReader } from '../src/pay/chain.js';
import { createIndexes, startService } from '../src/service.js';
import { RedisStore } from '../src/pay/redis-store.js';
import { claimOf, encodePayment, signPayment } from '../test/helpers/payments.js';
import { startPublisher } from '../test/helpers/publisher.js';
import { seedAll } from '../test/helpers/sample-items.js';
import { spawnService } from '../test/helpers/spawn-service.js';
import { moveHelpers, onCore1, runLoad, type LoadResult } from './placement.js';

const CONNECTIONS = 4;
const PAID_CALLS = 3000;
const DURATION_SEC = 8;
const DEVNET = fileURLToPath(new URL('../src/devnet/main.js', import.meta.url));
const row = ({ statuses: _, ...r }: LoadResult) => r;
const CLAIMS_ALONE = 2000;

setLogLevel('error');
const dir = mkdtempSync(join(tmpdir(), 'wires-bench-cluster-'));
const devnetFile = join(dir, 'devnet.json');
const [cmd, args] = onCore1([DEVNET]);
const devnetProcess = spawn(cmd, args, { env: { ...process.env, DEVNET_FILE: devnetFile }, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => devnetProcess.stdout!.once('data', resolve));
const devnet = JSON.parse(readFileSync(devnetFile, 'utf8')) as DevnetInfo;
// As shipped (fsync before every answer: the "synced" level), and with `appendfsync everysec`
// (the "written" level, which is what the local store gives by default).
const redis = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'wires-bench-redis-')) });
const written = await startRedis({ dir: mkdtempSync(join(tmpdir(), 'wires-bench-redis-')), appendfsync: 'everysec' });
for (const r of [redis, written]) if (r.pid) spawn('taskset', ['-a', '-p', '-c', '1', String(r.pid)], { stdio: 'ignore' });
// BENCH_REDIS_NICE (e.g. -10, as root): Redis ahead of the load generator and the chain on its core, as on a box where it has one of its own.
if (process.env.BENCH_REDIS_NICE) for (const r of [redis, written]) if (r.pid) spawn('renice', ['-n', process.env.BENCH_REDIS_NICE, '-p', String(r.pid)], { stdio: 'ignore' });

const common = {
  HOST: '127.0.0.1',
  PORT: '0',
  INGEST: '0',
  PAY_TO_ADDRESS: devnet.payTo,
  FACILITATOR_URL: devnet.facilitatorUrl,
  SETTLEMENT: 'optimistic',
  OPTIMISTIC_MAX_UNSETTLED_USD: '1000',
};
const wires = createIndexes();
const now = Date.now();
for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
const single = await startService(loadConfig({ ...common, DATA_DIR: join(dir, 'single') }), { wires });
const synced = await startService(loadConfig({ ...common, DATA_DIR: join(dir, 'synced'), REDIS_URL: redis.url, REPLICA_ID: 'bench' }), { wires });
const replica = await startService(loadConfig({ ...common, DATA_DIR: join(dir, 'replica'), REDIS_URL: written.url, REPLICA_ID: 'bench' }), { wires });
for (const s of [synced, replica]) while (!(await (await fetch(`http://127.0.0.1:${s.port}/health`)).json()).replica.store_available) await new Promise((r) => setTimeout(r, 50));

// Pre-signed, as a bot would hold them. One set per service (an authorization pays once).
const payer = devnet.payers[0]!;
const sign = async (n: number) => {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(encodePayment((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })).payload));
  return lines;
};
const files: Record<string, string> = {};
for (const name of ['warm-single', 'warm-replica', 'warm-synced', 'single', 'replica', 'synced']) {
  files[name] = join(dir, `${name}.txt`);
  writeFileSync(files[name], (await sign(name.startsWith('warm') ? 200 : PAID_CALLS)).join('\n'));
}
const paidUrl = (port: number) => `http://127.0.0.1:${port}/cve/latest?q=vulnerability&limit=3`;
const load = (port: number, file: string) => runLoad(paidUrl(port), CONNECTIONS, DURATION_SEC, [file]);
await load(single.port, files['warm-single']!);
await load(replica.port, files['warm-replica']!);
await load(synced.port, files['warm-synced']!);
moveHelpers();
const alone = await claimAlone(written.url);
const local = await load(single.port, files.single!);
const shared = await load(replica.port, files.replica!);
const fsynced = await load(synced.port, files.synced!);
console.table({ 'paid, local store (written)': row(local), 'paid, Redis everysec (written)': row(shared), 'paid, Redis always (synced)': row(fsynced) });
const diff = (r: LoadResult) =>
  `server-side p50 +${(r.server_p50 - local.server_p50).toFixed(3)} ms, p99 +${(r.server_p99 - local.server_p99).toFixed(3)} ms; at the client p50 +${(r.p50 - local.p50).toFixed(3)} ms`;
console.log(`Redis store at the same level (written), over the local store: ${diff(shared)} (target at most 0.3 ms at p50)`);
console.log(`Redis store as shipped (synced: an fsync per claim), over the local store: ${diff(fsynced)}`);
console.log(`the claim alone (everysec, no load, ${CLAIMS_ALONE} claims one after another): p50 ${alone.p50.toFixed(3)} ms, p99 ${alone.p99.toFixed(3)} ms`);
await Promise.all([single.stop(), replica.stop(), synced.stop()]);
await written.stop();

// Takeover: five payments accepted by a replica that cannot settle them, then SIGKILL.
const chain = new ChainReader(devnet.rpcUrl, 10_000);
const replicaEnv = (id: string, facilitator: string) => ({
  ...common,
  FACILITATOR_URL: facilitator,
  DATA_DIR: join(dir, id),
  REDIS_URL: redis.url,
  // Its own keys: the pending settlements the paid-call runs left behind are not in its way.
  REDIS_PREFIX: 'wires:takeover:',
  REPLICA_ID: id,
  REDIS_TAKEOVER_SEC: '5',
});
const survivor = await spawnService(replicaEnv('survivor', devnet.facilitatorUrl));
const doomed = await spawnService(replicaEnv('doomed', 'http://127.0.0.1:9'));
const takeoverPayer = devnet.payers[1]!;
for (let i = 0; i < 5; i++) {
  const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: takeoverPayer.privateKey });
  await fetch(paidUrl(doomed.port), { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
}
const before = await chain.balanceOf(takeoverPayer.address);
await doomed.kill('SIGKILL');
const killedAt = performance.now();
while ((await chain.balanceOf(takeoverPayer.address)) > before - 25_000n) await new Promise((r) => setTimeout(r, 50));
console.log(`takeover: killed → all 5 settled by another replica in ${((performance.now() - killedAt) / 1000).toFixed(2)} s (REDIS_TAKEOVER_SEC=5: idle for 5 s, found within a further 5/3 s)`);
await survivor.kill();

// Ingest: a leader polling a feed with a new story at every poll, a follower applying what it
// publishes; then the leader killed, with the default lease.
const publisher = await startPublisher({ newOnEveryRequest: true });
const sourcesFile = join(dir, 'sources.json');
writeFileSync(sourcesFile, JSON.stringify(Object.fromEntries(SOURCES.map((s) => [s.id, s.id === 'yahoo-finance' ? publisher.url : `http://127.0.0.1:9/${s.id}`]))));
const ingestEnv = (id: string) => ({
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: join(dir, `ingest-${id}`),
  WIRES_SOURCES: sourcesFile,
  POLL_FLOOR_SEC: '1',
  USER_AGENT: `WiresBench/${id} ops@wires.invalid`,
  REDIS_URL: redis.url,
  REDIS_PREFIX: 'wires:ingest:',
  REPLICA_ID: id,
});
const health = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/health`)).json()).replica;
const leader = await spawnService(ingestEnv('leader'));
while ((await health(leader.port)).role !== 'leader') await new Promise((r) => setTimeout(r, 50));
const follower = await spawnService(ingestEnv('follower'));
await new Promise((r) => setTimeout(r, 20_000));
const lag = await health(follower.port);
console.log(`leader applies an item → the follower applies it: p50 ${lag.apply_lag_ms.p50} ms, p99 ${lag.apply_lag_ms.p99} ms over ${lag.applied} stream entries (one per poll, every second)`);
await leader.kill('SIGKILL');
const killed = performance.now();
const polledBy = (ua: string) => publisher.requests.some((r) => r.at > killed && r.userAgent?.includes(ua));
while (!polledBy('WiresBench/follower')) await new Promise((r) => setTimeout(r, 20));
console.log(`failover: leader killed → first poll by the new leader in ${((performance.now() - killed) / 1000).toFixed(2)} s (REDIS_LEASE_SEC=10: target under the lease plus one poll)`);
await follower.kill();
await publisher.close();
await redis.stop();
devnetProcess.kill('SIGTERM');

/** The Redis store's claim, one after another from this thread, with nothing else running. */
async function claimAlone(url: string): Promise<{ p50: number; p99: number }> {
  const store = await RedisStore.open({ url, prefix: 'wires:alone:', consumer: 'bench-alone' });
  while (!store.available) await new Promise((r) => setTimeout(r, 50));
  const claims = [];
  for (let i = 0; i < CLAIMS_ALONE; i++) claims.push(claimOf((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })).payload, { limit: 10n ** 12n }));
  const ms: number[] = [];
  for (const c of claims) {
    const t0 = performance.now();
    await store.claim(c);
    ms.push(performance.now() - t0);
  }
  await store.close();
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(ms.length / 2)]!, p99: ms[Math.floor(ms.length * 0.99)]! };
}
