/**
 * How many paid calls one Redis core can take: the replicas' payment store (RedisStore, the
 * code a replica runs) driven at saturation from this process, on a core of its own, with a
 * real signed payment's record. A replica behind HTTP cannot load Redis that far on a small
 * machine, and Redis's CPU per call at a low rate is mostly its idle work (timers, fsync, the
 * replicas' heartbeats) spread over few calls: this is the cost of one more call.
 *
 * Two runs of `count` calls each, `concurrency` at a time: the claim alone (what a paid call
 * waits for), and a whole optimistic paid call as the payment core makes it (the claim, the
 * answer shared for retries on other replicas, the hand-over to the settler, the transaction
 * noted, the outcome).
 *
 * Run it in a process of its own (`node dist/bench/redis-capacity.js <redis url> <redis pid>`,
 * JSON on stdout), as bench:scale-out does: from a process busy with anything else, calls
 * reach Redis in smaller batches, and Redis's cost per call is that of a lighter load.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { RedisStore } from '../src/pay/redis-store.js';
import { claimOf, signPayment } from '../test/helpers/payments.js';
import { until } from '../test/helpers/until.js';
import { cpuSeconds } from './proc.js';

export interface RedisCapacity {
  /** Redis CPU µs per claim, and the claims per second one Redis core could take at that cost. */
  claim_us: number;
  claims_per_core_s: number;
  /** Redis CPU µs per whole paid call. */
  paid_call_us: number;
  paid_calls_per_core_s: number;
}

export async function redisCapacity(url: string, redisPid: number, { count = 20_000, concurrency = 32, answerBytes = 2_000 } = {}): Promise<RedisCapacity> {
  // One real signature; each call a fresh nonce of the same length (the store does not verify).
  const { payload } = await signPayment({ amount: '5000' });
  const claim = () => {
    const nonce = `0x${randomBytes(32).toString('hex')}` as const;
    return claimOf({ ...payload, payload: { ...payload.payload, authorization: { ...payload.payload.authorization, nonce } } });
  };
  const answer = Buffer.alloc(answerBytes, 'x');
  const tx = `0x${'ab'.repeat(32)}`;
  const store = await RedisStore.open({ url, prefix: `wires:capacity${Date.now()}:`, consumer: 'capacity' });
  await until('Redis', () => store.available);
  const run = async (whole: boolean) => {
    let left = count;
    const one = async () => {
      const c = claim();
      const r = await store.claim(c);
      if (r.kind !== 'new') throw new Error(`claim not new: ${r.kind}`);
      if (!whole) return;
      store.shareBody(c.record.id, answer, c.expiresAt);
      await store.handOver(c.record.id);
      store.submitted(c.record.id, tx);
      await store.finish(c.record.id, { t: 'settled', tx });
    };
    const before = cpuSeconds(redisPid);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await one();
      }),
    );
    // What was sent without waiting (the shared answer, the transaction) is done by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    return ((cpuSeconds(redisPid) - before) * 1e6) / count;
  };
  try {
    await run(true); // warm-up: the script loaded, the stream and the group made
    const claimUs = await run(false);
    const paidUs = await run(true);
    return {
      claim_us: +claimUs.toFixed(1),
      claims_per_core_s: Math.round(1e6 / claimUs),
      paid_call_us: +paidUs.toFixed(1),
      paid_calls_per_core_s: Math.round(1e6 / paidUs),
    };
  } finally {
    await store.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, pid] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await redisCapacity(url!, Number(pid)))}\n`);
}
