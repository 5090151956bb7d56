/**
 * The page at `/` for people, in headless Chromium (Debian's `chromium`, driven by
 * puppeteer-core, which downloads no browser): it loads under its strict CSP without a console
 * error, lists every wire of the catalogue in the live dashboard, runs previews from its form,
 * shows the service's error message for a bad parameter, and stays under 60 KB. API clients
 * keep the JSON index at `/`. Screenshots go to test-artifacts/.
 *
 * Without chromium the suite is skipped locally (install it with
 * `bash scripts/install-system-deps.sh`); in CI (`CI` set) a missing browser fails it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, ConsoleMessage, Page } from 'puppeteer-core';
import { scheduleText, SOURCES, WIRES } from '../src/catalog/index.js';
import { startFixtureServer, type FixtureServer } from '../src/demo/fixture-server.js';
import { buildHomePage } from '../src/docs/home-page.js';
import { launchChromium, SKIP_WITHOUT_CHROMIUM } from './helpers/chromium.js';
import { startTestService, type TestService } from './helpers/service.js';

const SKIP = SKIP_WITHOUT_CHROMIUM;

const MAX_BYTES = 60 * 1024;
/** Every wait in this file is bounded by this (ms). */
const WAIT = 15_000;
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
/** The service's PUBLIC_URL: the snippets must use it. */
const PUBLIC_URL = 'https://wires.example';
const PHONE = { width: 390, height: 844, deviceScaleFactor: 1, isMobile: true, hasTouch: true };
const DESKTOP = { width: 1366, height: 900, deviceScaleFactor: 1 };
/** The breaking tier's range for pages built here (the service's defaults). */
const BREAKING = { floorSec: 10, ceilingSec: 60 };

interface Watched {
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  errors: string[];
}

describe('home page for people at /', { skip: SKIP }, () => {
  let fixtures: FixtureServer;
  let svc: TestService;
  let browser: Browser;

  before(async () => {
    // Seeded wires, and every source polled from the recorded fixtures, so the dashboard has
    // per-source poll state to show.
    fixtures = await startFixtureServer();
    const overrides = join(mkdtempSync(join(tmpdir(), 'wires-home-')), 'sources.json');
    writeFileSync(overrides, JSON.stringify(fixtures.overrides));
    svc = await startTestService({ INGEST: '1', WIRES_SOURCES: overrides, PUBLIC_URL });
    await withTimeout(svc.scheduler!.firstRun, WAIT, 'first poll run');
    browser = await launchChromium(WAIT);
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await svc?.stop();
    await fixtures?.close();
  });

  /** A page that records console errors, uncaught exceptions and CSP violations. */
  async function openPage(viewport: typeof PHONE | typeof DESKTOP): Promise<Watched> {
    const page = await browser.newPage();
    page.setDefaultTimeout(WAIT);
    page.setDefaultNavigationTimeout(WAIT);
    await page.setViewport(viewport);
    const errors: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error' || m.type() === 'warn') errors.push(`console.${m.type()}: ${m.text()} (${m.location().url ?? ''})`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${String((e as Error)?.message ?? e)}`));
    // Also catch violations from the DOM event, whatever the console says.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    return { page, errors };
  }

  async function load(viewport: typeof PHONE | typeof DESKTOP): Promise<Watched> {
    const w = await openPage(viewport);
    const res = await w.page.goto(svc.base + '/', { waitUntil: 'load' });
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()['content-type'] ?? '', /^text\/html/);
    // The dashboard is filled from /health and the form's first preview has answered.
    await w.page.waitForFunction(
      (n: number) =>
        document.querySelectorAll('#fresh-grid [data-wire] .age-big').length === n &&
        [...document.querySelectorAll('#fresh-grid .age-big')].every((e) => e.textContent !== '…') &&
        document.querySelector('#try-out .results, #try-out .err, #try-out .empty') !== null,
      { timeout: WAIT },
      WIRES.length,
    );
    return w;
  }

  test('GET / with Accept: text/html is the page: under 60 KB, strict CSP with the hashes of its inline script and style', async () => {
    const res = await svc.get('/', { headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/html; charset=utf-8/);
    const body = Buffer.from(await res.arrayBuffer());
    assert.ok(body.byteLength < MAX_BYTES, `page is ${body.byteLength} bytes, over ${MAX_BYTES}`);
    const html = body.toString('utf8');
    const csp = res.headers.get('content-security-policy');
    assert.ok(csp, 'Content-Security-Policy header');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    const directives = new Map(
      csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name!, values]),
    );
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('connect-src'), ["'self'"]);
    assert.deepEqual(directives.get('base-uri'), ["'none'"]);
    assert.deepEqual(directives.get('form-action'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.doesNotMatch(csp, /unsafe-|\*|https?:/, 'no unsafe-inline/eval, wildcards or hosts');
    // One inline script and one inline style, each allowed by exactly its own hash.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1);
    assert.equal(styles.length, 1);
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;
    assert.deepEqual(directives.get('script-src'), [hash(scripts[0]!)]);
    assert.deepEqual(directives.get('style-src'), [hash(styles[0]!)]);
    // Nothing external, no inline handlers, no style attributes (CSP would refuse them).
    assert.doesNotMatch(html, /\s(src|href)="(https?:)?\/\//i, 'no external assets');
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
    assert.doesNotMatch(html, /\sstyle=/i, 'no style attributes');
    assert.doesNotMatch(scripts[0]!, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
    // Built from the catalogue for this service's public URL.
    assert.equal(buildHomePage(PUBLIC_URL, BREAKING).csp, csp);
    // The snippets use the public URL.
    assert.ok(html.includes(`curl -i &#39;${PUBLIC_URL}/`), 'curl snippet with the public URL');
    assert.ok(html.includes(`&quot;url&quot;: &quot;${PUBLIC_URL}/mcp&quot;`), 'remote MCP configuration');
    assert.ok(html.includes(`&quot;WIRES_URL&quot;: &quot;${PUBLIC_URL}&quot;`), 'stdio MCP configuration');
    assert.ok(html.includes(`import { WiresClient } from &#39;@wires-service/client&#39;;`), 'client snippet');
    assert.ok(html.includes(`import { wrapFetchWithPayment } from &#39;@x402/fetch&#39;;`), 'x402 snippet');
    for (const w of WIRES) {
      assert.ok(html.includes(`data-wire="${w.id}"`), `catalogue row for ${w.id}`);
      for (const r of [...w.paid, w.preview]) assert.ok(html.includes(`<code>${r.path}</code>`), r.path);
    }
  });

  test("the catalogue's poll schedule of each wire is the one /sources reports for its sources (EDGAR's 2 s)", async () => {
    const html = await (await svc.get('/', { headers: { accept: 'text/html' } })).text();
    const sources = (await (await svc.get('/sources')).json()) as { wire: string; state: { freshness: { floor_sec: number; ceiling_sec: number } } | null }[];
    for (const w of WIRES) {
      const row = new RegExp(`<tr data-wire="${w.id}">[\\s\\S]*?<small class="fr">([^<]*)<br>`).exec(html);
      assert.ok(row, `catalogue row of ${w.id}`);
      const states = sources.filter((s) => s.wire === w.paid[0]!.path).map((s) => s.state!.freshness);
      assert.equal(states.length, w.sources.length, `${w.id}: every source in /sources`);
      const polled = { floorSec: Math.min(...states.map((f) => f.floor_sec)), ceilingSec: Math.max(...states.map((f) => f.ceiling_sec)) };
      assert.equal(row[1], scheduleText(polled), `${w.id}: the page says "${row[1]}", /sources polls ${polled.floorSec}–${polled.ceilingSec} s`);
    }
    assert.match(html, /<tr data-wire="edgar">[\s\S]*?<small class="fr">every 2 s<br>/, 'EDGAR is polled every 2 s');
  });

  test('everything inserted is escaped, whatever the public URL', () => {
    const hostile = 'https://wires.example/a&b"c<d>\'e';
    const { html } = buildHomePage(hostile, BREAKING);
    assert.ok(!html.includes(hostile), 'the raw URL never appears');
    assert.ok(html.includes('https://wires.example/a&amp;b&quot;c&lt;d&gt;'), 'escaped where inserted');
    assert.doesNotMatch(html, /<d>/);
  });

  test('GET / without Accept: text/html is still the JSON index', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await svc.get('/', accept ? { headers: { accept } } : {});
      assert.equal(res.status, 200, String(accept));
      assert.match(res.headers.get('content-type')!, /^application\/json/);
      const body = (await res.json()) as { name: string; docs: Record<string, string> };
      assert.equal(body.name, 'wires');
      assert.equal(body.docs.health, '/health');
      assert.equal(res.headers.get('content-security-policy'), null);
    }
  });

  test('the page at phone width: no console errors or CSP violations, every wire in the dashboard, sources with poll state', async () => {
    const { page, errors } = await load(PHONE);
    const health = (await (await svc.get('/health')).json()) as { wires: Record<string, { items: number; newest: string | null }> };
    const cards = await page.$$eval('#fresh-grid [data-wire]', (els) =>
      els.map((e) => ({
        id: (e as HTMLElement).dataset.wire!,
        age: e.querySelector('.age-big')!.textContent!,
        items: e.querySelector('.small')!.textContent!,
        sources: [...e.querySelectorAll('[data-source]')].map((s) => ({
          id: (s as HTMLElement).dataset.source!,
          state: s.querySelector('.src-state')!.textContent!,
          poll: s.querySelector('.src-poll')!.textContent!,
        })),
      })),
    );
    assert.deepEqual(
      cards.map((c) => c.id),
      WIRES.map((w) => w.id),
      'one card per wire, in catalogue order',
    );
    for (const c of cards) {
      const h = health.wires[c.id]!;
      assert.ok(h.newest, `${c.id} has items`);
      assert.match(c.age, /^\d+ (s|min|h|d) ago$/, `${c.id} age "${c.age}"`);
      assert.match(c.items, /^\d+ items/, c.items);
      const expected = SOURCES.filter((s) => s.wire.id === c.id).map((s) => s.id);
      assert.deepEqual(
        c.sources.map((s) => s.id),
        expected,
        `${c.id} lists its sources`,
      );
      for (const s of c.sources) {
        assert.match(s.state, /^(ok · \d+ items|failing ×\d+)/, `${s.id}: ${s.state}`);
        assert.match(s.poll, /^polled \d+ (s|min) ago$/, `${s.id}: ${s.poll}`);
      }
    }
    assert.equal(await page.$eval('#svc-text', (e) => e.textContent), ((await (await svc.get('/health')).json()) as { status: string }).status);
    // Readable on a phone: nothing wider than the viewport.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px at ${PHONE.width}px`);
    await page.screenshot({ path: new URL('home-page.png', ARTIFACTS).pathname, fullPage: true });
    assert.deepEqual(errors, [], 'no console errors, page errors or CSP violations');
  });

  test('the form runs a preview and shows the results, then the service error for a bad parameter', async () => {
    const { page, errors } = await load(DESKTOP);
    const cve = WIRES.find((w) => w.id === 'cve') ?? WIRES.find((w) => !w.preview.qRequired)!;
    const value = cve.filter.values[0]!;
    await page.select('#f-wire', cve.id);
    await page.waitForFunction((name: string) => document.getElementById('f-filter-label')!.textContent === name, { timeout: WAIT }, cve.filter.name);
    await page.select('#f-filter', value);
    await page.click('#f-go');
    const path = `${cve.preview.path}?${cve.filter.name}=${value}`;
    await page.waitForFunction(
      (p: string) => document.getElementById('try-req')!.textContent === `GET ${p}` && !(document.getElementById('f-go') as HTMLButtonElement).disabled,
      { timeout: WAIT },
      path,
    );
    const expected = (await (await svc.get(path)).json()) as { count: number; articles: { title: string; url: string; source: string; category: string }[] };
    assert.ok(expected.count > 0);
    const shown = await page.$$eval('#try-out .results .item', (els) =>
      els.map((e) => ({
        title: e.querySelector('.title')!.textContent!,
        href: (e.querySelector('a.title') as HTMLAnchorElement | null)?.href ?? null,
        source: e.querySelector('.src')!.textContent!,
        age: e.querySelector('.age')!.textContent!,
        category: e.querySelector('.chip')!.textContent!,
      })),
    );
    assert.equal(shown.length, expected.count);
    for (const [i, a] of expected.articles.entries()) {
      assert.equal(shown[i]!.title, a.title);
      assert.equal(shown[i]!.href, new URL(a.url).href);
      assert.equal(shown[i]!.source, a.source);
      assert.equal(shown[i]!.category, value);
      assert.match(shown[i]!.age, /^(just now|\d+ (s|min|h|d) ago)$/);
    }
    assert.match(await page.$eval('#try-meta', (e) => e.textContent!), new RegExp(`^200 · ${expected.count} results`));
    // The snippets are tabs: one visible at a time, the remote MCP one names PUBLIC_URL/mcp.
    await page.click('.tab[data-tab="snip-mcp-remote"]');
    const visible = await page.$$eval('#snips .snip', (els) => els.filter((e) => !(e as HTMLElement).hidden).map((e) => e.id));
    assert.deepEqual(visible, ['snip-mcp-remote']);
    assert.match(await page.$eval('#snip-mcp-remote pre', (e) => e.textContent!), new RegExp(`"url": "${PUBLIC_URL}/mcp"`));
    await page.click('.tab[data-tab="snip-curl"]');
    await page.screenshot({ path: new URL('home-page-desktop.png', ARTIFACTS).pathname, fullPage: true });
    assert.deepEqual(errors, [], 'no console errors while loading and running a preview');

    // A bad `since`: the page shows the service's own error message and code.
    await page.$eval('#f-since', (e) => ((e as HTMLInputElement).value = '5y'));
    await page.click('#f-go');
    await page.waitForSelector('#try-out .err', { timeout: WAIT });
    const bad = (await (await svc.get(`${path}&since=5y`)).json()) as { error: { code: string; message: string } };
    assert.equal(await page.$eval('#try-out .err-msg', (e) => e.textContent), bad.error.message);
    assert.equal(await page.$eval('#try-out .err code', (e) => e.textContent), bad.error.code);
    await page.screenshot({ path: new URL('home-page-error.png', ARTIFACTS).pathname, clip: await clipOf(page, '#try') });

    // A wire whose preview needs q, submitted without it: missing_parameter, allowed values shown for a bad filter.
    const needsQ = WIRES.find((w) => w.preview.qRequired);
    if (needsQ) {
      await page.select('#f-wire', needsQ.id);
      await page.$eval('#f-since', (e) => ((e as HTMLInputElement).value = ''));
      await page.click('#f-go');
      await page.waitForFunction(() => document.querySelector('#try-out .err code')?.textContent === 'missing_parameter', { timeout: WAIT });
    }
    // Only the answers the form asked for may be logged by Chromium as failed loads (400).
    const unexpected = errors.filter((e) => !/Failed to load resource: the server responded with a status of 400/.test(e));
    assert.deepEqual(unexpected, []);
  });

  test('the CSP is enforced: an injected inline script is refused and reported', async () => {
    const { page, errors } = await load(DESKTOP);
    const ran = await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.append(s);
      return (window as unknown as { __injected?: boolean }).__injected === true;
    });
    assert.equal(ran, false, 'the inline script did not run');
    await waitFor(() => errors.some((e) => /Content Security Policy|CSP violation/i.test(e)), WAIT, 'a CSP violation in the console');
  });
});

async function clipOf(page: Page, selector: string): Promise<{ x: number; y: number; width: number; height: number }> {
  const box = await page.$eval(selector, (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height };
  });
  return box;
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
