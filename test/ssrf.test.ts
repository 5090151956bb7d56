/**
 * A feed may not make the service call inside its own network. Over real
 * loopback sockets: a redirect target or a WebSub hub that the content chose is refused when it
 * is loopback, private, link-local, unique-local, multicast, unspecified or reserved (also inside
 * IPv6, and as a name that resolves there), no request reaches the server listening there, the
 * refusal shows in the fetch result and in /sources, the URL the operator configured is still
 * fetched, and ALLOW_PRIVATE_DESTINATIONS=1 lets every such request through.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SOURCES } from '../src/catalog/index.js';
import { refusedAddress } from '../src/ingest/fetch/destination.js';
import { Fetcher, type FetcherOptions } from '../src/ingest/fetch/fetcher.js';
import { startPublisher, type Publisher } from './helpers/publisher.js';
import { startPollingService, type PollingService } from './helpers/service.js';
import { until } from './helpers/until.js';

describe('address classifier', () => {
  const refused: [string, RegExp][] = [
    ['127.0.0.1', /^loopback/],
    ['127.255.255.254', /^loopback/],
    ['::1', /^loopback/],
    ['10.1.2.3', /^private/],
    ['172.16.0.1', /^private/],
    ['172.31.255.255', /^private/],
    ['192.168.1.1', /^private/],
    ['100.64.0.1', /CGNAT/],
    ['100.127.255.255', /CGNAT/],
    ['169.254.169.254', /^link-local/],
    ['fe80::1', /^link-local/],
    ['FE80::1%eth0', /^link-local/],
    ['febf::1', /^link-local/],
    ['fec0::1', /^site-local/],
    ['fc00::1', /^unique-local/],
    ['fd12:3456::1', /^unique-local/],
    ['224.0.0.1', /^multicast/],
    ['239.255.255.250', /^multicast/],
    ['ff02::1', /^multicast/],
    ['0.0.0.0', /^unspecified/],
    ['0.1.2.3', /^unspecified/],
    ['::', /^unspecified/],
    ['240.0.0.1', /^reserved/],
    ['255.255.255.255', /broadcast/],
    ['::ffff:127.0.0.1', /^loopback address \(IPv4 127\.0\.0\.1 inside\)/],
    ['::ffff:7f00:1', /^loopback address \(IPv4 127\.0\.0\.1 inside\)/],
    ['::ffff:169.254.169.254', /^link-local .*169\.254\.169\.254/],
    ['::10.0.0.1', /^private .*10\.0\.0\.1/],
    ['64:ff9b::192.168.0.1', /^private .*192\.168\.0\.1/],
    ['64:ff9b:1::1', /NAT64/],
    ['2002:7f00:1::1', /^loopback .*127\.0\.0\.1/],
    ['localhost', /not an IP address/],
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '11.0.0.1',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.1',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81c::200e',
    'fbff::1',
    'fe7f::1',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
  ];
  for (const [address, why] of refused) test(`refuses ${address}`, () => assert.match(refusedAddress(address) ?? 'allowed', why));
  for (const address of allowed) test(`allows ${address}`, () => assert.equal(refusedAddress(address), null));
});

const OPTIONS: FetcherOptions = {
  userAgent: 'WiresTest/1.0 test@wires.invalid',
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  totalTimeoutMs: 3000,
  maxBodyBytes: 1024 * 1024,
  maxDecodedBytes: 2 * 1024 * 1024,
  maxRedirects: 3,
  retries: 0,
  retryBaseMs: 20,
};

/** A loopback server answering every request with a redirect to `?<location>`; it counts them. */
async function startRedirector(): Promise<{ url: (location: string) => string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    res.writeHead(302, { Location: decodeURIComponent(new URL(req.url!, 'http://x').search.slice(1)) }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/to`;
  return { url: (location) => `${base}?${encodeURIComponent(location)}`, hits: () => hits, close: () => new Promise((r) => server.close(() => r())) };
}

describe('fetcher: a redirect may not lead into the private network', () => {
  /** Listens on every loopback address, IPv4 and IPv6, and counts what reaches it. */
  let target: Server;
  let targetHits = 0;
  let port = 0;
  let redirector: Awaited<ReturnType<typeof startRedirector>>;
  let guarded: Fetcher;
  let allowing: Fetcher;

  before(async () => {
    target = createServer((_req, res) => {
      targetHits++;
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end('<rss><channel><title>inside</title></channel></rss>');
    });
    await new Promise<void>((r) => target.listen(0, '::', r));
    port = (target.address() as AddressInfo).port;
    redirector = await startRedirector();
    guarded = new Fetcher(OPTIONS);
    allowing = new Fetcher({ ...OPTIONS, allowPrivateDestinations: true });
  });
  after(async () => {
    await Promise.all([guarded.close(), allowing.close(), redirector.close()]);
    await new Promise((r) => target.close(r));
  });

  // Each of these reaches the loopback server above when followed.
  const reachable: [string, string][] = [
    ['loopback IPv4', '127.0.0.1'],
    ['loopback IPv4, short form', '127.1'],
    ['loopback IPv6', '[::1]'],
    ['IPv4-mapped IPv6', '[::ffff:127.0.0.1]'],
    ['unspecified IPv4', '0.0.0.0'],
    ['unspecified IPv6', '[::]'],
    ['a name that resolves to loopback', 'localhost'],
  ];
  for (const [what, host] of reachable) {
    test(`${what} (${host}): refused, nothing reaches the server; allowed by the setting`, async () => {
      const location = `http://${host}:${port}/feed`;
      const before = { target: targetHits, redirector: redirector.hits() };
      const res = await guarded.fetch({ url: redirector.url(location) });
      assert.equal(res.kind, 'error', JSON.stringify(res));
      assert.ok(res.kind === 'error');
      assert.equal(res.code, 'blocked_destination');
      assert.match(res.message, /^redirect to .* refused: (loopback|unspecified) address.*; set ALLOW_PRIVATE_DESTINATIONS=1 to allow$/);
      assert.equal(redirector.hits(), before.redirector + 1, 'the configured URL itself is fetched');
      assert.equal(targetHits, before.target, 'no request reached the loopback server');

      const ok = await allowing.fetch({ url: redirector.url(location) });
      assert.equal(ok.kind, 'ok', JSON.stringify(ok));
      assert.equal(targetHits, before.target + 1, 'with the setting on, the redirect is followed');
    });
  }

  // Nothing listens there; without the check these would be a connect timeout or a network error.
  const unreachable: [string, RegExp][] = [
    ['10.0.0.1', /private address/],
    ['172.16.5.4', /private address/],
    ['192.168.0.1', /private address/],
    ['100.64.0.1', /CGNAT/],
    ['169.254.169.254', /link-local address/],
    ['[fe80::1]', /link-local address/],
    ['[fd00::1]', /unique-local address/],
    ['224.0.0.1', /multicast address/],
    ['[ff02::1]', /multicast address/],
    ['240.0.0.1', /reserved/],
    ['[::ffff:10.0.0.1]', /private address \(IPv4 10\.0\.0\.1 inside\)/],
    ['[64:ff9b::a9fe:a9fe]', /link-local address \(IPv4 169\.254\.169\.254 inside\)/],
  ];
  for (const [host, why] of unreachable) {
    test(`${host}: refused at once as blocked_destination`, async () => {
      const res = await guarded.fetch({ url: redirector.url(`http://${host}/latest/meta-data/`) });
      assert.ok(res.kind === 'error', JSON.stringify(res));
      assert.equal(res.code, 'blocked_destination', res.message);
      assert.match(res.message, why);
      assert.equal(res.attempts, 1, 'a refusal is not retried');
    });
  }

  test('the URL the operator configured is fetched even on loopback', async () => {
    const before = targetHits;
    const res = await guarded.fetch({ url: `http://127.0.0.1:${port}/feed` });
    assert.equal(res.kind, 'ok', JSON.stringify(res));
    assert.equal(targetHits, before + 1);
  });
});

describe('service: hubs and redirects a feed names', () => {
  /** A "hub" and a feed on loopback, each counting requests. */
  let hubHits: string[];
  let hub: Server;
  let hubPort: number;
  let withHub: Publisher;
  let withLinkHub: Publisher;
  let inside: Publisher;
  let redirector: Awaited<ReturnType<typeof startRedirector>>;
  let plain: Publisher;

  before(async () => {
    hubHits = [];
    hub = createServer((req, res) => {
      hubHits.push(`${req.method} ${req.url}`);
      res.writeHead(202).end();
    });
    await new Promise<void>((r) => hub.listen(0, '::', r));
    hubPort = (hub.address() as AddressInfo).port;
    withHub = await startPublisher({ hub: `http://127.0.0.1:${hubPort}/admin/flush` });
    // The hub named only in a Link header, by a name that resolves to loopback.
    withLinkHub = await startPublisher({ headers: { Link: `<http://localhost:${hubPort}/hub>; rel="hub"` } });
    inside = await startPublisher();
    redirector = await startRedirector();
    plain = await startPublisher();
  });
  after(async () => {
    await Promise.all([withHub.close(), withLinkHub.close(), inside.close(), redirector.close(), plain.close()]);
    await new Promise((r) => hub.close(r));
  });

  async function run(allow: '0' | '1'): Promise<{ svc: PollingService; state: (id: string) => Promise<any> }> {
    const overrides: Record<string, string> = Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/closed']));
    overrides.techcrunch = withHub.url;
    overrides['npr-world'] = withLinkHub.url;
    overrides.theverge = redirector.url(inside.url.replace('127.0.0.1', 'localhost'));
    overrides.arstechnica = plain.url;
    // PUBLIC_URL set: push is on, so the service would subscribe to the hubs the feeds name.
    const svc = await startPollingService(overrides, { ALLOW_PRIVATE_DESTINATIONS: allow, PUBLIC_URL: 'http://127.0.0.1:1', USER_AGENT: 'Wires Test ops@example.com' });
    const state = async (id: string) => ((await (await fetch(`${svc.base}/sources`)).json()) as any[]).find((s) => s.id === id).state;
    return { svc, state };
  }

  test('off (the default): no request reaches a loopback hub or redirect target; /sources says why; other sources are unaffected', async () => {
    const hubBefore = hubHits.length;
    const insideBefore = inside.requests.length;
    const { svc, state } = await run('0');
    try {
      const hubbed = await until('the hub refusal', async () => {
        const st = await state('techcrunch');
        return st?.delivery?.state === 'refused' && st;
      });
      assert.equal(hubbed.delivery.hub, `http://127.0.0.1:${hubPort}/admin/flush`);
      assert.match(hubbed.delivery.reason, /^hub 127\.0\.0\.1 refused: loopback address; set ALLOW_PRIVATE_DESTINATIONS=1 to allow$/);
      assert.ok(hubbed.last_success, 'the feed itself (a configured URL on loopback) is polled');
      assert.equal(hubbed.consecutive_failures, 0);

      const linked = await until('the Link hub refusal', async () => {
        const st = await state('npr-world');
        return st?.delivery?.state === 'refused' && st;
      });
      assert.match(linked.delivery.reason, /^hub localhost \((127\.0\.0\.1|::1)\) refused: loopback address/);

      const redirected = await until('the redirect refusal', async () => {
        const st = await state('theverge');
        return st?.last_error && st;
      });
      assert.equal(redirected.last_error.code, 'blocked_destination');
      assert.match(redirected.last_error.message, /^redirect to localhost \((127\.0\.0\.1|::1)\) refused: loopback address; set ALLOW_PRIVATE_DESTINATIONS=1 to allow$/);
      assert.equal(redirected.last_success, null);

      const other = await until('the plain source', async () => {
        const st = await state('arstechnica');
        return st?.last_success && st;
      });
      assert.equal(other.failures, 0);
      assert.ok(other.items > 0);

      assert.deepEqual(hubHits.slice(hubBefore), [], 'no request reached the hub');
      assert.equal(inside.requests.length, insideBefore, 'no request reached the redirect target');
    } finally {
      await svc.service.stop();
    }
  });

  test('ALLOW_PRIVATE_DESTINATIONS=1: the hubs get their subscription requests and the redirect is followed', async () => {
    const hubBefore = hubHits.length;
    const { svc, state } = await run('1');
    try {
      await until('both subscription requests', () => hubHits.length >= hubBefore + 2);
      assert.deepEqual(hubHits.slice(hubBefore).sort(), ['POST /admin/flush', 'POST /hub']);
      assert.equal((await state('techcrunch')).delivery.state, 'requested');
      const redirected = await until('the redirected source', async () => {
        const st = await state('theverge');
        return st?.last_success && st;
      });
      assert.equal(redirected.last_error, null);
      assert.ok(inside.requests.length > 0, 'the redirect target was fetched');
    } finally {
      await svc.service.stop();
    }
  });
});
