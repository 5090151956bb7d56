/**
 * A flood of forged payments against the previews' latency (`npm run bench:attack`).
 *
 * Every forged payment is well formed and signed, but by a key other than the payer it
 * names, so reading it costs the serving thread a full signature recovery (about 0.1–0.15
 * ms). The attacker sends them from one address over 16 connections, as fast as it can:
 * enough to saturate the serving thread. Meanwhile a second client measures previews. Three
 * phases, same run: idle; under attack with the failed-payment budget on (the default);
 * under attack with it off (FAILED_PAYMENTS_BURST=0). Target: preview p99 under attack
 * within 2× idle with the budget on.
 *
 * The service runs in this process with its serving thread alone on core 0; its other
 * threads, the preview client and the attacker (at nice 19) share core 1 (BENCH_PIN=none: unpinned).
 */
import { moveHelpers, pinned, runLoad, type LoadResult } from './placement.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { setLogLevel } from '../src/log.js';
import type { Service } from '../src/service.js';
import { encodePayment, signPayment } from '../test/helpers/payments.js';
import { startTestService } from '../test/helpers/service.js';

const PREVIEW_CONNECTIONS = 2;
const ATTACK_CONNECTIONS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const FORGED = 300;

/**
 * The preview client sends at a steady pace (each of 2 connections waits out 2 ms from one
 * request's start to the next, about 1,400/s in all with timer rounding) and the attacker as
 * fast as it can at the lowest priority: both share core 1, and an attacker is somebody else's
 * machine, so it must not delay the preview client's own sends and reads. (Back to back at
 * equal priority, the preview p99 measured the client waiting for core 1 behind the attacker.)
 */
const PREVIEW_INTERVAL_MS = Number(process.env.PREVIEW_INTERVAL_MS ?? 2);
const previewLoad = (url: string) => runLoad(url, PREVIEW_CONNECTIONS, SECONDS, [], { intervalMs: PREVIEW_INTERVAL_MS });
const attackLoad = (url: string) => runLoad(url, ATTACK_CONNECTIONS, SECONDS, [forgedFile, 'cycle'], { nice: 19 });

setLogLevel('error');
const dir = mkdtempSync(join(tmpdir(), 'wires-bench-attack-'));

// Forged: signed by a stranger while claiming to come from the payer.
const payer = generatePrivateKey();
const forgedFile = join(dir, 'forged.txt');
const forged: string[] = [];
for (let i = 0; i < FORGED; i++) {
  forged.push(encodePayment((await signPayment({ amount: '5000', privateKey: payer, signer: privateKeyToAccount(generatePrivateKey()) })).payload));
}
writeFileSync(forgedFile, forged.join('\n'));

// The tests' service: seeded wires, payments verified, nothing settles (forged payments never get that far).
const start = (budget: string) => startTestService({ FAILED_PAYMENTS_BURST: budget });

async function phase(service: Service, attack: boolean): Promise<{ preview: LoadResult; attacker?: LoadResult }> {
  const base = `http://127.0.0.1:${service.port}`;
  const previewUrl = `${base}/cve/preview?q=vulnerability`;
  const attacker = attack ? attackLoad(`${base}/cve/latest?q=vulnerability`) : undefined;
  const result = await previewLoad(previewUrl);
  return { preview: result, ...(attacker ? { attacker: await attacker } : {}) };
}

const rows: Record<string, object> = {};
const row = (r: { preview: LoadResult; attacker?: LoadResult }, idleP99: number) => ({
  'preview p50 ms': r.preview.p50,
  'preview p99 ms': r.preview.p99,
  'preview p99.9 ms': r.preview.p999,
  'p99 vs idle': Math.round((r.preview.p99 / idleP99) * 100) / 100,
  'previews/s': Math.round(r.preview.requests / SECONDS),
  'forged/s': r.attacker ? Math.round(r.attacker.requests / SECONDS) : 0,
  'forged answered': r.attacker ? JSON.stringify(r.attacker.statuses) : '',
});

const withBudget = await start(process.env.FAILED_PAYMENTS_BURST ?? '20');
await previewLoad(`http://127.0.0.1:${withBudget.port}/cve/preview?q=vulnerability`); // warm-up
moveHelpers();
const idle = await phase(withBudget, false);
rows.idle = row(idle, idle.preview.p99);
rows['attack, budget on'] = row(await phase(withBudget, true), idle.preview.p99);
await withBudget.stop();

const withoutBudget = await start('0');
moveHelpers();
rows['attack, budget off'] = row(await phase(withoutBudget, true), idle.preview.p99);
await withoutBudget.stop();

console.log(
  `${pinned ? 'serving thread alone on core 0; its other threads, the preview client and the attacker on core 1' : 'not pinned'}; ` +
    `${SECONDS} s per phase; previews paced (${PREVIEW_CONNECTIONS} connections, one request per ${PREVIEW_INTERVAL_MS} ms each); attacker (nice 19): ${ATTACK_CONNECTIONS} connections from one address, ${FORGED} forged payments cycled`,
);
console.table(rows);
console.log(`target: preview p99 under attack (budget on) < 2x idle: ${(rows['attack, budget on'] as { 'p99 vs idle': number })['p99 vs idle']}x`);
