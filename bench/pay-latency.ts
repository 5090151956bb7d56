/**
 * Latency of a paid call in optimistic mode against a free preview of the same wire, same run
 * (`npm run bench:pay-latency`). Every paid request carries a fresh authorization, so each
 * one is verified (ECDSA recovery) and written to the journal, then synced (group commit)
 * and settled in the background through the devnet's facilitator. Target: paid p99 within
 * 1 ms of preview p99.
 *
 * The serving thread runs alone on core 0; everything else shares core 1: the service's other
 * threads (the journal's sync thread, V8's collector and compiler threads), the load generator
 * and the devnet (anvil and the facilitator). That is a serving thread with a core of its
 * own, as on a machine with cores to spare; sharing one core with its helpers, it waits
 * behind them for whole scheduler time slices (BENCH_PIN=shared measures that).
 * BENCH_PIN=none runs everything unpinned. OPTIMISTIC_RELEASE=synced measures the release
 * after the disk sync instead.
 */
import { moveHelpers, onCore1, PIN, pinned, runLoad, type LoadResult } from './placement.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config.js';
import type { DevnetInfo } from '../src/devnet/devnet.js';
import { setLogLevel } from '../src/log.js';
import { createIndexes, startService } from '../src/service.js';
import { encodePayment, signPayment } from '../test/helpers/payments.js';
import { seedAll } from '../test/helpers/sample-items.js';

const CONNECTIONS = 4;
const PAID_CALLS = 3000;
const DURATION_SEC = 8;
const DEVNET = fileURLToPath(new URL('../src/devnet/main.js', import.meta.url));

function load(url: string, paymentsFile?: string): Promise<LoadResult> {
  return runLoad(url, CONNECTIONS, DURATION_SEC, paymentsFile ? [paymentsFile] : []);
}
const row = ({ statuses: _, ...r }: LoadResult) => r;

setLogLevel('error');
const dir = mkdtempSync(join(tmpdir(), 'wires-bench-pay-'));
const devnetFile = join(dir, 'devnet.json');
const [cmd, args] = onCore1([DEVNET]);
const devnetProcess = spawn(cmd, args, { env: { ...process.env, DEVNET_FILE: devnetFile }, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => devnetProcess.stdout!.once('data', resolve));
const devnet = JSON.parse(readFileSync(devnetFile, 'utf8')) as DevnetInfo;

const wires = createIndexes();
const now = Date.now();
for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
const config = loadConfig({
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: dir,
  INGEST: '0',
  PAY_TO_ADDRESS: devnet.payTo,
  FACILITATOR_URL: devnet.facilitatorUrl,
  SETTLEMENT: 'optimistic',
  OPTIMISTIC_RELEASE: process.env.OPTIMISTIC_RELEASE ?? 'written',
  // One payer makes every call: lift the cap so all of them take the optimistic path.
  OPTIMISTIC_MAX_UNSETTLED_USD: '1000',
});
const service = await startService(config, { wires });
const base = `http://127.0.0.1:${service.port}`;

// Pre-signed, as a bot would hold them: signing is the client's cost, not the server's.
const payer = devnet.payers[0]!;
const file = join(dir, 'payments.txt');
const lines: string[] = [];
for (let i = 0; i < PAID_CALLS + 200; i++) {
  lines.push(encodePayment((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })).payload));
}
writeFileSync(file, lines.slice(200).join('\n'));
writeFileSync(join(dir, 'warm.txt'), lines.slice(0, 200).join('\n'));

const preview = `${base}/cve/preview?q=vulnerability`;
const paid = `${base}/cve/latest?q=vulnerability&limit=3`;
await load(preview); // warm-up
await load(paid, join(dir, 'warm.txt'));
moveHelpers(); // every thread exists by now
const free = await load(preview);
const pay = await load(paid, file);
const health = ((await (await fetch(`${base}/health`)).json()) as { x402: { settlement: unknown } }).x402.settlement;

const placement = { serving: 'serving thread alone on core 0; its other threads, load generator and devnet on core 1', shared: 'service (all threads) on core 0; load generator and devnet on core 1' };
console.log(pinned ? placement[PIN as keyof typeof placement] : 'not pinned');
console.table({ preview: row(free), 'paid (optimistic)': row(pay) });
console.log(`server-side: paid p99 - preview p99 = ${(pay.server_p99 - free.server_p99).toFixed(3)} ms (target < 1 ms); p50 difference ${(pay.server_p50 - free.server_p50).toFixed(3)} ms`);
console.log(`at the client: paid p99 - preview p99 = ${(pay.p99 - free.p99).toFixed(3)} ms; p50 difference ${(pay.p50 - free.p50).toFixed(3)} ms`);
console.log('settlement state at the end:', JSON.stringify(health));
await service.stop();
devnetProcess.kill('SIGTERM');
