/**
 * Freshness, over real loopback HTTP with the service as `npm start` runs it:
 *
 *   - EDGAR: one listing of every form, polled every 2 s; a burst of 300 filings pages back
 *     until it reaches the previous poll, and nothing is missed; SEC's rate is never exceeded;
 *   - WebSub: the service subscribes to a hub that behaves as the W3C Recommendation says
 *     (test/helpers/websub-hub.ts), a publish reaches the wire without a poll, and every bad
 *     notification or verification is refused and changes nothing;
 *   - adaptive polling: an interval falls to the floor when a source changes, grows when it
 *     does not, honours max-age, and one host's feeds share its request budget.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { SOURCES } from '../src/catalog/index.js';
import { freePort } from './helpers/loopback.js';
import { startEdgarSim, type EdgarSim, type SimFiling } from './helpers/edgar-sim.js';
import { startPollingService, type PollingService } from './helpers/service.js';
import { startPublisher, type Publisher } from './helpers/publisher.js';
import { startWebSubHub, type WebSubHub } from './helpers/websub-hub.js';

const EDGAR_ROUTES = SOURCES.find((s) => s.id === 'edgar')!.routes!;
/** The filter value a form is sold under, or undefined. */
function formFilter(form: string): string | undefined {
  const base = form.replace(/\/A$/, '');
  return Object.entries(EDGAR_ROUTES).find(([, forms]) => forms.includes(base))?.[0];
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const CNBC = SOURCES.filter((s) => s.url.includes('search.cnbc.com')).map((s) => s.id);

describe('freshness with the shipped defaults', () => {
  let sim: EdgarSim;
  let hub: WebSubHub;
  let refusingHub: WebSubHub;
  let shortHub: WebSubHub;
  let silentHub: WebSubHub;
  let renewed: Publisher;
  let linked: Publisher;
  let limited: Server;
  let silenced: Publisher;
  let pushed: Publisher;
  let refused: Publisher;
  let changing: Publisher;
  let cached: Publisher;
  let cnbc: Publisher;
  let run: PollingService;
  let port: number;
  const coindesk = readFileSync(new URL('../../fixtures/real/coindesk-rss-2026-08-11.xml', import.meta.url));
  let coindeskServer: Server;
  let initial: SimFiling[];

  before(async () => {
    sim = await startEdgarSim({ seed: 7 });
    hub = await startWebSubHub({ algorithm: 'sha1' });
    refusingHub = await startWebSubHub({ refuseWith: 500 });
    shortHub = await startWebSubHub({ maxLeaseSeconds: 3, defaultLeaseSeconds: 3 });
    silentHub = await startWebSubHub();
    renewed = await startPublisher({ hub: shortHub.url });
    silenced = await startPublisher({ hub: silentHub.url });
    // Discovery from HTTP Link headers only (no links in the document): the topic is the URL polled.
    linked = await startPublisher({ headers: { Link: `<${hub.url}>; rel="hub"` } });
    // A host that rate-limits: 429 with a Retry-After beyond the fetch deadline, so the fetch gives up at once.
    limited = createServer((_req, res) => res.writeHead(429, { 'Retry-After': '120' }).end());
    await new Promise<void>((r) => limited.listen(0, '127.0.0.1', r));
    pushed = await startPublisher({ hub: hub.url });
    refused = await startPublisher({ hub: refusingHub.url });
    changing = await startPublisher();
    cached = await startPublisher({ headers: { 'Cache-Control': 'public, max-age=3' }, newOnEveryRequest: true });
    cnbc = await startPublisher();
    coindeskServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end(coindesk));
    await new Promise<void>((r) => coindeskServer.listen(0, '127.0.0.1', r));
    initial = sim.publishMany(40);
    port = await freePort();
    const overrides: Record<string, string> = Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/closed']));
    overrides.edgar = sim.url;
    overrides.techcrunch = pushed.url;
    overrides.theverge = refused.url;
    overrides.arstechnica = renewed.url;
    overrides['bbc-technology'] = silenced.url;
    overrides['npr-world'] = linked.url;
    overrides.oilprice = `http://127.0.0.1:${(limited.address() as AddressInfo).port}/rss`;
    overrides['yahoo-finance'] = changing.url;
    overrides['bbc-world'] = cached.url;
    overrides['news-coindesk'] = `http://127.0.0.1:${(coindeskServer.address() as AddressInfo).port}/rss`;
    for (const id of CNBC) overrides[id] = `${cnbc.url}?${id}`;
    run = await startPollingService(overrides, {
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      USER_AGENT: 'Wires Test ops@example.com',
      POLL_FLOOR_SEC: '1',
      POLL_INTERVAL_SEC: '4',
    });
  });

  after(async () => {
    await run?.service.stop();
    await Promise.all([sim, hub, refusingHub, shortHub, silentHub, pushed, refused, renewed, silenced, linked, changing, cached, cnbc].map((x) => x?.close()));
    coindeskServer?.close();
    limited?.close();
  });

  const sources = async () => (await (await fetch(`${run.base}/sources`)).json()) as any[];
  const state = async (id: string) => (await sources()).find((s) => s.id === id).state;
  const edgar = () => run.service.wires.get('edgar')!;

  test('EDGAR: every sold form of one listing reaches its filter value; Form 4 is titled with the issuer and found by the insider', async () => {
    const sold = initial.filter((f) => formFilter(f.form));
    await until('the first filings', () => sold.every((f) => edgar().get(formFilter(f.form)!, f.accession)));
    for (const f of sold) {
      const item = edgar().get(formFilter(f.form)!, f.accession)!;
      if (f.form === '4') {
        assert.ok(item.title.startsWith(`4 - ${f.company}`), item.title);
        assert.ok(item.summary.includes(f.reporting!.name), item.summary);
      }
    }
    const st = await state('edgar');
    assert.ok(st.last_document.dropped > 0, 'forms the wire does not sell are counted');
    assert.match(st.last_document.drop_reason, /a form the wire does not sell/);
    assert.equal(st.consecutive_failures, 0);
    assert.equal(st.freshness.interval_sec, 2);
    assert.deepEqual(st.freshness.budget, { host: 'sec.gov', per_second: 5 });
    const health = await (await fetch(`${run.base}/health`)).json();
    assert.ok(health.edgar.newest_accepted && health.edgar.seen_at, JSON.stringify(health.edgar));
  });

  test('EDGAR: a burst of 300 filings in the second of the last one held pages back to it, misses nothing, never over SEC’s rate', async () => {
    // Accepted in the same second as the newest filing already held: times alone cannot tell
    // where the previous poll ended.
    const burst = Array.from({ length: 300 }, () => sim.publish({ acceptedMs: initial.at(-1)!.acceptedMs }));
    const sold = burst.filter((f) => formFilter(f.form));
    const missing = () => sold.filter((f) => !edgar().get(formFilter(f.form)!, f.accession));
    await until('every filing of the burst', () => missing().length === 0, 20_000).catch(async (err) =>
      assert.fail(`${err.message}: ${missing().length} of ${sold.length} missing; EDGAR: ${JSON.stringify(await state('edgar'))}; requests ${JSON.stringify(sim.requests.slice(-8))}`),
    );
    const st = await state('edgar');
    assert.ok(st.freshness.pages >= 3, `pages: ${st.freshness.pages}`);
    assert.equal(st.freshness.paging_gaps, 0);
    assert.ok(
      sim.requests.every((r) => r.status === 200),
      'SEC refused nothing',
    );
    assert.ok(sim.maxPerSecond() <= 5, `at most 5 requests in any second (SEC allows 10): ${sim.maxPerSecond()}`);
    assert.ok(sim.requests.some((r) => r.start === 200));
  });

  test('WebSub: subscribed with a callback and secret of its own; a publish reaches the wire without a poll', async () => {
    const sub = await hub.waitForSubscription(pushed.url, 10_000);
    assert.equal(sub.callback, `http://127.0.0.1:${port}/websub/techcrunch`);
    assert.ok(sub.secret && sub.secret.length >= 32);
    const st = await until('push mode', async () => {
      const s = await state('techcrunch');
      return s.delivery.mode === 'push' && s;
    });
    assert.equal(st.delivery.hub, hub.url);
    assert.ok(Date.parse(st.delivery.lease_expires) > Date.now());
    assert.equal(st.freshness.interval_sec, 600, 'polled only as a check');
    const polls = st.polls;
    pushed.add('Pushed story about fusion');
    const statuses = await hub.publish(pushed.url);
    assert.deepEqual(statuses, [202]);
    const news = run.service.wires.get('news')!;
    await until('the pushed item', () => news.get('tech', 'Pushed story about fusion'), 5_000);
    const after = await state('techcrunch');
    assert.equal(after.polls, polls, 'no poll brought it');
    assert.equal(after.delivery.notifications, 1);
    assert.ok(after.delivery.last_notification);
  });

  test('WebSub: forged, unsigned, mistopicked, oversized and unasked-for notifications and verifications are refused and change nothing', async () => {
    const news = run.service.wires.get('news')!;
    const before = news.size;
    const doc = `<?xml version="1.0"?><rss version="2.0"><channel><title>x</title><link>https://example.com/</link><item><title>Forged story</title><link>https://example.com/forged</link><guid>forged</guid></item></channel></rss>`;
    assert.deepEqual(await hub.distribute(pushed.url, doc, 'application/rss+xml', { secret: 'not-the-secret' }), [403]);
    assert.deepEqual(await hub.distribute(pushed.url, doc, 'application/rss+xml', { secret: null }), [403]);
    const callback = `http://127.0.0.1:${port}/websub/techcrunch`;
    // Signed with the right secret, but for another topic.
    const { createHmac } = await import('node:crypto');
    const secret = hub.subscriptions().find((s) => s.topic === pushed.url)!.secret!;
    const signed = (body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const other = await fetch(callback, {
      method: 'POST',
      headers: { 'content-type': 'application/rss+xml', 'x-hub-signature': signed(doc), link: '<https://elsewhere.example/feed>; rel="self"' },
      body: doc,
    });
    assert.equal(other.status, 400);
    assert.equal((await other.json()).error, 'topic_mismatch');
    // A source nobody subscribed, with a valid-looking signature.
    const unknown = await fetch(`http://127.0.0.1:${port}/websub/bbc-world`, { method: 'POST', headers: { 'x-hub-signature': signed(doc) }, body: doc });
    assert.equal(unknown.status, 404);
    // A verification for a topic never asked for: no challenge echoed.
    const verify = await fetch(`${callback}?hub.mode=subscribe&hub.topic=${encodeURIComponent('https://evil.example/')}&hub.challenge=abc&hub.lease_seconds=60`);
    assert.equal(verify.status, 404);
    assert.notEqual(await verify.text(), 'abc');
    const unsub = await fetch(`${callback}?hub.mode=unsubscribe&hub.topic=${encodeURIComponent(pushed.url)}&hub.challenge=abc`);
    assert.equal(unsub.status, 404, 'an unsubscribe nobody asked for is not confirmed');
    // An oversized body is refused from its Content-Length, unread.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`POST /websub/techcrunch HTTP/1.1\r\nHost: x\r\nContent-Length: 40000000\r\nX-Hub-Signature: sha1=00\r\n\r\n<rss>`));
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), 3000);
    });
    assert.match(answer, /^HTTP\/1\.1 413/);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(news.size, before);
    assert.equal(news.get('tech', 'forged'), undefined);
    const st = await state('techcrunch');
    assert.equal(st.delivery.mode, 'push', 'the subscription holds');
    assert.ok(st.delivery.refused_notifications >= 3);
    const health = await fetch(`${run.base}/health`);
    assert.equal(health.status, 200, 'the service is up');
  });

  test('WebSub: a hub that refuses, or a broken hub link (CoinDesk’s href="true"), leaves the source on polling, with the reason', async () => {
    const st = await until('refusal', async () => {
      const s = await state('theverge');
      return s.delivery.state === 'refused' && s;
    });
    assert.equal(st.delivery.mode, 'poll');
    assert.match(st.delivery.reason, /HTTP 500/);
    const cd = await until('unusable', async () => {
      const s = await state('news-coindesk');
      return s.delivery.state === 'unusable' && s;
    });
    assert.match(cd.delivery.reason, /not an http\(s\) URL: "true"/);
    assert.ok(cd.freshness.interval_sec <= 4);
  });

  test('WebSub: a hub named only in a Link header is found too, for the URL polled', async () => {
    const sub = await hub.waitForSubscription(linked.url, 10_000);
    assert.equal(sub.callback, `http://127.0.0.1:${port}/websub/npr-world`);
    await until('push', async () => (await state('npr-world')).delivery.mode === 'push');
  });

  test('a 429 with Retry-After: the source waits as asked and slows down', async () => {
    const st = await until('the 429', async () => {
      const s = await state('oilprice');
      return s.last_error?.status === 429 && s;
    });
    assert.ok(Date.parse(st.next_poll_after) - Date.now() > 60_000, `next poll after ${st.next_poll_after}`);
    assert.equal(st.freshness.interval_reason, 'asked to slow down (HTTP 429)');
    assert.equal(st.freshness.interval_sec, 2, 'the floor doubled (POLL_FLOOR_SEC=1)');
  });

  test('WebSub: a subscription is renewed before its lease ends', async () => {
    await shortHub.waitForSubscription(renewed.url, 10_000);
    const verified = () => shortHub.events.filter((e) => e.kind === 'verified' && e.topic === renewed.url).length;
    const before = verified();
    const first = Date.parse((await state('arstechnica')).delivery.lease_expires);
    // The hub grants 3 s; the service renews at 80 % of it, again and again.
    await until('a renewal', () => verified() > before, 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const st = await state('arstechnica');
    assert.equal(st.delivery.mode, 'push');
    assert.ok(Date.parse(st.delivery.lease_expires) > first, 'the lease moved on');
  });

  test('WebSub: a hub that stops delivering is noticed by the check polls, and the source goes back to polling', async () => {
    await silentHub.waitForSubscription(silenced.url, 10_000);
    await until('push', async () => (await state('bbc-technology')).delivery.mode === 'push');
    silentHub.set({ silent: true });
    // Two check polls in a row find stories the hub did not deliver (forced here: they come every 10 minutes).
    for (const n of [1, 2]) {
      silenced.add(`Undelivered story ${n}`);
      await run.service.scheduler!.runOnce();
    }
    const st = await state('bbc-technology');
    assert.equal(st.delivery.mode, 'poll');
    assert.equal(st.delivery.state, 'silent');
    assert.match(st.delivery.reason, /did not deliver/);
    assert.ok(st.freshness.interval_sec <= 4, `back on adaptive polling: ${st.freshness.interval_sec} s`);
    assert.ok(run.service.wires.get('news')!.get('tech', 'Undelivered story 2'), 'the check poll brought the story');
  });

  test('adaptive: a source that changes is polled at the floor, one that stops changing slows to the ceiling; max-age is honoured', async () => {
    let n = 0;
    const ticker = setInterval(() => changing.add(`Changing story ${n++}`), 400);
    try {
      const st = await until('the floor', async () => {
        const s = await state('yahoo-finance');
        return s.freshness.interval_sec === 1 && s.freshness.interval_reason === 'new items in the last poll' && s;
      });
      assert.equal(st.freshness.floor_sec, 1);
    } finally {
      clearInterval(ticker);
    }
    const quiet = await until(
      'the ceiling',
      async () => {
        const s = await state('yahoo-finance');
        return s.freshness.interval_sec === 4 && s;
      },
      20_000,
    );
    assert.match(quiet.freshness.interval_reason, /no new items for \d+ s/);
    const c = await until('max-age', async () => {
      const s = await state('bbc-world');
      return s.polls >= 2 && s;
    });
    assert.equal(c.freshness.interval_sec, 3);
    assert.match(c.freshness.interval_reason, /max-age \(3 s\)/);
  });

  test('one host’s feeds share its budget: CNBC’s six feeds, each due every second, get one request a second between them', async () => {
    await new Promise((r) => setTimeout(r, 3000));
    const times = cnbc.requests.map((r) => r.at).sort((a, b) => a - b);
    const seconds = (times.at(-1)! - times[0]!) / 1000;
    assert.ok(times.length >= 6, `${times.length} requests`);
    // Each is started a second after the one before; the host sees them with the jitter of a worker thread and loopback.
    assert.ok(times.length <= Math.floor(seconds) + 2, `${times.length} requests in ${seconds.toFixed(1)} s`);
    for (let i = 1; i < times.length; i++) assert.ok(times[i]! - times[i - 1]! >= 700, `requests ${i - 1} and ${i} ${Math.round(times[i]! - times[i - 1]!)} ms apart`);
  });
});
