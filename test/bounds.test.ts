/**
 * Every table a client can grow stays within its bound when driven 10–100× past it with
 * distinct keys, and the clients who behave are still served. The bounds themselves are
 * stated in docs/deployment.md ("What grows, and its bound"); /metrics shows each table's size
 * (`wires_table_entries`). Heap figures are read after a full GC.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Exposure, Unsettled } from '../src/pay/exposure.js';
import { FailureBudget } from '../src/pay/failure-budget.js';
import { StreamHub } from '../src/stream/hub.js';
import { until } from './helpers/until.js';
import { startTestService, type TestService } from './helpers/service.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const MB = 1048576;

async function table(svc: TestService, name: string): Promise<number> {
  const text = await (await svc.get('/metrics')).text();
  return Number(new RegExp(`^wires_table_entries\\{table="${name}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
}

describe('tables a client grows', () => {
  test('failed-payment budget: a million client addresses with one failure each keep at most 100,000, in a bounded heap; a fresh client is untouched, a flooding one still throttled', () => {
    const budget = new FailureBudget(20, 60);
    const now = Date.now();
    for (let i = 0; i < 25; i++) budget.charge('203.0.113.9', now); // a flood from one address
    const before = heapAfterGc();
    for (let i = 0; i < 1_000_000; i++) budget.charge(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:${i >> 24}`, now);
    const grown = heapAfterGc() - before;
    assert.ok(budget.size <= 100_000, `${budget.size} addresses remembered`);
    assert.ok(grown < 40 * MB, `heap grew ${(grown / MB).toFixed(1)} MB`);
    assert.equal(budget.retryAfter('198.51.100.7', now), 0, 'a new client may pay');
    budget.charge('198.51.100.8', now);
    assert.equal(budget.retryAfter('198.51.100.8', now), 0, 'one failure is within the burst');
    for (let i = 0; i < 25; i++) budget.charge('198.51.100.9', now);
    assert.ok(budget.retryAfter('198.51.100.9', now) > 0, 'a client flooding now is still throttled');
    // Twenty seconds on (20 failures at 60 a minute), every bucket has refilled: nothing is left to remember.
    budget.sweep(now + 20_000);
    assert.equal(budget.size, 0);
  });

  test('stream grants: 100,000 authorizations are forgotten once past their paid block and validity; a live one is kept', () => {
    const hub = new StreamHub(new Map(), () => {});
    const now = Date.now();
    const validBefore = Math.floor(now / 1000) + 300;
    for (let i = 0; i < 100_000; i++) hub.grant(`0xpayer:${i}`, validBefore, 0, now);
    hub.grant('0xlive:1', validBefore + 3600, 0, now);
    assert.equal(hub.grantCount, 100_001);
    hub.sweep(now + 1_000_000, now + 1_000_000); // past their block, and their validity plus 120 s
    assert.equal(hub.grantCount, 1);
    assert.ok(hub.grant('0xlive:1', validBefore + 3600, 0, now) > now, 'the live grant still answers');
  });

  test('optimistic exposure: 100,000 payers leave nothing once settled, and their cached balances are forgotten after 150 s', async () => {
    const balances = new Exposure(50_000n, async () => 1_000_000n);
    const unsettled = new Unsettled();
    const now = Date.now();
    for (let i = 0; i < 100_000; i++) {
      const payer = `0x${i.toString(16).padStart(40, '0')}`;
      assert.equal(balances.limit(payer, now), 50_000n, 'the cap bounds a payer whose balance is not read yet');
      unsettled.add(payer, 5000n);
    }
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([unsettled.size, balances.size], [100_000, 100_000]);
    for (let i = 0; i < 100_000; i++) unsettled.add(`0x${i.toString(16).padStart(40, '0')}`, -5000n);
    balances.sweep(Date.now() + 151_000);
    assert.deepEqual([unsettled.size, balances.size], [0, 0]);
  });
});

describe('over HTTP', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc?.stop());

  test('preview answers: 5,200 distinct queries (10× the 512 kept per route) keep the cache at its bound; a kept answer equals a fresh one', async () => {
    const body = async (q: string) => {
      const res = await svc.get(`/news/preview?q=${q}`);
      assert.equal(res.status, 200);
      return (await res.text()).replace(/"took_ms":[\d.]+/, '');
    };
    const first = await body('market');
    let i = 0;
    const worker = async () => {
      while (i < 5200) await body(`market+x${i++}`);
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const kept = await table(svc, 'preview_answers');
    assert.ok(kept > 0 && kept <= 512, `${kept} answers kept`);
    assert.equal(await body('market'), first);
  });

  test('the heap near its limit: preview answers are dropped, counted, and previews still answer', async () => {
    const low = await startTestService({ MEMORY_SHED_AT: '1' });
    // Real pressure: ballast until the heap holds more than 1 % of its limit, the lowest setting.
    const ballast: string[][] = [];
    while (getHeapStatistics().used_heap_size < 0.02 * getHeapStatistics().heap_size_limit) ballast.push(Array.from({ length: 10_000 }, (_, i) => `ballast ${i} ${ballast.length}`));
    try {
      for (const q of ['rate', 'oil', 'chip']) assert.equal((await low.get(`/news/preview?q=${q}`)).status, 200);
      // The guard looks once a second; a busy machine may delay a look.
      const sheds = async () => Number(/^wires_memory_sheds_total (\d+)/m.exec(await (await low.get('/metrics')).text())?.[1]);
      await until('a shed to be counted', async () => (await sheds()) >= 1, 10_000, 200);
      assert.equal(await table(low, 'preview_answers'), 0);
      assert.equal((await low.get('/news/preview?q=rate')).status, 200);
    } finally {
      ballast.length = 0;
      await low.stop();
    }
  });
});
