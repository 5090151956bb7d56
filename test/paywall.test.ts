/**
 * The paywall page a browser gets from a paid route called without payment (src/pay/paywall.ts).
 * Checked over HTTP and in headless Chromium (Debian's `chromium`, driven by puppeteer-core).
 * The page renders the offer: the price, the atomic amount, network, asset, payTo, the resource
 * URL and the free preview. It has no page errors and does not pay. API clients still get the
 * JSON 402, and the PAYMENT-REQUIRED header comes with both. The screenshot goes to
 * test-artifacts/paywall.png.
 *
 * Without chromium the browser part is skipped locally (install it with
 * `bash scripts/install-system-deps.sh`). In CI (`CI` set) a missing browser fails it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, ConsoleMessage } from 'puppeteer-core';
import { ROUTE_BY_PATH } from '../src/catalog/index.js';
import { buildOffer, NETWORK, USDC_BASE, type PaymentRequired } from '../src/pay/offer.js';
import { atomicToDecimal, buildPaywallPage } from '../src/pay/paywall.js';
import { privateKeyToAccount } from 'viem/accounts';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { launchChromium, SKIP_WITHOUT_CHROMIUM } from './helpers/chromium.js';
import { PAY_TO, startTestService, type TestService } from './helpers/service.js';

const SKIP_BROWSER = SKIP_WITHOUT_CHROMIUM;

/** Every wait in this file is bounded by this (ms). */
const WAIT = 15_000;
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
const PUBLIC_URL = 'https://wires.example';
const PATH = '/cve/latest';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

function decodeHeader(value: string | null): PaymentRequired {
  assert.ok(value, 'PAYMENT-REQUIRED header');
  return JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as PaymentRequired;
}

describe('paywall page (no service)', () => {
  test('atomic amounts are shown exactly', () => {
    assert.equal(atomicToDecimal('5000'), '0.005');
    assert.equal(atomicToDecimal('10000'), '0.01');
    assert.equal(atomicToDecimal('1000000'), '1');
    assert.equal(atomicToDecimal('1230000'), '1.23');
    assert.equal(atomicToDecimal('1'), '0.000001');
    assert.equal(atomicToDecimal('0'), '0');
    assert.throws(() => atomicToDecimal('1.5'));
  });

  test('everything inserted is escaped, and the CSP allows exactly its one style and its one script', () => {
    const route = ROUTE_BY_PATH.get(PATH)!;
    const hostile = 'https://wires.example/a&b"c<d>\'e';
    const { html, csp } = buildPaywallPage(buildOffer(route, PAY_TO, hostile, 300));
    assert.ok(!html.includes(hostile), 'the raw URL never appears');
    assert.ok(html.includes('https://wires.example/a&#38;b&#34;c&#60;d&#62;&#39;e/cve/latest'), 'escaped where inserted');
    assert.doesNotMatch(html, /<d>/);
    assert.doesNotMatch(html, /\s(src|href)="(https?:)?\/\//i, 'no external assets or links');
    // The offer reaches the script as data, which nothing in it can close.
    const data = /<script type="application\/json" id="x402-offer">([\s\S]*?)<\/script>/.exec(html)![1]!;
    assert.doesNotMatch(data, /</);
    assert.equal(JSON.parse(data).resource.url, `${hostile}/cve/latest`);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1, 'one script, a constant');
    assert.ok(csp.includes(`script-src 'sha256-${createHash('sha256').update(scripts[0]!, 'utf8').digest('base64')}'`), csp);
    assert.ok(csp.includes("connect-src 'self'"));
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    assert.equal(styles.length, 1);
    const hash = createHash('sha256').update(styles[0]!, 'utf8').digest('base64');
    assert.match(csp, /^default-src 'none';/);
    assert.ok(csp.includes(`style-src 'sha256-${hash}'`), csp);
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${csp.replaceAll("'", '&#39;')}">`), 'CSP in a meta tag');
  });
});

describe(`paywall page at ${PATH}`, () => {
  let svc: TestService;
  let browser: Browser | undefined;

  before(async () => {
    svc = await startTestService({ PUBLIC_URL });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await svc?.stop();
  });

  test('a browser gets 402 text/html with the PAYMENT-REQUIRED header, and the page states the offer', async () => {
    const res = await svc.get(PATH, { headers: { accept: BROWSER_ACCEPT } });
    assert.equal(res.status, 402);
    assert.match(res.headers.get('content-type')!, /^text\/html; charset=utf-8/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('vary') ?? '', /Accept/i);
    assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'none'/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const offer = decodeHeader(res.headers.get('payment-required'));
    assert.equal(offer.x402Version, 2);
    const req = offer.accepts[0]!;
    assert.equal(req.amount, '5000');
    assert.equal(req.network, NETWORK);
    assert.equal(req.payTo, PAY_TO);
    assert.equal(req.asset, USDC_BASE);
    assert.equal(offer.resource.url, PUBLIC_URL + PATH);
    const html = await res.text();
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes('$0.005'), 'price in USD');
    assert.ok(html.includes('5000 USDC atomic units'), 'atomic amount');
    assert.ok(html.includes(PAY_TO), 'payTo');
    assert.ok(html.includes(USDC_BASE), 'asset');
    assert.ok(html.includes(NETWORK), 'network');
    assert.ok(html.includes(`<code id="resource">${PUBLIC_URL}${PATH}</code>`), 'resource URL');
    assert.ok(html.includes(offer.resource.description), 'route description');
    assert.ok(html.includes('href="/cve/preview"'), 'free preview link');
    // The same page every time (built once per route).
    const again = await svc.get(PATH, { headers: { accept: 'text/html' } });
    assert.equal(again.status, 402);
    assert.equal(await again.text(), html);
  });

  test('API clients still get the JSON 402', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await svc.get(PATH, accept ? { headers: { accept } } : {});
      assert.equal(res.status, 402, String(accept));
      assert.match(res.headers.get('content-type')!, /^application\/json/, String(accept));
      assert.equal(decodeHeader(res.headers.get('payment-required')).accepts[0]!.amount, '5000');
      const body = (await res.json()) as { x402Version: number; accepts: { maxAmountRequired: string; payTo: string }[]; error: { code: string; price: string } };
      assert.equal(body.x402Version, 1);
      assert.equal(body.accepts[0]!.maxAmountRequired, '5000');
      assert.equal(body.accepts[0]!.payTo, PAY_TO);
      assert.equal(body.error.code, 'payment_required');
      assert.equal(body.error.price, '0.005');
    }
  });

  test('in Chromium: the page renders the offer without page errors', { skip: SKIP_BROWSER }, async (t) => {
    const chromium = (browser = await launchChromium(WAIT));
    const page = await chromium.newPage();
    page.setDefaultTimeout(WAIT);
    page.setDefaultNavigationTimeout(WAIT);
    await page.setViewport({ width: 1024, height: 900, deviceScaleFactor: 1 });
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];
    const requests: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String((e as Error)?.message ?? e)));
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error' || m.type() === 'warn') consoleErrors.push(`console.${m.type()}: ${m.text()} (${m.location().url ?? ''})`);
    });
    page.on('request', (r) => requests.push(r.url()));
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
    });

    const res = await page.goto(svc.base + PATH, { waitUntil: 'load' });
    assert.equal(res?.status(), 402);
    assert.match(res!.headers()['content-type'] ?? '', /^text\/html/);
    assert.ok(res!.headers()['payment-required'], 'PAYMENT-REQUIRED header in the browser too');
    assert.equal(res!.request().headers().accept?.includes('text/html'), true, 'Chromium asked for text/html');

    const shown = await page.evaluate(() => {
      const text = (id: string) => document.getElementById(id)?.textContent?.trim() ?? null;
      const h1 = document.querySelector('h1');
      return {
        title: document.title,
        h1: h1?.textContent ?? null,
        h1Height: h1?.getBoundingClientRect().height ?? 0,
        price: text('price'),
        atomic: text('atomic'),
        network: text('network'),
        asset: text('asset'),
        payTo: text('pay-to'),
        resource: text('resource'),
        preview: (document.getElementById('preview') as HTMLAnchorElement | null)?.href ?? null,
        overflow: document.documentElement.scrollWidth - window.innerWidth,
      };
    });
    assert.equal(shown.h1, 'Payment required');
    assert.ok(shown.h1Height > 0, 'the heading is laid out');
    assert.match(shown.title, /\/cve\/latest/);
    assert.match(shown.price!, /^\$0\.005 USD per call$/);
    assert.match(shown.atomic!, /^5000 USDC atomic units/);
    assert.equal(shown.network, `Base (${NETWORK})`);
    assert.equal(shown.asset, USDC_BASE);
    assert.equal(shown.payTo, PAY_TO);
    assert.equal(shown.resource, PUBLIC_URL + PATH);
    assert.equal(shown.preview, svc.base + '/cve/preview');
    assert.ok(shown.overflow <= 0, `page scrolls sideways by ${shown.overflow}px`);
    // The page's style was applied (allowed by the CSP's hash), so the CSP did not block it.
    const bg = await page.$eval('main', (e) => getComputedStyle(e).borderRadius);
    assert.equal(bg, '12px');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('paywall.png', ARTIFACTS).pathname, fullPage: true });

    // Nothing but the page itself was loaded: no external script, asset or wallet/RPC call.
    assert.deepEqual(requests, [svc.base + PATH]);
    assert.deepEqual(pageErrors, [], 'no uncaught page errors');
    // Chromium logs the document's own 402 as a failed load; nothing else may be logged.
    for (const e of consoleErrors) t.diagnostic(`tolerated: ${e}`);
    const unexpected = consoleErrors.filter((e) => !/Failed to load resource: the server responded with a status of 402/.test(e));
    assert.deepEqual(unexpected, [], 'no console errors or CSP violations');

    // The free preview link works from the page.
    const [nav] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#preview')]);
    assert.equal(page.url(), svc.base + '/cve/preview');
    assert.equal(nav?.status(), 200);
    const preview = (await nav!.json()) as { count: number };
    assert.ok(preview.count > 0, 'the preview answers with results');
    assert.deepEqual(pageErrors, []);
  });
});

describe('paying from the page with a browser wallet', () => {
  let devnet: Devnet;
  let svc: TestService;
  let chain: ChainReader;
  let browser: Browser | undefined;
  before(async () => {
    devnet = await startDevnet({ payers: 1 });
    svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
    chain = new ChainReader(devnet.rpcUrl, WAIT);
  });
  after(async () => {
    await browser?.close().catch(() => {});
    await svc?.stop();
    await devnet?.stop();
  });

  test('in Chromium, an EIP-1193 wallet signs, the page pays, shows the data, and the payer pays exactly the price once', { skip: SKIP_BROWSER }, async () => {
    const payer = devnet.payers[0]!;
    const account = privateKeyToAccount(payer.privateKey);
    const chromium = (browser = await launchChromium(WAIT));
    const page = await chromium.newPage();
    page.setDefaultTimeout(WAIT);
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String((e as Error)?.message ?? e)));
    // The wallet: window.ethereum in the page, its keys in the test (as a wallet extension holds them).
    const asked: string[] = [];
    await page.exposeFunction('walletRequest', async (method: string, params: unknown[] = []) => {
      asked.push(method);
      if (method === 'eth_requestAccounts') return [account.address];
      if (method === 'eth_chainId') return '0x2105'; // 8453
      if (method === 'eth_signTypedData_v4') {
        const { types, domain, primaryType, message } = JSON.parse(params[1] as string);
        const { EIP712Domain: _, ...rest } = types;
        return account.signTypedData({ domain, types: rest, primaryType, message });
      }
      throw new Error(`unsupported ${method}`);
    });
    await page.evaluateOnNewDocument(() => {
      const w = window as unknown as { ethereum: object; walletRequest: (m: string, p?: unknown[]) => Promise<unknown> };
      w.ethereum = { request: ({ method, params }: { method: string; params?: unknown[] }) => w.walletRequest(method, params) };
    });
    const before = await chain.balanceOf(payer.address);
    const res = await page.goto(svc.base + PATH, { waitUntil: 'load' });
    assert.equal(res?.status(), 402);
    await page.click('#pay');
    await page.waitForFunction(() => /^(Paid|Not paid)/.test(document.getElementById('pay-status')?.textContent ?? ''), { timeout: WAIT });
    const status = await page.$eval('#pay-status', (e) => e.textContent ?? '');
    assert.match(status, /^Paid 0.005 USD \(USDC\): \d+ results?\.$/);
    const shown = JSON.parse(await page.$eval('#pay-result', (e) => e.textContent ?? '{}')) as { articles: unknown[] };
    assert.ok(shown.articles.length > 0, 'the data is on the page');
    assert.deepEqual(asked, ['eth_requestAccounts', 'eth_chainId', 'eth_signTypedData_v4']);
    assert.deepEqual(pageErrors, []);
    assert.equal((await chain.balanceOf(payer.address)) - before, -5000n);
  });
});
