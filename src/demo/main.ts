/**
 * `npm run demo`: the whole service, offline. A loopback fixture server plays every public
 * source from the recorded-format feeds in `fixtures/feeds/`, and the service polls it exactly
 * as it polls the real sources in live mode. Payments settle on the local devnet (anvil with
 * USDC at the Base address and a real x402 facilitator), whose funded payer keys are written
 * to DEVNET_FILE (default ./devnet.json), so a newcomer can pay without internet. Same
 * environment as `npm start`; set FACILITATOR_URL or SETTLER_PRIVATE_KEY to settle elsewhere.
 * REPLICAS=3 runs three replicas sharing a local redis-server instead of one process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { privateDir } from '../private-files.js';
import { claimDevnetFile, devnetFilePath, writeDevnetFile } from '../devnet/devnet-file.js';
import { join } from 'node:path';
import { startDevnet, type Devnet } from '../devnet/devnet.js';
import { startRedis } from '../devnet/redis.js';
import { loadConfig } from '../config.js';
import { log, setLogLevel } from '../log.js';
import { startService } from '../service.js';
import { startFixtureServer } from './fixture-server.js';

const fixtures = await startFixtureServer();
// SHARED_PORT applies to the replicas (below), not to this process's own reading of the settings.
const base = loadConfig({ ...process.env, SHARED_PORT: '0' });
privateDir(base.dataDir);
const overridesFile = join(base.dataDir, 'demo-sources.json');
writeFileSync(overridesFile, JSON.stringify(fixtures.overrides, null, 2));

let devnet: Devnet | null = null;
const devnetFile = devnetFilePath();
const settlement: Record<string, string> = {};
if (!base.settlement.facilitatorUrl && !base.settlement.settlerKey) {
  claimDevnetFile(devnetFile);
  devnet = await startDevnet();
  writeDevnetFile(devnetFile, devnet.info());
  Object.assign(settlement, { PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl, BASE_RPC_URL: devnet.rpcUrl });
}

const replicas = Number(process.env.REPLICAS ?? 1);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 16) throw new Error(`REPLICAS must be 1 to 16, got "${process.env.REPLICAS}"`);
const env = { ...process.env, ...settlement, WIRES_SOURCES: overridesFile, INGEST: '1' };
// REPLICAS=N: a local redis-server (data in DATA_DIR/redis) and N service processes on
// consecutive ports, sharing it as replicas (docs/replicas.md); with SHARED_PORT=1, all on PORT.
const shared = process.env.SHARED_PORT === '1';
const redisDir = join(base.dataDir, 'redis');
if (replicas > 1) privateDir(redisDir);
const redis = replicas > 1 ? await startRedis({ dir: redisDir }) : null;
const children = redis ? await Promise.all(Array.from({ length: replicas - 1 }, (_, i) => startReplica(i + 2))) : [];
// Each replica has a data dir of its own beside the redis-server's, so their snapshots and the
// item stream share one history: a snapshot of the one-process demo holds items the stream never
// carried, and a leader restored from it would keep them from the other replicas.
const config = loadConfig({ ...env, ...(redis ? { REDIS_URL: redis.url, REPLICA_ID: 'demo-1', DATA_DIR: join(base.dataDir, 'replica-1') } : {}) });
setLogLevel(config.logLevel);
const service = await startService(config);
await service.scheduler!.firstRun;
const url = `http://localhost:${service.port}`;
if (redis)
  log.info('demo replicas', { redis: `redis-server on 127.0.0.1:${redis.port}`, replicas: [service.port, ...children.map((c) => c.port)].map((p) => `http://localhost:${p}`), shared_port: shared });
log.info('demo ready: every source is served from local fixtures', {
  fixtures: fixtures.url,
  try: `curl '${url}/news/preview?q=rate'`,
  ...(devnet ? { devnet: devnetFile, pay: `curl -H "PAYMENT-SIGNATURE: $(node dist/scripts/sign-payment.js ${url}/cve/latest)" ${url}/cve/latest` } : {}),
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    for (const c of children) c.child.kill('SIGTERM');
    await service.stop();
    await Promise.all(children.map((c) => c.exited));
    await redis?.stop();
    await fixtures.close();
    if (devnet) {
      await devnet.stop();
      rmSync(devnetFile, { force: true });
    }
    process.exit(0);
  });
}

/** Replica number `n` of the demo: this program's service as a process of its own, on PORT + n - 1 (or PORT, shared). */
async function startReplica(n: number): Promise<{ child: ChildProcess; port: number; exited: Promise<unknown> }> {
  const port = shared ? base.port : base.port + n - 1;
  const child = spawn(process.execPath, [fileURLToPath(new URL('../main.js', import.meta.url))], {
    env: { ...env, PORT: String(port), DATA_DIR: join(base.dataDir, `replica-${n}`), REDIS_URL: redis!.url, REPLICA_ID: `demo-${n}` },
    stdio: 'inherit',
  });
  return { child, port, exited: new Promise((r) => child.once('exit', r)) };
}
