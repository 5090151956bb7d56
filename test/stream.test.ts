/**
 * /stream over real WebSocket connections on loopback: the upgrade's 402, subscriptions and
 * their errors, pushes of new and updated items, paid time (blocks, renewal, expiry, the same
 * payment presented twice, replay), and consumers that stop reading.
 *
 * Settlement is optimistic against a facilitator that is not there, so payments are verified,
 * journaled and released as in production, and their settlement fails in the background (the
 * devnet test at the end pays a block for real).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { WIRES } from '../src/catalog/index.js';
import { streamWires } from '../src/stream/protocol.js';
import { StreamHub } from '../src/stream/hub.js';
import { WireIndex } from '../src/search/wire-index.js';
import type { Item } from '../src/search/item.js';
import { ChainReader } from '../src/pay/chain.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { decodeHeader, encodePayment, signPayment } from './helpers/payments.js';
import { startTestService, type TestService } from './helpers/service.js';
import { openStream, refusedUpgrade, type StreamClient } from './helpers/ws.js';

const NEWS_BLOCK = '50000'; // 10 minutes × 0.005 USD
const MINUTE = 60_000;
const NEWS = WIRES.find((w) => w.id === 'news')!;
let svc: TestService;
let url: (query?: string) => string;

before(async () => {
  svc = await startTestService({ SETTLEMENT: 'optimistic' });
  url = (query = 'wire=news') => `ws://127.0.0.1:${svc.port}/stream?${query}`;
});
after(() => svc?.stop());

let seq = 0;
function item(filter: string, title: string, extra: Partial<Item> = {}): Item {
  const n = ++seq;
  return { id: `stream-test-${n}`, title, url: `https://example.com/stream/${n}`, source: 'Test Wire', filter, published: Date.now(), summary: `Summary of ${title}.`, ...extra };
}

const pay = async (amount = NEWS_BLOCK, paymentId?: string) => encodePayment((await signPayment({ amount, ...(paymentId ? { paymentId } : {}) })).payload);

async function paidStream(query = 'wire=news', header?: string): Promise<StreamClient> {
  const c = await openStream(url(query), { 'PAYMENT-SIGNATURE': header ?? (await pay()) });
  const paid = await c.next();
  assert.equal(paid.type, 'paid', JSON.stringify(paid));
  return c;
}

describe('opening a stream', () => {
  test('an upgrade without payment is a 402 with the block offer, as the price list states it', async () => {
    const refusal = await refusedUpgrade(url());
    assert.equal(refusal.status, 402);
    const required = decodeHeader(refusal.headers['payment-required'] as string);
    assert.equal(required.accepts[0].amount, NEWS_BLOCK, 'ten minutes at the per-call price');
    assert.match(required.resource.url, /\/stream\?wire=news$/);
    assert.equal(refusal.body.accepts[0].maxAmountRequired, NEWS_BLOCK, 'v1 clients read the same offer from the body');
    const prices = await (await svc.get('/.well-known/x402')).json();
    const listed = prices.streams.find((s: any) => s.wire === 'news');
    assert.deepEqual(listed.accepts[0], required.accepts[0]);
    assert.equal(listed.block_minutes, 10);
    assert.equal(listed.price, '0.05');
  });

  test('bad upgrade requests get JSON errors, and a plain GET is told to upgrade', async () => {
    assert.equal((await refusedUpgrade(url(''))).body.error.code, 'missing_parameter');
    const unknown = await refusedUpgrade(url('wire=nope'));
    assert.equal(unknown.status, 400);
    assert.ok(unknown.body.error.allowed.includes('news'));
    assert.equal((await refusedUpgrade(url('wire=news&pay=later'))).body.error.param, 'pay');
    assert.equal((await refusedUpgrade(url('wire=news&limit=3'))).body.error.code, 'unknown_parameter');
    assert.equal((await refusedUpgrade(url(), { 'PAYMENT-SIGNATURE': 'not base64!' })).body.error.code, 'invalid_payment');
    const plain = await svc.get('/stream?wire=news');
    assert.equal(plain.status, 426);
    assert.equal((await plain.json()).error.code, 'upgrade_required');
  });

  test('a payment for less than the block is refused with the reason and no stream', async () => {
    const refusal = await refusedUpgrade(url(), { 'PAYMENT-SIGNATURE': await pay('5000') });
    assert.equal(refusal.status, 402);
    assert.equal(refusal.body.error.code, 'invalid_payment_requirements');
  });
});

describe('subscriptions', () => {
  test('new and updated items that match are pushed once each, as the envelope serialises them', async () => {
    const c = await paidStream();
    const crypto = NEWS.filter;
    c.send({ type: 'subscribe', params: { [crypto.name]: 'markets', q: 'Fed  Rate' } });
    const markets = await c.next('subscribed');
    assert.equal(markets.sub, 'news?category=markets&q=fed%20rate');
    c.send({ type: 'subscribe', params: { [crypto.name]: 'crypto' } });
    const cryptoSub = (await c.next('subscribed')).sub;

    const hit = item('markets', 'Fed holds rate steady');
    const news = svc.wires.get('news')!;
    news.add([hit, item('markets', 'Stocks close higher'), item('world', 'Fed rate talk abroad'), item('crypto', 'Bitcoin moves')]);
    news.add([{ ...hit, title: 'Fed holds rate steady, statement revised' }]);
    news.add([hit]); // back to the first version: an update again
    const pushed = await c.drain(300);
    assert.deepEqual(
      pushed.map((m) => [m.sub, m.update, m.item.title]),
      [
        [markets.sub, false, 'Fed holds rate steady'],
        [cryptoSub, false, 'Bitcoin moves'],
        [markets.sub, true, 'Fed holds rate steady, statement revised'],
        [markets.sub, true, 'Fed holds rate steady'],
      ],
    );
    // The same item JSON as a search's envelope (relevance aside).
    const paidAnswer = await (await svc.get(`${NEWS.preview.path}?category=crypto&q=bitcoin`)).json();
    const { summary: _s, ...pushedItem } = pushed[1].item;
    const inEnvelope = paidAnswer.articles.find((a: any) => a.url === pushedItem.url);
    assert.deepEqual({ ...inEnvelope, relevance: 1 }, { ...pushedItem, relevance: 1 });

    c.send({ type: 'unsubscribe', sub: markets.sub });
    assert.equal((await c.next('unsubscribed')).sub, markets.sub);
    news.add([item('markets', 'Fed rate again')]);
    assert.deepEqual(await c.drain(200), [], 'nothing after unsubscribing');
    c.ws.close();
  });

  test("a subscription is refused with the route's own errors, and the connection stays open", async () => {
    const c = await paidStream();
    const http = await (await svc.get(`${NEWS.preview.path}?category=nope&q=fed`)).json();
    c.send({ type: 'subscribe', params: { category: 'nope' } });
    assert.deepEqual((await c.next('error')).error, http.error, 'the same error as the HTTP route');
    c.send({ type: 'subscribe', params: { since: '1h' } });
    assert.equal((await c.next('error')).error.code, 'unknown_parameter');
    c.send({ type: 'subscribe', params: { q: 'a b c d e f g h i' } });
    assert.equal((await c.next('error')).error.param, 'q');
    c.send('not json');
    assert.equal((await c.next('error')).error.code, 'invalid_message');
    c.send({ type: 'dance' });
    assert.equal((await c.next('error')).error.code, 'invalid_message');
    c.send({ type: 'unsubscribe', sub: 'news?category=tech' });
    assert.equal((await c.next('error')).error.code, 'unknown_subscription');
    for (let i = 0; i < 16; i++) c.send({ type: 'subscribe', params: { q: `term${i}` } });
    for (let i = 0; i < 16; i++) await c.next('subscribed');
    c.send({ type: 'subscribe', params: { q: 'one more' } });
    assert.equal((await c.next('error')).error.code, 'too_many_subscriptions');
    c.send({ type: 'subscribe', params: { q: 'term3' } });
    assert.equal((await c.next()).type, 'subscribed', 'the same subscription again is no new one');
    c.ws.close();
  });

  test('a browser pays in its first message (?pay=message)', async () => {
    const c = await openStream(url('wire=news&pay=message'));
    const first = await c.next();
    assert.equal(first.type, 'payment_required');
    assert.equal(first.payment_required.accepts[0].amount, NEWS_BLOCK);
    c.send({ type: 'subscribe', params: { category: 'nope' } });
    assert.equal((await c.next('error')).error.code, 'invalid_parameter', 'a subscription is checked before payment');
    c.send({ type: 'subscribe' });
    assert.equal((await c.next('error')).error.code, 'payment_required');
    c.send({ type: 'pay', payment: await pay('1') });
    const refused = await c.next('error');
    assert.equal(refused.payment_required.accepts[0].amount, NEWS_BLOCK, 'a refusal carries the offer again');
    c.send({ type: 'pay', payment: await pay() });
    const paid = await c.next('paid');
    assert.ok(Math.abs(Date.parse(paid.paid_until) - (Date.now() + 10 * MINUTE)) < 5000);
    c.send({ type: 'subscribe' });
    assert.equal((await c.next('subscribed')).sub, 'news');
    c.ws.close();
  });

  test('a subscription in the URL is taken at open: a client that sends nothing gets its items', async () => {
    // Only the payment, in the upgrade's header: the client never sends a message.
    const c = await openStream(url('wire=news&category=energy&q=Oil+Prices'), { 'PAYMENT-SIGNATURE': await pay() });
    assert.equal((await c.next()).type, 'paid');
    assert.equal((await c.next()).sub, 'news?category=energy&q=oil%20prices', 'subscribed, with the key a message would get');
    svc.wires.get('news')!.add([item('tech', 'Oil prices in tech'), item('energy', 'Gas supply falls'), item('energy', 'Oil prices rise')]);
    const pushed = await c.next('item');
    assert.equal(pushed.item.title, 'Oil prices rise');
    assert.deepEqual(await c.drain(200), [], 'only the matching item');
    // Messages still add subscriptions beside it.
    c.send({ type: 'subscribe', params: { category: 'tech' } });
    assert.equal((await c.next('subscribed')).sub, 'news?category=tech');
    c.ws.close();
  });

  test('field filters subscribe too: a magnitude on quakes pushes only the quakes at least that strong', async () => {
    const q = await openStream(url('wire=quake&min_mag=6.5'), { 'PAYMENT-SIGNATURE': await pay() });
    assert.equal((await q.next()).type, 'paid');
    assert.equal((await q.next()).sub, 'quake?min_mag=6.5');
    q.send({ type: 'subscribe', params: { cik: '1' } });
    assert.equal((await q.next('error')).error.param, 'cik', 'a field filter of another wire is refused');
    const quake = (mag: number) => item('m2.5', `M ${mag} - somewhere`, { data: { mag } });
    svc.wires.get('quake')!.add([quake(5.1), quake(6.5), quake(7.2)]);
    assert.deepEqual([(await q.next('item')).item.data.mag, (await q.next('item')).item.data.mag].sort(), [6.5, 7.2]);
    assert.deepEqual(await q.drain(200), []);
    q.ws.close();
  });

  test("field filters on EDGAR: a CIK or tickers name one normalised subscription, matched on the filing's data", () => {
    const edgar = streamWires().get('edgar')!;
    const byCik = edgar.subscription({ cik: '1045810' });
    const byTicker = edgar.subscription({ ticker: 'nvda,AMD' });
    assert.ok(byCik.ok && byTicker.ok);
    assert.deepEqual([byCik.key, byTicker.key], ['edgar?cik=0001045810', 'edgar?ticker=AMD,NVDA']);
    // The real path: a wire index tells the hub of each item it stores; the hub reads the
    // index's facets for the item and publishes under each matching subscription's key.
    const wire = new WireIndex({ maxAgeMs: 3_600_000, maxItems: 100, wire: 'edgar' });
    const published: string[] = [];
    const hub = new StreamHub(new Map([['edgar', wire]]), (topic) => published.push(topic));
    hub.subscriptions.hold('edgar', byCik.key, byCik.params);
    hub.subscriptions.hold('edgar', byTicker.key, byTicker.params);
    const matched = (cik: string, tickers?: string[]) => {
      published.length = 0;
      wire.add([item('8-k', `8-K ${cik}`, { data: { cik, parties: [{ role: 'filer', cik, name: cik }], ...(tickers && { ticker: tickers[0], tickers }) } })]);
      return published.sort();
    };
    assert.deepEqual(matched('0001045810', ['NVDA']), [byCik.key, byTicker.key]);
    assert.deepEqual(matched('0000002488', ['AMD']), [byTicker.key]);
    assert.deepEqual(matched('0000000001'), []);
    assert.equal(edgar.subscription({ ticker: 'not a ticker!' }).ok, false);
  });

  test('a URL subscription with ?pay=message is taken once the first message pays', async () => {
    const c = await openStream(url('wire=news&q=ceasefire&pay=message'));
    assert.equal((await c.next()).type, 'payment_required');
    c.send({ type: 'pay', payment: await pay() });
    assert.equal((await c.next()).type, 'paid');
    assert.equal((await c.next()).sub, 'news?q=ceasefire');
    svc.wires.get('news')!.add([item('world', 'Ceasefire talks resume')]);
    assert.equal((await c.next('item')).item.title, 'Ceasefire talks resume');
    c.ws.close();
  });

  test("a bad URL subscription answers the upgrade with the route's 400, before the payment is read", async () => {
    const header = await pay();
    const http = await (await svc.get(`${NEWS.preview.path}?category=nope&q=fed`)).json();
    const bad = await refusedUpgrade(url('wire=news&category=nope'), { 'PAYMENT-SIGNATURE': header });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error, http.error, 'the same error as the HTTP route');
    const other = await refusedUpgrade(url('wire=cve&category=markets'), { 'PAYMENT-SIGNATURE': header });
    assert.equal(other.body.error.code, 'unknown_parameter');
    assert.match(other.body.error.message, /a subscription to cve takes: src, q/);
    assert.equal((await refusedUpgrade(url('wire=news&q=a+b+c+d+e+f+g+h+i'), { 'PAYMENT-SIGNATURE': header })).body.error.param, 'q');
    // Nothing was taken: the same payment then opens a stream and buys a fresh block.
    const c = await openStream(url('wire=news&category=markets'), { 'PAYMENT-SIGNATURE': header });
    const paid = await c.next('paid');
    assert.ok(Math.abs(Date.parse(paid.paid_until) - (Date.now() + 10 * MINUTE)) < 5000);
    assert.equal((await c.next('subscribed')).sub, 'news?category=markets');
    c.ws.close();
  });
});

describe('several wires on one stream', () => {
  let wide: TestService;
  // A block of two wires (0.15 USD) is over the default optimistic cap per payer (0.05 USD).
  before(async () => (wide = await startTestService({ SETTLEMENT: 'optimistic', OPTIMISTIC_MAX_UNSETTLED_USD: '1' })));
  after(() => wide?.stop());
  const at = (query: string) => `ws://127.0.0.1:${wide.port}/stream?${query}`;

  test('one payment of the sum of the blocks; a subscription in the URL is taken on each wire, and both push to the one connection', async () => {
    const offer = await refusedUpgrade(at('wire=edgar,news&q=nvidia'));
    assert.equal(offer.status, 402);
    const required = decodeHeader(offer.headers['payment-required'] as string) as any;
    assert.equal(required.accepts[0].amount, '150000', '0.05 (news) + 0.1 (edgar) USD');
    assert.match(required.resource.url, /\/stream\?wire=news,edgar$/, 'one offer whatever the order asked');
    const short = await refusedUpgrade(at('wire=news,edgar'), { 'PAYMENT-SIGNATURE': await pay('100000') });
    assert.equal(short.status, 402, 'a payment of one block of the two is refused');
    const c = await openStream(at('wire=news,edgar&q=nvidia'), { 'PAYMENT-SIGNATURE': await pay('150000') });
    assert.equal((await c.next()).type, 'paid');
    assert.deepEqual([(await c.next()).sub, (await c.next()).sub].sort(), ['edgar?q=nvidia', 'news?q=nvidia']);
    wide.wires.get('news')!.add([item('tech', 'Nvidia ships a new chip'), item('tech', 'AMD ships a chip')]);
    wide.wires.get('edgar')!.add([item('8-k', '8-K - NVIDIA CORP'), item('8-k', '8-K - ADVANCED MICRO DEVICES')]);
    const pushed = [await c.next('item'), await c.next('item')].map((m) => [m.sub, m.item.title]).sort();
    assert.deepEqual(pushed, [
      ['edgar?q=nvidia', '8-K - NVIDIA CORP'],
      ['news?q=nvidia', 'Nvidia ships a new chip'],
    ]);
    assert.deepEqual(await c.drain(200), []);
    // A message may name one of its wires, or take a subscription on each.
    c.send({ type: 'subscribe', wire: 'edgar', params: { form: '8-k' } });
    assert.equal((await c.next('subscribed')).sub, 'edgar?form=8-k');
    c.send({ type: 'subscribe', wire: 'cve', params: {} });
    assert.equal((await c.next('error')).error.param, 'wire');
    c.ws.close();
  });

  test('refused before any payment: a wire twice or unknown, a subscription not valid on every wire', async () => {
    for (const [query, param] of [
      ['wire=news,news', 'wire'],
      ['wire=news,nope', 'wire'],
      ['wire=news,edgar&form=8-k', 'form'],
    ] as const) {
      const r = await refusedUpgrade(at(query), { 'PAYMENT-SIGNATURE': await pay('150000') });
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error.param, param, query);
    }
  });
});

describe('paid time', () => {
  test('one payment buys one block, however often and wherever it is presented', async () => {
    const header = await pay(NEWS_BLOCK, `stream_${randomBytes(12).toString('hex')}`);
    const a = await paidStream('wire=news', header);
    const untilA = a.received[0].paid_until;
    // The payer reconnects with the same payment (its payment-identifier proves it).
    const b = await paidStream('wire=news', header);
    assert.equal(b.received[0].paid_until, untilA, 'the same paid time, not a second block');
    // Sent again in-band on a live connection: still the same block.
    a.send({ type: 'pay', payment: header });
    assert.equal((await a.next('paid')).paid_until, untilA);
    // Once it is handed to a settler, the authorization without its id is a replay...
    await new Promise((r) => setTimeout(r, 300));
    const observed = decodeHeader(header);
    delete observed.extensions;
    const replay = await refusedUpgrade(url(), { 'PAYMENT-SIGNATURE': encodePayment(observed) });
    assert.equal(replay.status, 402);
    assert.equal(replay.body.error.code, 'replay');
    // ...and it never buys another wire's stream.
    const elsewhere = await refusedUpgrade(url('wire=crypto'), { 'PAYMENT-SIGNATURE': header });
    assert.equal(elsewhere.body.error.code, 'replay');
    a.ws.close();
    b.ws.close();
  });

  test('renewals sent at once: two payments add two blocks, one payment twice adds one', async () => {
    const c = await paidStream();
    const start = Date.parse(c.received[0].paid_until);
    const once = await pay(NEWS_BLOCK, `stream_${randomBytes(12).toString('hex')}`);
    c.send({ type: 'pay', payment: once });
    c.send({ type: 'pay', payment: once });
    const [p1, p2] = [await c.next('paid'), await c.next('paid')];
    assert.equal(Date.parse(p1.paid_until), start + 10 * MINUTE);
    assert.equal(p2.paid_until, p1.paid_until);
    const [x, y] = [await pay(), await pay()];
    c.send({ type: 'pay', payment: x });
    c.send({ type: 'pay', payment: y });
    await c.next('paid');
    assert.equal(Date.parse((await c.next('paid')).paid_until), start + 30 * MINUTE);
    c.ws.close();
  });

  test('the end is announced with the next offer, a renewal extends it, and an expired stream closes with 4402', async () => {
    const fast = await startTestService({ SETTLEMENT: 'optimistic' }, true, { streamTiming: { blockMs: 3000, renewNoticeMs: 2000, firstPaymentMs: 1500 } });
    try {
      const at = (q: string) => `ws://127.0.0.1:${fast.port}/stream?${q}`;
      const renewing = await openStream(at('wire=news'), { 'PAYMENT-SIGNATURE': await pay() });
      const lapsing = await openStream(at('wire=news'), { 'PAYMENT-SIGNATURE': await pay() });
      const firstEnd = Date.parse((await renewing.next('paid')).paid_until);
      const renew = await renewing.next('renew', 3000);
      assert.equal(Date.parse(renew.paid_until), firstEnd);
      assert.equal(renew.payment_required.accepts[0].amount, NEWS_BLOCK);
      renewing.send({ type: 'pay', payment: await pay() });
      assert.equal(Date.parse((await renewing.next('paid')).paid_until), firstEnd + 3000, 'the next block starts where the paid one ends');

      assert.equal((await lapsing.next('renew', 3000)).type, 'renew');
      const closed = await lapsing.closed;
      assert.equal(closed.code, 4402);
      assert.match(closed.reason, /paid time ended/);
      assert.equal(renewing.ws.readyState, renewing.ws.OPEN, 'the renewed stream is still open');

      const unpaid = await openStream(at('wire=news&pay=message'));
      assert.equal((await unpaid.closed).code, 4401);
      renewing.ws.close();
    } finally {
      await fast.stop();
    }
  });
});

describe('limits', () => {
  test('a consumer that stops reading is dropped with 4008; another one receives every item', async () => {
    const slow = await paidStream();
    const reader = await paidStream();
    for (const c of [slow, reader]) {
      c.send({ type: 'subscribe', params: { category: 'tech' } });
      await c.next('subscribed');
    }
    slow.ws.pause();
    const news = svc.wires.get('news')!;
    const padding = 'x'.repeat(8 * 1024);
    const open = async () => Number(/^wires_stream_connections (\d+)$/m.exec(await (await svc.get('/metrics')).text())![1]);
    const before = await open();
    let sent = 0;
    // About 0.5 MiB every 250 ms, until the server has dropped the slow consumer. The sweep
    // looks once a second, so what piles up between two looks (about 2 MiB) stays below the
    // 4 MiB hard stop: the consumer meets the 1 MiB rule and its 4008, not the cut.
    const started = Date.now();
    while (Date.now() - started < 60_000 && (await open()) === before) {
      news.add(Array.from({ length: 60 }, () => item('tech', `Tech item ${sent++}`, { summary: padding })));
      await new Promise((r) => setTimeout(r, 250));
    }
    slow.ws.resume();
    const closed = await slow.closed;
    assert.equal(closed.code, 4008, `dropped with 4008 after ${sent} items`);
    assert.match(closed.reason, /too slow/);
    const got = (await reader.drain(500)).filter((m) => m.type === 'item');
    assert.equal(got.length, sent, 'the reading subscriber got every item, in order');
    assert.equal(got.at(-1).item.title, `Tech item ${sent - 1}`);
    reader.ws.close();
  });

  test('a burst past 4 MiB unread between two checks cuts the consumer at once, and the service goes on', async () => {
    const stuck = await paidStream();
    stuck.send({ type: 'subscribe', params: { category: 'business' } });
    await stuck.next('subscribed');
    stuck.ws.pause();
    // About 20 MB in one go: more than the kernel's socket buffers and 4 MiB besides, before
    // the sweep (once a second) could close it with 4008.
    const padding = 'y'.repeat(8 * 1024);
    svc.wires.get('news')!.add(Array.from({ length: 2500 }, (_, i) => item('business', `Burst item ${i}`, { summary: padding })));
    stuck.ws.resume();
    const closed = await Promise.race([stuck.closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the consumer was not cut within 10 s')), 10_000))]);
    assert.equal(closed.code, 1006, 'cut without a close frame: the socket, not the sweep');
    const after = await paidStream();
    after.send({ type: 'subscribe', params: { category: 'business' } });
    assert.equal((await after.next('subscribed')).type, 'subscribed', 'new streams are served');
    after.ws.close();
  });

  test('connections per server are capped with a clear 503', async () => {
    const small = await startTestService({ SETTLEMENT: 'optimistic', STREAM_MAX_CONNECTIONS: '1' });
    try {
      const at = `ws://127.0.0.1:${small.port}/stream?wire=news`;
      const one = await openStream(at, { 'PAYMENT-SIGNATURE': await pay() });
      const refusal = await refusedUpgrade(at, { 'PAYMENT-SIGNATURE': await pay() });
      assert.equal(refusal.status, 503);
      assert.equal(refusal.body.error.code, 'too_many_streams');
      assert.ok(refusal.headers['retry-after']);
      one.ws.close();
    } finally {
      await small.stop();
    }
  });
});

describe('on the devnet', () => {
  let devnet: Devnet;
  let paid: TestService;
  before(
    async () => {
      devnet = await startDevnet({ payers: 1 });
      paid = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
    },
    { timeout: 60_000 } as never,
  );
  after(async () => {
    await paid?.stop();
    await devnet?.stop();
  });

  test('a block is settled on chain once, for exactly its price, and the stream pushes', { timeout: 60_000 }, async () => {
    const chain = new ChainReader(devnet.rpcUrl, 10_000);
    const payer = devnet.payers[0]!;
    const [p0, t0] = [await chain.balanceOf(payer.address), await chain.balanceOf(devnet.payTo)];
    const header = encodePayment((await signPayment({ amount: NEWS_BLOCK, payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: `stream_${randomBytes(12).toString('hex')}` })).payload);
    const at = `ws://127.0.0.1:${paid.port}/stream?wire=news`;
    const c = await openStream(at, { 'PAYMENT-SIGNATURE': header });
    const first = await c.next('paid', 20_000);
    assert.equal(first.settlement.success, true);
    assert.match(first.settlement.transaction, /^0x[0-9a-f]{64}$/i);
    // The same payment again (a reconnect): the same block, no second transfer.
    const again = await openStream(at, { 'PAYMENT-SIGNATURE': header });
    assert.equal((await again.next('paid', 20_000)).paid_until, first.paid_until);
    assert.equal((await chain.balanceOf(payer.address)) - p0, -BigInt(NEWS_BLOCK));
    assert.equal((await chain.balanceOf(devnet.payTo)) - t0, BigInt(NEWS_BLOCK));
    c.send({ type: 'subscribe', params: { category: 'energy' } });
    await c.next('subscribed');
    paid.wires.get('news')!.add([item('energy', 'Oil prices rise')]);
    assert.equal((await c.next('item')).item.title, 'Oil prices rise');
    c.ws.close();
    again.ws.close();
  });
});
