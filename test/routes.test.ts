/**
 * Walks the whole route table derived from the catalogue over real HTTP on loopback.
 */
import assert from 'node:assert/strict';
import { declareDiscoveryExtension, validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { PAID_ROUTES, PREVIEW_ROUTES, REDIRECTS, ROUTES, WIRES } from '../src/catalog/index.js';
import { discoveryDeclaration } from '../src/pay/discovery.js';
import { USDC_BASE } from '../src/pay/offer.js';
import { PER_FILTER } from './helpers/sample-items.js';
import { PAY_TO, startTestService, type TestService } from './helpers/service.js';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
const ENVELOPE_KEYS = ['articles', 'count', 'freshest', 'query', 'since', 'took_ms'];
const ARTICLE_KEYS = ['age_minutes', 'category', 'published', 'relevance', 'source', 'summary', 'title', 'url'];
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc.stop());

async function json(path: string, init?: RequestInit): Promise<{ status: number; body: any; res: Response; text: string }> {
  const res = await svc.get(path, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, res, text };
}

/** The smallest valid query of a route: q where it is required. */
function baseQuery(path: string): string {
  const route = ROUTES.find((r) => r.path === path)!;
  return route.def.qRequired ? 'q=rate' : '';
}

function decodeHeader(value: string | null): any {
  assert.ok(value, 'header present');
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
}

describe('preview routes', () => {
  for (const route of PREVIEW_ROUTES) {
    const filterName = route.wire.filter.name;
    test(`${route.path} answers every ${filterName} value with the exact envelope`, async () => {
      for (const value of route.wire.filter.values) {
        const qs = [baseQuery(route.path), `${filterName}=${value}`].filter(Boolean).join('&');
        const { status, body, res, text } = await json(`${route.path}?${qs}`);
        assert.equal(status, 200, `${route.path}?${qs}: ${JSON.stringify(body)}`);
        assert.match(text, /,"took_ms":\d+\.\d{3},"freshest":/, 'took_ms as a plain number, no padding');
        assert.match(res.headers.get('content-type')!, /^application\/json/);
        assert.deepEqual(Object.keys(body).sort(), ENVELOPE_KEYS);
        assert.equal(body.count, body.articles.length);
        assert.equal(body.count, 3, 'seeded wires have more than 3 matches, the preview returns exactly 3');
        assert.equal(body.since, route.wire.retention);
        assert.ok(typeof body.took_ms === 'number' && body.took_ms >= 0);
        assert.match(body.freshest, ISO_UTC);
        for (const a of body.articles) {
          const expected = route.withSummary ? ARTICLE_KEYS : ARTICLE_KEYS.filter((k) => k !== 'summary');
          assert.deepEqual(Object.keys(a).sort(), expected);
          assert.equal(a.category, value);
          assert.match(a.published, ISO_UTC);
          assert.ok(Number.isInteger(a.age_minutes) && a.age_minutes >= 2, `age ${a.age_minutes}`);
          assert.ok(typeof a.relevance === 'number');
          assert.ok(a.url.startsWith('https://'));
        }
        // The newest item is first when nothing else decides, and `freshest` names it.
        if (!route.def.qRequired) assert.equal(body.freshest, body.articles[0].published);
      }
    });
  }

  test('the news preview omits summaries; other previews include them', async () => {
    const news = await json('/news/preview?q=rate');
    assert.ok(news.body.articles.length > 0);
    for (const a of news.body.articles) assert.equal('summary' in a, false);
    const cve = await json('/cve/preview');
    assert.match(cve.body.articles[0].summary, /Zürich “quoted” <text> & more\./);
  });

  test('limit on a preview is capped at 3', async () => {
    assert.equal((await json('/cve/preview?limit=2')).body.count, 2);
    const tooMany = await json('/cve/preview?limit=4');
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.error.param, 'limit');
  });

  test('q is echoed, + and %20 are spaces, and both find the same items', async () => {
    const plus = await json('/news/preview?q=rate+cut&category=markets');
    const pct = await json('/news/preview?q=rate%20cut&category=markets');
    assert.equal(plus.body.query, 'rate cut');
    assert.equal(pct.body.query, 'rate cut');
    assert.deepEqual(
      plus.body.articles.map((a: any) => a.url),
      pct.body.articles.map((a: any) => a.url),
    );
    assert.equal(plus.body.count, 3);
  });

  test('since narrows the window', async () => {
    // Seeded items are 2 min, 1 h 2 min, 2 h 2 min … old: 90m keeps two per filter value.
    const { body } = await json('/cve/preview?src=cisa&since=90m');
    assert.equal(body.since, '90m');
    assert.equal(body.count, 2);
    assert.equal((await json('/cve/preview?src=cisa&since=1m')).body.count, 0);
  });

  test('a query that matches nothing is an empty 200, freshest null', async () => {
    const { status, body } = await json('/news/preview?q=zzzunmatched');
    assert.equal(status, 200);
    assert.deepEqual(body.articles, []);
    assert.equal(body.count, 0);
    assert.equal(body.freshest, null);
  });

  test('contracts: q is a two-letter state code, either case', async () => {
    const ca = await json('/contracts/preview?q=ca&size=over-10m');
    assert.equal(ca.status, 200);
    assert.equal(ca.body.query, 'CA');
    assert.equal(ca.body.count, 3); // items 0, 2, 4 are in CA
    const tx = await json('/contracts/preview?q=TX&size=over-10m');
    assert.equal(tx.body.count, 2);
    const name = await json('/contracts/preview?q=California');
    assert.equal(name.status, 400);
    assert.equal(name.body.error.param, 'q');
    assert.ok(name.body.error.allowed.includes('CA'));
    assert.equal((await json('/contracts/preview?q=ZZ')).status, 400);
  });
});

describe('paid routes', () => {
  for (const route of PAID_ROUTES) {
    test(`${route.path} answers 402 with the x402 v2 offer`, async () => {
      const qs = baseQuery(route.path);
      const { status, body, res } = await json(`${route.path}${qs ? '?' + qs : ''}`);
      assert.equal(status, 402);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const offer = decodeHeader(res.headers.get('payment-required'));
      assert.equal(offer.x402Version, 2);
      assert.ok(offer.resource.url.endsWith(route.path));
      assert.deepEqual(offer.accepts, [
        {
          scheme: 'exact',
          network: 'eip155:8453',
          amount: route.def.price === '0.01' ? '10000' : '5000',
          asset: USDC_BASE,
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          extra: { name: 'USD Coin', version: '2' },
        },
      ]);
      // Declared optional: a client that sends an id may resend the same payment safely.
      assert.equal(offer.extensions['payment-identifier'].info.required, false);
      // The body carries the same offer as x402 v1 clients read it.
      assert.equal(body.x402Version, 1);
      assert.deepEqual(body.accepts, [
        {
          scheme: 'exact',
          network: 'base',
          maxAmountRequired: offer.accepts[0].amount,
          resource: offer.resource.url,
          description: offer.resource.description,
          mimeType: 'application/json',
          payTo: PAY_TO,
          maxTimeoutSeconds: 300,
          asset: USDC_BASE,
          extra: { name: 'USD Coin', version: '2' },
        },
      ]);
      assert.equal(body.error.code, 'payment_required');
      assert.equal(body.error.price, route.def.price);
      assert.equal(body.error.currency, 'USD');
      assert.equal(body.error.asset, 'USDC');
      assert.equal(body.error.network, 'eip155:8453');
      assert.equal(body.error.payTo, PAY_TO);
      assert.equal(body.error.preview, route.previewPath);
      // The preview it points at exists.
      assert.notEqual((await svc.get(route.previewPath + (route.def.qRequired ? '?q=rate' : ''))).status, 404);
    });
  }

  test('parameters are validated before payment is asked for', async () => {
    const bad = await json('/edgar/filings?form=bogus');
    assert.equal(bad.status, 400);
    assert.equal(bad.res.headers.get('payment-required'), null);
    const missing = await json('/news');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'missing_parameter');
    assert.equal(missing.body.error.param, 'q');
  });

  test('/headlines takes no q', async () => {
    const { status, body } = await json('/headlines?q=rate');
    assert.equal(status, 400);
    assert.equal(body.error.code, 'unknown_parameter');
    assert.equal((await json('/headlines?category=tech')).status, 402);
  });

  test('the price list states every paid route with the offer it sends', async () => {
    const { body } = await json('/.well-known/x402');
    assert.deepEqual(body.routes.map((r: any) => r.path).sort(), PAID_ROUTES.map((r) => r.path).sort());
    for (const entry of body.routes) {
      const route = PAID_ROUTES.find((r) => r.path === entry.path)!;
      const res = await svc.get(entry.path + (route.def.qRequired ? '?q=x' : ''));
      assert.deepEqual(decodeHeader(res.headers.get('payment-required')).accepts, entry.accepts);
      assert.equal(entry.price, route.def.price);
    }
  });

  test('every offer carries the x402 Bazaar discovery extension: its query parameters and the envelope it returns', async () => {
    const { body } = await json('/.well-known/x402');
    for (const route of PAID_ROUTES) {
      const res = await svc.get(route.path + (route.def.qRequired ? '?q=x' : ''));
      const offer = decodeHeader(res.headers.get('payment-required'));
      const bazaar = offer.extensions.bazaar;
      assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true }, route.path);
      // The library's own, for the same declaration, with the method its server hook adds.
      const declared = declareDiscoveryExtension(discoveryDeclaration(route)) as unknown as { bazaar: { info: { input: Record<string, unknown> } } };
      declared.bazaar.info.input.method = 'GET';
      assert.deepEqual(bazaar, JSON.parse(JSON.stringify(declared.bazaar)), route.path);
      assert.deepEqual(body.routes.find((r: any) => r.path === route.path).extensions.bazaar, bazaar, 'the price list carries the same');
      const { input } = bazaar.info;
      assert.equal(input.type, 'http');
      assert.equal(input.method, 'GET');
      const params = bazaar.schema.properties.input.properties.queryParams;
      assert.deepEqual(params.properties[route.wire.filter.name].enum, route.wire.filter.values, route.path);
      assert.deepEqual(params.required, route.def.qRequired ? ['q'] : [], route.path);
      assert.equal(params.properties.limit.maximum, route.def.maxLimit);
      // The example request is a valid query: it answers 402 (paid), not 400.
      const example = new URLSearchParams(Object.entries(input.queryParams).map(([k, v]) => [k, String(v)])).toString();
      assert.equal((await svc.get(`${route.path}?${example}`)).status, 402, `${route.path}?${example}`);
      assert.deepEqual(bazaar.info.output.example.articles[0].category, route.wire.filter.values[0]);
    }
  });
});

describe('presented payments', () => {
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
  const payload = (over: Record<string, unknown> = {}) => ({
    x402Version: 2,
    accepted: { scheme: 'exact', network: 'eip155:8453', amount: '5000', asset: USDC_BASE, payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' } },
    payload: {
      signature: '0x' + 'ab'.repeat(65),
      authorization: { from: '0x' + '11'.repeat(20), to: PAY_TO, value: '5000', validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 300), nonce: '0x' + '22'.repeat(32) },
    },
    ...over,
  });
  const pay = (header: string, value: string) => json('/cve/latest', { headers: { [header]: value } });

  test('an unreadable payment header is a 400 invalid_payment, never data', async () => {
    // `e30=` is base64 of `{}`: JSON, but no x402 payload.
    for (const value of ['!!!not base64!!!', b64('not json'), b64([1, 2]), 'e30=', b64({ x402Version: 2 }), 'A'.repeat(9000)]) {
      const { status, body } = await pay('PAYMENT-SIGNATURE', value);
      assert.equal(status, 400, value.slice(0, 40));
      assert.equal(body.error.code, 'invalid_payment');
      assert.equal(body.articles, undefined);
    }
  });

  test("another version, scheme or network is a 402 with the reason (also in the fresh offer), and a failed settlement response in the version's header", async () => {
    const cases: [string, unknown, string][] = [
      ['X-PAYMENT', { x402Version: 3, scheme: 'exact', network: 'base', payload: {} }, 'invalid_x402_version'],
      ['X-PAYMENT', { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: payload().payload }, 'invalid_network'],
      ['X-PAYMENT', { x402Version: 1, scheme: 'upto', network: 'base', payload: payload().payload }, 'invalid_scheme'],
      ['PAYMENT', payload({ accepted: { ...payload().accepted, network: 'eip155:84532' } }), 'invalid_network'],
      ['PAYMENT-SIGNATURE', payload({ accepted: { ...payload().accepted, scheme: 'upto' } }), 'invalid_scheme'],
    ];
    for (const [header, value, reason] of cases) {
      const { status, body, res } = await pay(header, b64(value));
      assert.equal(status, 402, reason);
      assert.equal(body.error.code, reason);
      assert.equal(body.error.preview, '/cve/preview');
      // v1 clients read these from the body.
      assert.equal(body.x402Version, 1);
      assert.equal(body.accepts[0].maxAmountRequired, '5000');
      const offer = decodeHeader(res.headers.get('payment-required'));
      assert.equal(offer.accepts[0].amount, '5000');
      assert.equal(offer.error, body.error.message, 'the fresh offer names the actual reason');
      const v1 = (value as { x402Version: number }).x402Version === 1;
      const settlement = decodeHeader(res.headers.get(v1 ? 'x-payment-response' : 'payment-response'));
      assert.equal(settlement.success, false);
      assert.equal(settlement.errorReason, reason);
      assert.equal(settlement.network, v1 ? 'base' : 'eip155:8453');
    }
  });

  test('a well-formed payment with a forged signature is a 402 with the x402 reason, never data', async () => {
    const { status, body, res } = await pay('PAYMENT-SIGNATURE', b64(payload()));
    assert.equal(status, 402);
    assert.equal(body.error.code, 'invalid_exact_evm_payload_signature');
    assert.equal(body.articles, undefined);
    assert.equal(decodeHeader(res.headers.get('payment-response')).success, false);
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  test('HEAD on a paid route shows the offer and never takes a payment', async () => {
    const res = await svc.get('/cve/latest', { method: 'HEAD', headers: { 'PAYMENT-SIGNATURE': b64(payload()) } });
    assert.equal(res.status, 402);
    assert.ok(res.headers.get('payment-required'));
    assert.equal(res.headers.get('payment-response'), null);
  });
});

describe('parameter validation', () => {
  // Each case: a query string that must be rejected, and the parameter the error names.
  function badCases(path: string): [string, string][] {
    const route = ROUTES.find((r) => r.path === path)!;
    const f = route.wire.filter.name;
    const cases: [string, string][] = [
      ['since=abc', 'since'],
      ['since=10', 'since'],
      ['since=0m', 'since'],
      ['since=-5m', 'since'],
      ['since=1.5h', 'since'],
      ['since=100000d', 'since'],
      ['since=99999999999999999999999d', 'since'],
      ['limit=0', 'limit'],
      ['limit=51', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=-1', 'limit'],
      [`${f}=nope`, f],
      [`${f}=${route.wire.filter.values[0]!.toUpperCase()}X`, f],
      ['bogus=1', 'bogus'],
      [`${f}=`, f],
      ['limit=5&limit=6', 'limit'],
      ['since=%E0%A4%A', 'since'],
    ];
    if (route.def.q === 'text') cases.push(['q=' + 'x'.repeat(201), 'q'], ['q=%20%20', 'q'], ['q=!!!', 'q']);
    return cases;
  }

  for (const route of ROUTES) {
    test(`${route.path} rejects each bad value with a 400 naming the parameter`, async () => {
      for (const [qs, param] of badCases(route.path)) {
        const base = baseQuery(route.path);
        const full = base && !qs.startsWith('q=') ? `${base}&${qs}` : qs;
        const { status, body } = await json(`${route.path}?${full}`);
        assert.equal(status, 400, `${route.path}?${full} → ${status} ${JSON.stringify(body)}`);
        assert.equal(body.error.param, param, `${route.path}?${full}: ${JSON.stringify(body)}`);
        assert.equal(typeof body.error.code, 'string');
        assert.equal(typeof body.error.message, 'string');
      }
    });
  }

  test('a bad filter value lists the allowed values', async () => {
    const { body } = await json('/news/preview?q=x&category=Markets');
    assert.equal(body.error.code, 'invalid_parameter');
    assert.deepEqual(body.error.allowed, WIRES[0]!.filter.values);
  });

  test('since beyond the wire retention is refused; at the retention it is accepted', async () => {
    assert.equal((await json('/news/preview?q=x&since=73h')).status, 400);
    assert.equal((await json('/news/preview?q=x&since=72h')).status, 200);
    assert.equal((await json('/news/preview?q=x&since=3d')).status, 200);
  });

  test('a query string beyond 2 KiB is refused with 414', async () => {
    const { status, body } = await json('/cve/preview?q=' + 'a'.repeat(3000));
    assert.equal(status, 414);
    assert.equal(body.error.code, 'query_too_long');
  });

  test('empty pairs and a trailing & are harmless', async () => {
    assert.equal((await json('/cve/preview?&src=cisa&&')).status, 200);
  });
});

describe('routing', () => {
  test('unknown route is a JSON 404', async () => {
    const { status, body, res } = await json('/nope');
    assert.equal(status, 404);
    assert.match(res.headers.get('content-type')!, /application\/json/);
    assert.equal(body.error.code, 'not_found');
  });

  test('non-GET is 405 with Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const { status, body, res } = await json('/cve/preview', { method, body: method === 'DELETE' ? undefined : '{}' });
      assert.equal(status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
      assert.equal(body.error.code, 'method_not_allowed');
    }
  });

  test('HEAD answers like GET without a body', async () => {
    const get = await svc.get('/openapi.json');
    const getBody = await get.text();
    const head = await svc.get('/openapi.json', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)));
    assert.equal(await head.text(), '');
    const paid = await svc.get('/cve/latest', { method: 'HEAD' });
    assert.equal(paid.status, 402);
    assert.ok(paid.headers.get('payment-required'));
  });

  test('/quakes/preview redirects to /quake/preview keeping the query', async () => {
    const res = await svc.get('/quakes/preview?mag=m4.5&q=rate');
    assert.equal(res.status, 308);
    assert.equal(res.headers.get('location'), '/quake/preview?mag=m4.5&q=rate');
    const followed = await fetch(svc.base + '/quakes/preview?mag=m4.5');
    assert.equal(followed.status, 200);
    assert.equal((await followed.json()).articles[0].category, 'm4.5');
    assert.equal(REDIRECTS.get('/quakes/preview'), '/quake/preview');
  });

  test('CORS preflight is answered and the payment headers are exposed', async () => {
    const res = await svc.get('/news', { method: 'OPTIONS' });
    assert.equal(res.status, 204);
    assert.match(res.headers.get('access-control-allow-headers')!, /PAYMENT-SIGNATURE/);
    const paid = await svc.get('/cve/latest');
    assert.match(paid.headers.get('access-control-expose-headers')!, /PAYMENT-REQUIRED/);
  });
});

describe('documents', () => {
  test('/llms-full.txt names every route', async () => {
    const res = await svc.get('/llms-full.txt');
    assert.match(res.headers.get('content-type')!, /^text\/plain/);
    const text = await res.text();
    for (const route of ROUTES) assert.ok(text.includes(`GET ${route.path} `), route.path);
    for (const wire of WIRES) for (const v of wire.filter.values) assert.ok(text.includes(v), v);
  });

  test('every path in /openapi.json exists on the server', async () => {
    const { body } = await json('/openapi.json');
    assert.equal(body.openapi, '3.0.3');
    assert.equal(body.info.version, '3.0.0');
    const paths = Object.keys(body.paths);
    assert.ok(paths.length >= ROUTES.length);
    for (const path of paths) {
      const route = ROUTES.find((r) => r.path === path);
      const res = await svc.get(path + (route?.def.qRequired ? '?q=x' : ''));
      assert.notEqual(res.status, 404, path);
      assert.ok(res.status < 500, path);
    }
  });

  test('/mcp lists the catalogue and no items', async () => {
    const { body } = await json('/mcp');
    assert.deepEqual(
      body.wires.map((w: any) => w.id),
      WIRES.map((w) => w.id),
    );
    const news = body.wires.find((w: any) => w.id === 'news');
    assert.deepEqual(news.filter.values, WIRES[0]!.filter.values);
    assert.deepEqual(
      news.paid.map((p: any) => [p.path, p.price]),
      [
        ['/news', '0.005'],
        ['/headlines', '0.005'],
      ],
    );
    assert.equal(news.preview.path, '/news/preview');
    assert.equal(JSON.stringify(body).includes('example.com/sample'), false, 'no items');
  });

  test('/sources lists every source with its wire, filter, format, url and tier', async () => {
    const { body } = await json('/sources');
    const total = WIRES.reduce((n, w) => n + w.sources.length, 0);
    assert.equal(body.length, total);
    for (const s of body) {
      assert.ok(
        ROUTES.some((r) => r.path === s.wire && r.kind === 'paid'),
        s.wire,
      );
      for (const key of ['id', 'format', 'url', 'tier']) assert.equal(typeof s[key], 'string', key);
      // One filter value, or (EDGAR) null and the values its entries are routed to.
      assert.ok(Array.isArray(s.filters) && s.filters.length > 0 && s.filters.every((f: string) => WIRES.some((w) => w.filter.values.includes(f))), s.id);
      assert.ok(s.filter === null ? s.filters.length > 1 : s.filters[0] === s.filter, s.id);
    }
  });

  test('/health reports tiers, items per wire and the x402 state', async () => {
    const { body, res } = await json('/health');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    // This service's facilitator URL has nothing behind it: it says so.
    assert.equal(body.status, 'degraded');
    assert.match(body.x402.problem, /facilitator .* is unreachable/);
    assert.deepEqual(body.x402.settlement, { mode: 'sync', settler: 'facilitator', store: 'local', pending: 0, settled: 0, failed: 0, oldest_pending_sec: null });
    assert.equal(body.last_poll, null);
    const tiers = body.tiers;
    assert.equal(tiers.breaking + tiers.timely + tiers.sparse, WIRES.length);
    for (const w of WIRES) assert.equal(body.wires[w.id].items, w.filter.values.length * PER_FILTER, w.id);
    assert.equal(body.x402.configured, true);
    assert.equal(body.x402.pay_to, PAY_TO);
    assert.equal(`npm:@btc-vision/uwebsockets.js@${body.server.uws.version}`, PACKAGE.dependencies['uWebSockets.js'], 'the pinned uWebSockets.js release serves');
  });
});

describe('without PAY_TO_ADDRESS', () => {
  let bare: TestService;
  before(async () => {
    bare = await startTestService({ PAY_TO_ADDRESS: 'not-an-address' });
  });
  after(() => bare.stop());

  test('paid routes answer 503 with a clear message; previews keep working', async () => {
    const res = await bare.get('/cve/latest');
    assert.equal(res.status, 503);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, 'payments_unavailable');
    assert.match(body.error.message, /PAY_TO_ADDRESS/);
    assert.equal((await bare.get('/cve/preview')).status, 200);
    const health = (await (await bare.get('/health')).json()) as any;
    assert.equal(health.status, 'degraded');
    assert.equal(health.x402.configured, false);
  });

  test('a payee without a way to settle is not configured either', async () => {
    const noSettler = await startTestService({ FACILITATOR_URL: '' });
    try {
      const res = await noSettler.get('/cve/latest');
      assert.equal(res.status, 503);
      assert.match(((await res.json()) as any).error.message, /FACILITATOR_URL/);
    } finally {
      await noSettler.stop();
    }
  });
});
