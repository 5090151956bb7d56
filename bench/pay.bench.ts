/**
 * Payment verification cost (`npm run bench:pay`): a fresh authorization (EIP-712 digest +
 * native ECDSA recovery) against viem's pure-JS `recoverTypedDataAddress` as the baseline,
 * and a repeat of an accepted authorization (the nonce cache: a map lookup and a string
 * comparison), all in the same run. Then what journaling costs the serving thread: writing
 * an accepted record into the journal file (into the page cache, while the sync thread
 * syncs it) against serialising the same record, which any journal needs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { recoverTypedDataAddress } from 'viem';
import { Journal } from '../src/pay/journal.js';
import { LocalStore } from '../src/pay/local-store.js';
import { Payments } from '../src/pay/payments.js';
import type { Settler } from '../src/pay/settler.js';
import { verifyPayment } from '../src/pay/verify.js';
import { offerFor, signPayment, TRANSFER_TYPES, USDC_EIP712_DOMAIN } from '../test/helpers/payments.js';

const offer = offerFor('5000');
const signed = await Promise.all(Array.from({ length: 200 }, () => signPayment({ amount: '5000' })));
const nowSec = () => Math.floor(Date.now() / 1000);

// Settles instantly: this bench measures the service's own work, not a chain.
const instant: Settler = { kind: 'facilitator', check: async () => null, settle: async () => ({ kind: 'settled', tx: '0x' + '1'.repeat(64) }), close: async () => {} };
const store = await LocalStore.open(mkdtempSync(join(tmpdir(), 'wires-bench-pay-')));
const payments = new Payments({ store, settler: instant, mode: 'sync', optimisticMaxUnsettled: 0n, settleTimeoutMs: 1000 });
const body = Buffer.from('{"articles":[]}');
const repeat = { requestKey: '/cve/latest []', requirements: offer, payload: signed[0]!.payload, produce: () => body };
await payments.authorize(repeat);

let i = 0;
const next = () => signed[i++ % signed.length]!.payload;
const bench = new Bench({ time: 2000 });
bench
  .add('baseline: viem recoverTypedDataAddress (pure JS)', async () => {
    const p = next();
    const a = p.payload.authorization;
    await recoverTypedDataAddress({
      domain: USDC_EIP712_DOMAIN,
      types: TRANSFER_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        ...a,
        from: a.from as `0x${string}`,
        to: a.to as `0x${string}`,
        nonce: a.nonce as `0x${string}`,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
      },
      signature: p.payload.signature as `0x${string}`,
    });
  })
  .add('cold: verifyPayment (digest + native recovery)', () => {
    verifyPayment(next(), offer, nowSec());
  })
  .add('cached: repeat of an accepted authorization (nonce hit)', async () => {
    await payments.authorize(repeat);
  });
await bench.run();

const record = {
  t: 'accepted' as const,
  id: 'x',
  at: Date.now(),
  payer: signed[0]!.payload.payload.authorization.from,
  amount: '5000',
  requestKey: repeat.requestKey,
  mode: 'optimistic' as const,
  payload: signed[0]!.payload,
  requirements: offer,
};
const { journal: written } = await Journal.open(mkdtempSync(join(tmpdir(), 'wires-bench-journal-')));
let writes = 0;
const journalBench = new Bench({ time: 2000 });
journalBench
  .add('baseline: JSON.stringify of an accepted record', () => {
    JSON.stringify(record);
  })
  .add('journal write of an accepted record (a sync requested every 4th)', () => {
    written.write(record);
    if (++writes % 4 === 0) void written.sync();
  });
await journalBench.run();
await written.close();

const rows = [...bench.tasks, ...journalBench.tasks].map((t) => {
  const r = (t.result as { latency?: { p50: number; p99: number } }).latency;
  if (!r) throw new Error(`${t.name} did not complete`);
  return { task: t.name, p50_us: +(r.p50 * 1000).toFixed(1), p99_us: +(r.p99 * 1000).toFixed(1) };
});
console.table(rows);
const [base, cold, cached, serialise, write] = rows;
console.log(`cold verification is ${(base!.p50_us / cold!.p50_us).toFixed(1)}x faster than the baseline; a cached repeat ${(cold!.p50_us / cached!.p50_us).toFixed(1)}x faster than cold`);
console.log(`a journal write costs ${(write!.p50_us / serialise!.p50_us).toFixed(1)}x the record's serialisation at p50, ${(write!.p99_us / serialise!.p99_us).toFixed(1)}x at p99`);
await payments.stop();
