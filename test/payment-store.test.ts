/**
 * One contract, two payment stores: the local one (memory and the journal file) and the Redis
 * one (a real redis-server started here). Each case runs against both, as the payment core
 * relies on it: a claim is made once, a repeat is judged the same way, a withdrawn claim
 * frees its payment, outcomes are recorded, and pending authorizations come back after a
 * restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startRedis, type LocalRedis } from '../src/devnet/redis.js';
import type { PendingPayment } from '../src/pay/journal.js';
import { LocalStore } from '../src/pay/local-store.js';
import type { PaymentPayload } from '../src/pay/payment-header.js';
import { RedisStore } from '../src/pay/redis-store.js';
import type { NewClaim, PaymentStore } from '../src/pay/store.js';
import { Redis } from 'ioredis';
import { generatePrivateKey } from 'viem/accounts';
import { claimOf, signPayment } from './helpers/payments.js';
import { until } from './helpers/until.js';

let redis: LocalRedis;
before(async () => {
  redis = await startRedis();
});
/** Every store a test opened: closed at the end even when a test failed half way (an open Redis connection would keep the file running). */
const opened: PaymentStore[] = [];
const track = <T extends PaymentStore>(store: T): T => (opened.push(store), store);
after(async () => {
  for (const store of opened) await store.close();
  await redis?.stop();
});

/** A store, and how to open it again as the same process after a restart. */
interface Kind {
  name: string;
  open(): Promise<{ store: PaymentStore; reopen(): Promise<PaymentStore> }>;
}

let prefixes = 0;
const KINDS: Kind[] = [
  {
    name: 'local',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'wires-store-'));
      return { store: track(await LocalStore.open(dir)), reopen: async () => track(await LocalStore.open(dir)) };
    },
  },
  {
    name: 'redis',
    async open() {
      const opts = { url: redis.url, prefix: `wires:t${++prefixes}:`, consumer: 'replica-a', claimIdleMs: 600 };
      const store = track(await RedisStore.open(opts));
      await until('Redis', () => store.available);
      return {
        store,
        reopen: async () => {
          const again = track(await RedisStore.open(opts));
          await until('Redis', () => again.available);
          return again;
        },
      };
    },
  },
];

async function newClaim(opts: { paymentId?: string; privateKey?: `0x${string}`; limit?: bigint | null } = {}): Promise<NewClaim> {
  const { payload } = await signPayment({ amount: '5000', ...(opts.privateKey ? { privateKey: opts.privateKey } : {}) });
  if (opts.paymentId) payload.extensions = { 'payment-identifier': { info: { required: false, id: opts.paymentId } } };
  return claimOf(payload as PaymentPayload, opts);
}

const id = (n: number) => `contract_${n}_${'x'.repeat(16)}`;

for (const kind of KINDS) {
  describe(`payment store contract: ${kind.name}`, () => {
    test('a claim is made once: the same authorization again is a repeat that shares its state', async () => {
      const { store } = await kind.open();
      const c = await newClaim();
      const first = await store.claim(c);
      assert.equal(first.kind, 'new');
      await (first as { synced: Promise<void> }).synced;
      const again = await store.claim(c);
      assert.deepEqual(again, { kind: 'repeat', claim: { state: 'pending', mode: 'optimistic', tx: null, failure: null } });
      await store.close();
    });

    test("the mode: optimistic while the payer's unsettled value stays within the limit, counted across concurrent claims, freed by outcomes", async () => {
      const { store } = await kind.open();
      const privateKey = generatePrivateKey();
      const claims = await Promise.all([1, 2, 3].map(() => newClaim({ privateKey, limit: 10_000n })));
      const modes = (await Promise.all(claims.map((c) => store.claim(c)))).map((r) => (r.kind === 'new' ? r.mode : r.kind));
      assert.deepEqual(modes, ['optimistic', 'optimistic', 'sync'], 'the third would take the payer past 10,000');
      assert.deepEqual(
        claims.map((c) => c.record.mode),
        modes,
        'written into the record',
      );
      assert.equal((await store.lookup(claims[2]!.record.id))!.mode, 'sync');
      // One settles, one is withdrawn: room for two more.
      await store.handOver(claims[0]!.record.id);
      await store.finish(claims[0]!.record.id, { t: 'settled', tx: null });
      await store.withdraw(claims[1]!.record.id);
      const next = await Promise.all([1, 2].map(() => newClaim({ privateKey, limit: 10_000n })));
      assert.deepEqual(
        (await Promise.all(next.map((c) => store.claim(c)))).map((r) => r.kind === 'new' && r.mode),
        ['optimistic', 'sync'],
        'the pending third still counts',
      );
      // Synchronous mode asked for: always sync.
      assert.equal(((await store.claim(await newClaim({ limit: null }))) as { mode: string }).mode, 'sync');
      await store.close();
    });

    test('concurrent copies: exactly one is new', async () => {
      const { store } = await kind.open();
      const c = await newClaim();
      const results = await Promise.all(Array.from({ length: 20 }, () => store.claim(c)));
      assert.equal(results.filter((r) => r.kind === 'new').length, 1);
      assert.equal(results.filter((r) => r.kind === 'repeat').length, 19);
      await store.close();
    });

    test('refusals: another fingerprint under the nonce, another request, a published authorization without its id, a taken payment id', async () => {
      const { store } = await kind.open();
      const privateKey = generatePrivateKey();
      const c = await newClaim({ paymentId: id(1), privateKey });
      assert.equal((await store.claim(c)).kind, 'new');
      // Another signature over the same (payer, nonce).
      const forged = { ...c, fingerprint: `${c.fingerprint}00` };
      assert.deepEqual(await store.claim(forged), { kind: 'refused', reason: 'nonce_reused' });
      assert.deepEqual(await store.claim({ ...c, record: { ...c.record, requestKey: '/cve/latest [2]' } }), { kind: 'refused', reason: 'other_request' });
      assert.equal(await store.handOver(c.record.id), true);
      // Handed over, the authorization is public: only the payer's id proves a repeat.
      assert.deepEqual(await store.claim({ ...c, paymentId: null }), { kind: 'refused', reason: 'published' });
      assert.equal((await store.claim(c)).kind, 'repeat');
      // The same payment id on a different authorization.
      assert.deepEqual(await store.claim(await newClaim({ paymentId: id(1), privateKey })), { kind: 'refused', reason: 'id_conflict' });
      // Another payer may use the same id: ids are scoped by payer.
      assert.equal((await store.claim(await newClaim({ paymentId: id(1) }))).kind, 'new');
      await store.close();
    });

    test('a withdrawn claim frees the payment: the retry is new; a claim handed over cannot be withdrawn', async () => {
      const { store } = await kind.open();
      const c = await newClaim({ paymentId: id(2) });
      assert.equal((await store.claim(c)).kind, 'new');
      assert.equal(await store.withdraw(c.record.id), true);
      assert.equal((await store.claim(c)).kind, 'new', 'the retry after a 503 is a new attempt');
      assert.equal(await store.handOver(c.record.id), true);
      assert.equal(await store.withdraw(c.record.id), false);
      await store.close();
    });

    test('outcomes: settled and failed are what every lookup and repeat sees, and count in the totals', async () => {
      const { store } = await kind.open();
      const [s, f] = [await newClaim({ paymentId: id(3) }), await newClaim({ paymentId: id(4) })];
      for (const c of [s, f]) assert.equal((await store.claim(c)).kind, 'new');
      assert.equal(await store.lookup('0xunknown:0x00'), null);
      const tx = `0x${'ab'.repeat(32)}`;
      await store.handOver(s.record.id);
      store.submitted(s.record.id, tx);
      await store.finish(s.record.id, { t: 'settled', tx });
      await store.handOver(f.record.id);
      await store.finish(f.record.id, { t: 'failed', reason: 'insufficient_funds' });
      assert.deepEqual(await store.lookup(s.record.id), { state: 'settled', mode: 'optimistic', tx, failure: null, body: null });
      assert.deepEqual(await store.claim(s), { kind: 'repeat', claim: { state: 'settled', mode: 'optimistic', tx, failure: null } });
      assert.deepEqual(await store.claim(f), { kind: 'repeat', claim: { state: 'failed', mode: 'optimistic', tx: null, failure: 'insufficient_funds' } });
      assert.equal(store.totals.settled - store.totals.failed, 0);
      assert.ok(store.totals.settled >= 1);
      await store.close();
    });

    test('a restart hands back what is pending, and remembers what is spent', async () => {
      const { store, reopen } = await kind.open();
      const [pending, settled] = [await newClaim(), await newClaim({ paymentId: id(5) })];
      for (const c of [pending, settled]) assert.equal((await store.claim(c)).kind, 'new');
      // Both were handed to a settler before the stop; one settled.
      await store.handOver(pending.record.id);
      await store.handOver(settled.record.id);
      await store.finish(settled.record.id, { t: 'settled', tx: null });
      await store.close();

      const again = await reopen();
      const adopted: PendingPayment[] = [];
      again.watch((p) => adopted.push(...p));
      await until('the pending payment', () => adopted.length > 0);
      assert.deepEqual(
        adopted.map((p) => p.record.id),
        [pending.record.id],
      );
      assert.deepEqual(adopted[0]!.record, pending.record);
      // Handed over before the restart: public, so a repeat needs the id.
      assert.deepEqual(await again.claim(pending), { kind: 'refused', reason: 'published' });
      assert.deepEqual(await again.claim({ ...settled, paymentId: null }), { kind: 'refused', reason: 'published' });
      await again.close();
    });
  });
}

describe('payment store: Redis only', () => {
  test('a replica that stops heartbeating has its pending settlements taken over by another', async () => {
    const opts = { url: redis.url, prefix: 'wires:takeover:', claimIdleMs: 600 };
    const a = track(await RedisStore.open({ ...opts, consumer: 'a' }));
    const b = track(await RedisStore.open({ ...opts, consumer: 'b' }));
    await until('Redis', () => a.available && b.available);
    const taken: PendingPayment[] = [];
    b.watch((p) => taken.push(...p));
    a.watch(() => {});
    const c = await newClaim();
    assert.equal((await a.claim(c)).kind, 'new');
    // While a heartbeats, b takes nothing.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(taken.length, 0);
    await a.close();
    await until('the takeover', () => taken.length === 1, 5000);
    // Read back from Redis alone (b never saw the route's requirements): what the payer signed.
    // Its mode was decided by a alone, which never handed it over: taken over as synchronous.
    assert.deepEqual(taken[0]!.record, { ...c.record, mode: 'sync' });
    await b.close();
  });

  test('a claim keeps the authorization in a few hundred bytes, and its route’s requirements apart', async () => {
    const prefix = 'wires:size:';
    const store = track(await RedisStore.open({ url: redis.url, prefix, consumer: 'a' }));
    await until('Redis', () => store.available);
    const client = new Redis(redis.url);
    try {
      const c = await newClaim({ paymentId: id(6) });
      c.record.payload.resource = { url: 'https://wires.example/cve/latest' };
      assert.equal((await store.claim(c)).kind, 'new');
      const bytes = await client.strlen(`${prefix}pay:a:${c.record.id}`);
      const whole = JSON.stringify(c.record).length;
      assert.ok(bytes <= 512, `${bytes} bytes against ${whole} for the whole record`);
      // The route's requirements are stored beside it, by the digest the claim names.
      const [, stored] = await client.scan('0', 'MATCH', `${prefix}pay:req:*`, 'COUNT', 10_000);
      assert.deepEqual(stored.length === 1 && JSON.parse((await client.get(stored[0]!))!), c.record.requirements);
    } finally {
      client.disconnect();
      await store.close();
    }
  });

  test('a claim reads back exactly what the client sent, however it spelt it', async () => {
    const opts = { url: redis.url, prefix: 'wires:spelling:', consumer: 'a', claimIdleMs: 600 };
    const store = track(await RedisStore.open(opts));
    await until('Redis', () => store.available);
    const c = await newClaim({ paymentId: id(8) });
    const p = c.record.payload;
    const a = p.payload.authorization;
    // Its own key order for the requirements it accepted, a resource, an upper-case nonce and signature.
    const { extra, ...rest } = p.accepted;
    p.accepted = { extra, ...rest };
    p.resource = { url: 'https://wires.example/cve/latest?q=%22quoted%22' };
    a.nonce = `0x${a.nonce.slice(2).toUpperCase()}` as typeof a.nonce;
    p.payload.signature = `0x${p.payload.signature.slice(2).toUpperCase()}`;
    c.record.payer = a.from.toLowerCase();
    assert.equal((await store.claim(c)).kind, 'new');
    await store.handOver(c.record.id);
    await store.close();
    const again = track(await RedisStore.open(opts));
    const adopted: PendingPayment[] = [];
    again.watch((pending) => adopted.push(...pending));
    await until('the pending payment', () => adopted.length > 0);
    assert.deepEqual(adopted[0]!.record, c.record);
    assert.equal(JSON.stringify(adopted[0]!.record.payload.accepted), JSON.stringify(p.accepted), 'in its own key order');
    await again.close();
  });

  test('a withdrawn claim, and one undone for a taken payment id, read as failed “unrecorded”: a repeat waiting on either stops', async () => {
    const store = track(await RedisStore.open({ url: redis.url, prefix: 'wires:undone:', consumer: 'a' }));
    await until('Redis', () => store.available);
    const privateKey = generatePrivateKey();
    const withdrawn = await newClaim({ privateKey, limit: 5000n });
    assert.equal((await store.claim(withdrawn)).kind, 'new');
    assert.equal(await store.withdraw(withdrawn.record.id), true);
    const unrecorded = { state: 'failed', mode: 'sync', tx: null, failure: 'unrecorded', body: null };
    assert.deepEqual(await store.lookup(withdrawn.record.id), unrecorded);
    const holder = await newClaim({ paymentId: id(7), privateKey, limit: 5000n });
    assert.equal(((await store.claim(holder)) as { mode: string }).mode, 'optimistic', 'the withdrawn claim no longer counts');
    const conflicting = await newClaim({ paymentId: id(7), privateKey, limit: 10_000n });
    assert.deepEqual(await store.claim(conflicting), { kind: 'refused', reason: 'id_conflict' });
    assert.deepEqual(await store.lookup(conflicting.record.id), unrecorded);
    // The refused claim's amount was given back: one more fits within 10,000 beside the holder's.
    assert.equal(((await store.claim(await newClaim({ privateKey, limit: 10_000n }))) as { mode: string }).mode, 'optimistic');
    await store.close();
  });

  test('settlements the previous layout left pending (a claim hash and a group entry) are taken over once idle, and finished in that layout', async () => {
    const prefix = 'wires:legacy:';
    const client = new Redis(redis.url);
    try {
      const c = await newClaim({ limit: null });
      const journal = `${prefix}pay:journal`;
      const unsettled = `${prefix}pay:x:${c.record.id.split(':')[0]}`;
      // As a replica of that layout left it: its claim script's writes, then the replica gone.
      await client.xgroup('CREATE', journal, 'settlers', '$', 'MKSTREAM');
      await client.xadd(journal, '*', 'r', JSON.stringify({ ...c.record, mode: 'sync' }));
      await client.xreadgroup('GROUP', 'settlers', 'old-replica', 'COUNT', 1, 'STREAMS', journal, '>');
      await client.hset(`${prefix}pay:c:${c.record.id}`, { fp: c.fingerprint, rk: c.record.requestKey, pid: '', st: 'pending', h: '1', mode: 'sync', xk: unsettled, amt: '5000' });
      await client.set(unsettled, '5000');

      const store = track(await RedisStore.open({ url: redis.url, prefix, consumer: 'new', claimIdleMs: 600 }));
      const adopted: PendingPayment[] = [];
      store.watch((p) => adopted.push(...p));
      await until('the takeover', () => adopted.length > 0, 5000);
      assert.deepEqual(adopted[0]!.record, { ...c.record, mode: 'sync' });
      assert.equal(await store.handOver(c.record.id), true);
      await store.finish(c.record.id, { t: 'settled', tx: `0x${'cd'.repeat(32)}` });
      assert.equal(await client.hget(`${prefix}pay:c:${c.record.id}`, 'st'), 'settled');
      assert.equal(await client.exists(unsettled), 0, "the payer's unsettled value is taken off");
      const [left] = (await client.xpending(journal, 'settlers')) as [number];
      assert.equal(left, 0, 'its group entry is acknowledged');
      await store.close();
    } finally {
      client.disconnect();
    }
  });

  test('unreachable: every call rejects at once, and it recovers by itself', async () => {
    const local = await startRedis();
    const store = track(await RedisStore.open({ url: local.url, prefix: 'wires:down:', consumer: 'a' }));
    await until('Redis', () => store.available);
    await local.kill('SIGKILL');
    await until('the disconnection', () => !store.available);
    const started = Date.now();
    await assert.rejects(store.claim(await newClaim()));
    assert.ok(Date.now() - started < 1000, 'refused at once, not queued');
    await local.start();
    await until('the reconnection', () => store.available, 10_000);
    assert.equal((await store.claim(await newClaim())).kind, 'new');
    await store.close();
    await local.stop();
  });
});
