/**
 * Replica mode for real: a redis-server, the devnet (anvil, USDC, an x402 facilitator) and
 * several service processes sharing them over loopback HTTP. Every claim about money is
 * checked on the chain.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { ChainReader } from '../src/pay/chain.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { startRedis, type LocalRedis } from '../src/devnet/redis.js';
import { freePort } from './helpers/loopback.js';
import { DEPLOY, NGINX, startNginx } from './helpers/nginx.js';
import { encodePayment, signPayment } from './helpers/payments.js';
import { spawnService, type ServiceProcess } from './helpers/spawn-service.js';
import { until } from './helpers/until.js';

const PRICE = '5000';
const UWS_UNCORKED_WARNING = 'Warning: uWS.HttpResponse writes must be made from within a corked callback. See documentation for uWS.HttpResponse.cork and consult the user manual.';
const CVE = '/cve/latest';

let devnet: Devnet;
let chain: ChainReader;
let redis: LocalRedis;
const replicas: ServiceProcess[] = [];

function replicaEnv(id: string, facilitatorUrl = devnet.facilitatorUrl): Record<string, string> {
  return {
    DATA_DIR: mkdtempSync(join(tmpdir(), `wires-replica-${id}-`)),
    INGEST: '0',
    PAY_TO_ADDRESS: devnet.payTo,
    FACILITATOR_URL: facilitatorUrl,
    SETTLEMENT: 'optimistic',
    OPTIMISTIC_MAX_UNSETTLED_USD: '1',
    REDIS_URL: redis.url,
    REPLICA_ID: id,
    REDIS_TAKEOVER_SEC: '2',
    // Every copy below comes from one address: the failure budget is not what is tested.
    FAILED_PAYMENTS_BURST: '0',
  };
}

before(async () => {
  [devnet, redis] = await Promise.all([startDevnet({ payers: 4 }), startRedis()]);
  chain = new ChainReader(devnet.rpcUrl, 10_000);
  replicas.push(...(await Promise.all(['r1', 'r2', 'r3'].map((id) => spawnService(replicaEnv(id))))));
});

after(async () => {
  await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
  await redis?.stop();
  await devnet?.stop();
});

const paid = (r: ServiceProcess, payment: string, header = 'PAYMENT-SIGNATURE', path = CVE) => fetch(r.url + path, { headers: { [header]: payment } });
const balances = async (payer: string) => [await chain.balanceOf(payer), await chain.balanceOf(devnet.payTo)];

/** The payer's journal once every accepted payment has its outcome: the chain moves before the
 *  settling replica writes 'settled', so a balance alone does not mean the record is there. */
async function settledJournal(payer: string): Promise<{ t: string; id: string }[]> {
  let records: { t: string; id: string }[] = [];
  await until(
    'the journal to record each outcome',
    async () => {
      records = await journal(payer);
      const open = new Set(records.filter((r) => r.t === 'accepted').map((r) => r.id));
      for (const r of records) if (r.t === 'settled' || r.t === 'failed') open.delete(r.id);
      return open.size === 0;
    },
    10_000,
  );
  return records;
}

/** The payer's claims in Redis, whatever their state. */
async function claims(payer: string): Promise<string[]> {
  const client = new Redis(redis.url);
  try {
    const [, keys] = await client.scan('0', 'MATCH', `wires:pay:a:${payer.toLowerCase()}:*`, 'COUNT', 100_000);
    return keys;
  } finally {
    client.disconnect();
  }
}

/** The shared journal's records for one payer. */
async function journal(payer: string): Promise<{ t: string; id: string }[]> {
  const client = new Redis(redis.url);
  try {
    const entries = await client.xrange('wires:pay:journal', '-', '+');
    return entries.map(([, f]) => JSON.parse(f[1]!)).filter((r) => r.id?.startsWith(payer.toLowerCase()));
  } finally {
    client.disconnect();
  }
}

test('20 copies of one authorization over 3 replicas: one charge, every 200 the same data, and only for the payer', async () => {
  const payer = devnet.payers[0]!;
  const paymentId = `race_${'q'.repeat(20)}`;
  const { payload } = await signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey, paymentId });
  const [payer0, payTo0] = await balances(payer.address);
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => paid(replicas[i % 3]!, encodePayment(payload)).then(async (res) => ({ status: res.status, body: await res.text() }))));
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(20).fill(200),
    answers.map((a) => a.body.slice(0, 200)).join('\n'),
  );
  assert.equal(new Set(answers.map((a) => a.body)).size, 1, 'every 200 carries the same data');

  await until('the settlement', async () => (await chain.balanceOf(devnet.payTo)) > payTo0! && true);
  // Published now: the authorization without the payer's id is a replay on every replica.
  const { extensions: _, ...published } = payload;
  for (const r of replicas) {
    const res = await paid(r, encodePayment(published));
    assert.equal(res.status, 402);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'replay');
  }
  const [payer1, payTo1] = await balances(payer.address);
  assert.deepEqual([payer1! - payer0!, payTo1! - payTo0!], [-5000n, 5000n], 'charged exactly once');
  const records = await settledJournal(payer.address);
  assert.deepEqual(
    records.filter((r) => r.t !== 'submitted').map((r) => r.t),
    ['accepted', 'settled'],
    'one accepted record, one outcome',
  );
});

test('v1 and v2 of one authorization on two replicas: charged once', async () => {
  const payer = devnet.payers[1]!;
  const { payload } = await signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey });
  const v1 = encodePayment({ x402Version: 1, scheme: 'exact', network: 'base', payload: payload.payload });
  const [payer0] = await balances(payer.address);
  const [a, b] = await Promise.all([paid(replicas[0]!, encodePayment(payload)), paid(replicas[1]!, v1, 'X-PAYMENT')]);
  const statuses = [a.status, b.status].sort();
  // The second to arrive is the payer's repeat (200), or, once the first was handed to a settler, a replay (402).
  assert.ok(statuses[0] === 200 && [200, 402].includes(statuses[1]!), String(statuses));
  const bodies = [await a.text(), await b.text()].filter((_, i) => [a, b][i]!.status === 200);
  assert.equal(new Set(bodies).size, 1);
  await until('the settlement', async () => (await chain.balanceOf(payer.address)) < payer0! && true);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await chain.balanceOf(payer.address)) - payer0!, -5000n);
});

test('a stream block bought on one replica and its authorization presented on another: the same paid time, charged once', async () => {
  const payer = devnet.payers[1]!;
  const prices = (await (await fetch(`${replicas[0]!.url}/.well-known/x402`)).json()) as { streams: { path: string; accepts: { amount: string }[] }[] };
  const amount = prices.streams.find((s) => s.path === '/stream?wire=news')!.accepts[0]!.amount;
  const { payload } = await signPayment({ amount, payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: `stream_${'s'.repeat(20)}` });
  const [payer0] = await balances(payer.address);
  const paidUntil = async (r: ServiceProcess) => {
    const ws = new WebSocket(`${r.url.replace('http', 'ws')}/stream?wire=news`, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
    try {
      const first = await new Promise<{ type: string; paid_until: string }>((resolve, reject) => {
        ws.once('message', (data) => resolve(JSON.parse(String(data))));
        ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
        ws.once('error', reject);
        ws.once('close', (code) => reject(new Error(`closed ${code} before any message: a paid stream lost`)));
      });
      assert.equal(first.type, 'paid');
      return first.paid_until;
    } finally {
      ws.close();
    }
  };
  const first = await paidUntil(replicas[0]!);
  await new Promise((r) => setTimeout(r, 1100));
  assert.equal(await paidUntil(replicas[1]!), first, 'the block bought on r1, not a second one');
  assert.equal(await paidUntil(replicas[2]!), first);
  // Each upgrade waited on the network for its payment, so each replica upgraded one socket
  // outside a cork (see src/http/stream.ts): uWebSockets.js's one warning line each, and nothing
  // else that is not JSON.
  for (const r of replicas) {
    const plain = r
      .logs()
      .split('\n')
      .filter((line) => line !== '' && !isJson(line));
    assert.deepEqual(plain, [UWS_UNCORKED_WARNING], `${r.url} wrote lines that are not JSON`);
  }
  await until('the settlement', async () => (await chain.balanceOf(payer.address)) < payer0! && true);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await chain.balanceOf(payer.address)) - payer0!, -BigInt(amount));
});

test('SIGKILL of a replica holding unsettled payments: another takes them over and settles each once; a replica joining late serves the payer’s retry', async () => {
  const payer = devnet.payers[2]!;
  // This replica cannot reach its facilitator: what it accepts stays pending with it.
  const stuck = await spawnService(replicaEnv('r4', 'http://127.0.0.1:9'));
  const signed = await Promise.all(Array.from({ length: 5 }, (_, i) => signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: `kill_${i}_${'k'.repeat(16)}` })));
  const [payer0, payTo0] = await balances(payer.address);
  const bodies: string[] = [];
  for (const { payload } of signed) {
    const res = await paid(stuck, encodePayment(payload));
    assert.equal(res.status, 200);
    bodies.push(await res.text());
  }
  assert.equal((await chain.balanceOf(payer.address)) - payer0!, 0n, 'nothing settled yet');
  await stuck.kill('SIGKILL');

  const started = Date.now();
  await until('the takeover', async () => (await chain.balanceOf(devnet.payTo)) - payTo0! === 25_000n, 30_000);
  const tookMs = Date.now() - started;
  const records = await settledJournal(payer.address);
  for (const { payload } of signed) {
    const id = `${payload.payload.authorization.from.toLowerCase()}:${payload.payload.authorization.nonce.toLowerCase()}`;
    assert.deepEqual(
      records.filter((r) => r.id === id && r.t !== 'submitted').map((r) => r.t),
      ['accepted', 'settled'],
      id,
    );
  }
  assert.deepEqual(await balances(payer.address), [payer0! - 25_000n, payTo0! + 25_000n]);
  // REDIS_TAKEOVER_SEC=2, then one heartbeat, a facilitator call and a block: bounded, with room for a loaded machine.
  assert.ok(tookMs < 20_000, `taken over in ${tookMs} ms`);

  // A replica started now serves the payer's retry with the data the killed one released.
  const late = await spawnService(replicaEnv('r5'));
  replicas.push(late);
  const retry = await paid(late, encodePayment(signed[0]!.payload));
  assert.equal(retry.status, 200);
  assert.equal(await retry.text(), bodies[0]);
  assert.equal((await chain.balanceOf(payer.address)) - payer0!, -25_000n, 'and charges nothing more');
});

test('the failed-payment budget holds across replicas: failures spread over two replicas exhaust it on both', async () => {
  const env = (id: string) => ({ ...replicaEnv(id), FAILED_PAYMENTS_BURST: '4', FAILED_PAYMENTS_PER_MIN: '1' });
  const [a, b] = await Promise.all([spawnService(env('fb1')), spawnService(env('fb2'))]);
  try {
    const forged = (r: ServiceProcess, client: string) => fetch(r.url + CVE, { headers: { 'PAYMENT-SIGNATURE': 'not-a-payment', 'X-Real-IP': client } });
    // Alternating, a little slower than a batch of charges: on either replica alone, the
    // budget would last 8 failures (4 each).
    const statuses: number[] = [];
    for (let i = 0; i < 12 && statuses.slice(-2).join() !== '429,429'; i++) {
      statuses.push((await forged(i % 2 ? b : a, '203.0.113.7')).status);
      await new Promise((r) => setTimeout(r, 150));
    }
    assert.deepEqual(statuses.slice(-2), [429, 429], statuses.join());
    assert.ok(statuses.filter((s) => s === 400).length <= 5, `the budget was spent once, not per replica: ${statuses.join()}`);
    const refused = await forged(b, '203.0.113.7');
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    // Another address is not touched by it.
    assert.equal((await forged(a, '203.0.113.8')).status, 400);
  } finally {
    await Promise.all([a.kill('SIGKILL'), b.kill('SIGKILL')]);
  }
});

test('Redis killed: paid calls answer 503 with Retry-After, previews serve; restarted with its AOF, no accepted authorization is lost and payments resume', async () => {
  const payer = devnet.payers[3]!;
  const before = await Promise.all(Array.from({ length: 3 }, () => signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey })));
  const [payer0, payTo0] = await balances(payer.address);
  for (const { payload } of before) assert.equal((await paid(replicas[0]!, encodePayment(payload))).status, 200);
  await redis.kill('SIGKILL');

  const health = async (r: ServiceProcess) => (await (await fetch(`${r.url}/health`)).json()) as { status: string; replica: { store_available: boolean } };
  await until('the replicas to notice', async () => (await Promise.all(replicas.slice(0, 3).map(health))).every((h) => !h.replica.store_available));
  const { payload } = await signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey });
  for (const r of replicas.slice(0, 3)) {
    const res = await paid(r, encodePayment(payload));
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'payments_unavailable');
    assert.equal((await fetch(`${r.url}${CVE.replace('latest', 'preview')}`)).status, 200, 'previews serve from memory');
    assert.equal((await health(r)).status, 'degraded');
  }
  const metrics = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
  assert.match(metrics, /^wires_payment_store_up 0$/m);

  await redis.start();
  await until('the replicas to reconnect', async () => (await Promise.all(replicas.slice(0, 3).map(health))).every((h) => h.replica.store_available));
  assert.equal((await claims(payer.address)).length, 3, 'the accepted authorizations survived the kill');
  // The one refused while Redis was down is a new payment now, charged once.
  assert.equal((await paid(replicas[1]!, encodePayment(payload))).status, 200);
  // Within seconds of Redis's return: a settlement the store could not record while it was down
  // is retried every second, not after the settler's backoff (16–30 s after an outage this long).
  await until('every settlement', async () => (await chain.balanceOf(devnet.payTo)) - payTo0! === 20_000n, 10_000);
  assert.equal((await chain.balanceOf(payer.address)) - payer0!, -20_000n);
});

test('through nginx with the shipped replicas upstream: requests spread over the replicas, a killed one costs none, and a paid call is charged once', {
  skip: !NGINX && !process.env.CI ? 'nginx is not installed (scripts/install-system-deps.sh installs it)' : false,
}, async () => {
  const [a, b, c] = replicas;
  // The shipped upstream block, its three servers moved to this test's replicas.
  const shipped = /upstream wires \{([\s\S]*?)\n\}/.exec(readFileSync(join(DEPLOY, 'wires-replicas.conf'), 'utf8'))![1]!;
  const upstream = shipped.replace(':4021', `:${a!.port}`).replace(':4022', `:${b!.port}`).replace(':4023', `:${c!.port}`);
  const proxy = await startNginx(await freePort(), upstream);
  try {
    const through = (path: string, init?: RequestInit) => fetch(`${proxy.url}${path}`, init);
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) seen.add(((await (await through('/health')).json()) as { replica: { id: string } }).replica.id);
    assert.ok(seen.size >= 2, `answered by ${[...seen].join(', ')}`);

    await c!.kill('SIGKILL');
    const statuses = await Promise.all(Array.from({ length: 20 }, () => through('/cve/preview').then((r) => r.status)));
    assert.deepEqual(statuses, Array(20).fill(200), 'a refused connection is retried on another replica');

    const payer = devnet.payers[0]!;
    const { payload } = await signPayment({ amount: PRICE, payTo: devnet.payTo, privateKey: payer.privateKey });
    const [payer0] = await balances(payer.address);
    assert.equal((await through(CVE, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } })).status, 200);
    await until('the settlement', async () => (await chain.balanceOf(payer.address)) < payer0! && true);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await chain.balanceOf(payer.address)) - payer0!, -5000n);
  } finally {
    await proxy.stop();
  }
});

function isJson(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

test('replicas sharing one port (SHARED_PORT): the kernel spreads new connections over them, and a killed one gets none', async () => {
  const port = await freePort();
  const shared = await Promise.all(['s1', 's2', 's3'].map((id) => spawnService({ ...replicaEnv(id), PORT: String(port), SHARED_PORT: '1' })));
  try {
    assert.deepEqual(
      shared.map((r) => r.port),
      [port, port, port],
    );
    // Each request on a connection of its own: which replica answers is the kernel's choice.
    const answeredBy = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });
        assert.equal(res.status, 200);
        ids.push(((await res.json()) as { replica: { id: string } }).replica.id);
      }
      return ids;
    };
    const before = new Set(await answeredBy(60));
    assert.ok(before.size >= 2, `60 connections went to ${[...before].join(', ')}`);
    await shared[0]!.kill('SIGKILL');
    const after = await answeredBy(40);
    assert.ok(!after.includes('s1'), 'none to the killed replica');
    assert.ok(new Set(after).size >= 1);
    // Without the setting the port stays one process's: a second one is refused at start.
    await assert.rejects(spawnService({ ...replicaEnv('x'), PORT: String(port) }), /cannot listen|did not start/);
  } finally {
    await Promise.all(shared.map((r) => r.kill('SIGKILL')));
  }
});
