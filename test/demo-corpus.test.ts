/**
 * What the offline demo serves, checked as a user would look at it: the real fixture server
 * (real captures with their dates moved, hand-written feeds elsewhere) polled once by the real
 * service over loopback HTTP, then read through the free previews and the wires themselves.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { PREVIEW_ROUTES, retentionMs, SOURCES, WIRES, type SourceDef } from '../src/catalog/index.js';
import { startFixtureServer, type FixtureServer } from '../src/demo/fixture-server.js';
import { LEAD_MS, REAL_DIR, REPLAY, readRealIndex, shiftDateText, shiftDocument } from '../src/demo/real-replay.js';
import { parseSource } from '../src/ingest/parse/index.js';
import { AWARD_SIZE_BOUNDS } from '../src/ingest/parse/mappings.js';
import { setLogLevel } from '../src/log.js';
import type { Service } from '../src/service.js';
import { startPollingService } from './helpers/service.js';

setLogLevel('error');

const byId = (id: string) => SOURCES.find((s) => s.id === id)!;
const wireOf = (id: string) => WIRES.find((w) => w.sources.some((s) => s.id === id))!;

async function getJson(base: string, path: string): Promise<any> {
  const res = await fetch(base + path);
  assert.equal(res.status, 200, path);
  return res.json();
}

/** "M 4.6 - 140 km SSE of …" → 4.6 */
const magnitudeOf = (title: string): number => {
  const m = /^M (-?\d+(?:\.\d+)?) - /.exec(title);
  assert.ok(m, `no magnitude in quake title "${title}"`);
  return Number(m[1]);
};
/** The amount at the head of an award's summary as the mapping writes it: "$12,500,000 from …". */
const amountOf = (summary: string): number => {
  const m = /^\$(-?[\d,]+) from /.exec(summary);
  assert.ok(m, `no amount in award summary "${summary}"`);
  return Number(m[1]!.replaceAll(',', ''));
};

/** The document with every digit run and day or month name blanked: what must not change. */
const skeleton = (bytes: Uint8Array) =>
  Buffer.from(bytes)
    .toString('latin1')
    .replace(/\d+|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/g, '#');

describe('date shifting of real captures', () => {
  test('each date keeps its textual format and zone notation', () => {
    const day = 86_400_000;
    assert.equal(shiftDateText('Thu, 25 Feb 2016 18:54:17 EST', day), 'Fri, 26 Feb 2016 18:54:17 EST');
    assert.equal(shiftDateText('Tue, 24 Jul 2018 17:13 EDT', 7 * 60_000), 'Tue, 24 Jul 2018 17:20 EDT');
    assert.equal(shiftDateText('Thu, 13 Aug 2026 04:04:22 +0000', -5 * 3_600_000), 'Wed, 12 Aug 2026 23:04:22 +0000');
    assert.equal(shiftDateText('2016-02-25T18:54:17-05:00', 6 * 3_600_000), '2016-02-26T00:54:17-05:00');
    assert.equal(shiftDateText('2025-01-24T15:00:57.5282Z', 60_000), '2025-01-24T15:01:57.5282Z');
    assert.equal(shiftDateText('2025-12-14T20:45:43', 3 * 3_600_000 + 60_000), '2025-12-14T23:46:43');
    assert.equal(shiftDateText('2024-01-17', 40 * day + 3_600_000), '2024-02-26');
    assert.equal(shiftDateText('3 May 2017 18:08:03 GMT', day), '4 May 2017 18:08:03 GMT');
    assert.equal(shiftDateText('Latest Filings', day), undefined);
    assert.equal(shiftDateText('10-K', day), undefined);
  });

  test('only whole-value dates move: not running text, URLs, ids or numbers that are not times', () => {
    const xml = Buffer.from(
      '<?xml version="1.0" encoding="ISO-8859-1"?><feed><title>Latest Filings - Thu, 25 Feb 2016 18:54:17 EST</title>' +
        '<updated>\n  2016-02-25T18:54:17-05:00\n</updated><summary>&lt;b&gt;Filed:&lt;/b&gt; 2016-02-25 SOCI\xc9T\xc9</summary></feed>',
      'latin1',
    );
    const moved = shiftDocument(xml, 60_000).toString('latin1');
    assert.match(moved, /<updated>\n {2}2016-02-25T18:55:17-05:00\n<\/updated>/);
    assert.match(moved, /Latest Filings - Thu, 25 Feb 2016 18:54:17 EST/);
    assert.match(moved, /Filed:&lt;\/b&gt; 2016-02-25 SOCI\xc9T\xc9/);
    const cdata = shiftDocument(Buffer.from('<item><pubDate><![CDATA[Thu, 9 Jul 2026 18:00:00 GMT]]></pubDate><title><![CDATA[Minutes of 9 Jul 2026 18:00]]></title></item>'), 60_000).toString();
    assert.equal(cdata, '<item><pubDate><![CDATA[Thu, 9 Jul 2026 18:01:00 GMT]]></pubDate><title><![CDATA[Minutes of 9 Jul 2026 18:00]]></title></item>');
    const json = '{"id":"1130784","epoch":1773720015,"time": 1688339831445,"mag":4.6,"pdf":"https://x/FR-2024-01-02/a.pdf","d":"2024-01-02"}';
    assert.equal(shiftDocument(Buffer.from(json), 60_000).toString(), '{"id":"1130784","epoch":1773720075,"time": 1688339891445,"mag":4.6,"pdf":"https://x/FR-2024-01-02/a.pdf","d":"2024-01-02"}');
  });
});

describe('the demo corpus, as served', () => {
  let fixtures: FixtureServer;
  let service: Service;
  let base: string;

  before(async () => {
    fixtures = await startFixtureServer();
    ({ service, base } = await startPollingService(fixtures.overrides, { INGEST: '1' }));
    await service.scheduler!.firstRun;
  });
  after(async () => {
    await service.stop();
    await fixtures.close();
  });

  test('every source with a real capture plays it; its bytes differ from the capture only in dates', async () => {
    const captures = new Set(readRealIndex().map((c) => c.file));
    for (const [id, { file }] of Object.entries(REPLAY)) {
      assert.ok(captures.has(file), file);
      assert.equal(fixtures.played[id], `real/${file}`, id);
      const served = Buffer.from(await (await fetch(fixtures.overrides[id]!)).arrayBuffer());
      const original = readFileSync(new URL(file, REAL_DIR));
      assert.equal(skeleton(served), skeleton(original), `${id}: only digits and day/month names may change`);
      assert.notDeepEqual(served, original, `${id}: the dates moved`);
    }
    // Every capture's own source plays a capture (perhaps a newer one of two); the deliberate
    // exceptions are named in REPLAY's comment.
    const notPlayed = readRealIndex()
      .filter((c) => !fixtures.played[c.sourceId]?.startsWith('real/'))
      .map((c) => c.sourceId);
    assert.deepEqual([...new Set(notPlayed)].sort(), ['cpsc-recalls', 'edgar', 'fed-press', 'fedreg-rule', 'remotive', 'status-azure', 'usaspending-over-10m']);
    for (const s of SOURCES) assert.match(fixtures.played[s.id] ?? '', /^(real|feeds)\//, s.id);
  });

  test('a replayed capture: newest entry a few minutes before the server started, every recent entry on its wire, under the capture titles', () => {
    for (const [id] of Object.entries(REPLAY)) {
      const source: SourceDef = byId(id);
      const wire = wireOf(id);
      const capture = readRealIndex().find((c) => c.file === REPLAY[id]!.file)!;
      const body = readFileSync(new URL(capture.file, REAL_DIR));
      const originalTitles = new Set(parseSource(source, body, capture.contentType, Date.UTC(2100, 0, 1), capture.finalUrl).items.map((i) => i.title));
      const now = Date.now();
      const servedDoc = parseSource(source, fixtureBody(id), capture.contentType, fixtures.startedAt, capture.finalUrl);
      assert.equal(
        servedDoc.warnings.some((w) => /future/.test(w)),
        false,
        `${id}: no entry after the server's start`,
      );
      const dated = servedDoc.items.filter((i) => !i.publishedIsFirstSeen);
      if (dated.length > 0 && !REPLAY[id]!.clock?.startsWith('usgs')) {
        const newest = Math.max(...dated.map((i) => i.published));
        assert.ok(newest <= fixtures.startedAt - LEAD_MS + 60_000 && newest >= fixtures.startedAt - LEAD_MS - 60_000, `${id}: newest ${new Date(newest).toISOString()}`);
      }
      const stored = new Map(
        service.wires
          .get(wire.id)!
          .items()
          .filter((i) => i.filter === source.filter && i.source === source.name)
          .map((i) => [i.url, i]),
      );
      const recent = servedDoc.items.filter((i) => i.published >= now - retentionMs(wire) + 60_000);
      assert.ok(recent.length > 0, `${id}: something within ${wire.retention}`);
      for (const item of recent) {
        assert.ok(originalTitles.has(item.title), `${id}: "${item.title}" is a title of the capture`);
        const s = stored.get(item.url);
        assert.ok(s, `${id}: "${item.title}" (${item.url}) is on /${wire.id}`);
        assert.equal(s.title, item.title);
      }
    }
  });

  /** Source id → the bytes the fixture server serves for it (fetched once, like the service). */
  const bodies = new Map<string, Buffer>();
  const fixtureBody = (id: string): Buffer => bodies.get(id)!;
  before(async () => {
    for (const id of Object.keys(REPLAY)) bodies.set(id, Buffer.from(await (await fetch(fixtures.overrides[id]!)).arrayBuffer()));
  });

  test('/quake/preview: no quake twice, and each quake is in the band it is listed under', async () => {
    const all = await getJson(base, '/quake/preview?limit=3');
    assert.ok(all.count > 0);
    assert.equal(new Set(all.articles.map((a: any) => a.url)).size, all.count, 'no URL twice');
    assert.equal(new Set(all.articles.map((a: any) => a.title)).size, all.count, 'no title twice');
    const quakes = service.wires.get('quake')!.items();
    const significantTitles = new Set(parseSource(byId('usgs-significant'), fixtureBody('usgs-significant'), 'application/json', fixtures.startedAt).items.map((i) => i.title));
    for (const mag of ['significant', 'm4.5', 'm2.5']) {
      const preview = await getJson(base, `/quake/preview?mag=${mag}`);
      assert.ok(preview.count > 0, mag);
      const listed = [...preview.articles.map((a: any) => ({ title: a.title as string })), ...quakes.filter((q) => q.filter === mag)];
      for (const { title } of listed) {
        if (mag === 'm4.5') assert.ok(magnitudeOf(title) >= 4.5, `${title} under m4.5`);
        if (mag === 'm2.5') assert.ok(magnitudeOf(title) >= 2.5, `${title} under m2.5`);
        // "significant" is USGS's significance score, not a magnitude: only its own feed's quakes.
        if (mag === 'significant') assert.ok(significantTitles.has(title), `${title} under significant`);
      }
    }
  });

  test("every filter value of every wire has items, as a newcomer's first try of each finds them", async () => {
    const empty: string[] = [];
    for (const w of WIRES) {
      for (const value of w.filter.values) {
        const path = `${w.preview.path}?${w.filter.name}=${value}`;
        if (w.preview.qRequired) {
          // A search needs its terms: the words of an item held under the value must find it.
          const held = service.wires
            .get(w.id)!
            .items()
            .find((i) => i.filter === value);
          const q = held?.title.split(/\W+/).find((word) => word.length > 4);
          if (!q || (await getJson(base, `${path}&q=${encodeURIComponent(q)}`)).count === 0) empty.push(path);
        } else if ((await getJson(base, path)).count === 0) empty.push(path);
      }
    }
    assert.deepEqual(empty, [], 'previews that show nothing');
  });

  test('filters on structured fields: cik, 8-K item and min_mag find exactly the articles whose data match', async () => {
    const edgar = service.wires.get('edgar')!.items();
    const ciks = (i: { data?: Record<string, unknown> }) => ((i.data?.parties as { cik: string }[] | undefined) ?? []).map((p) => p.cik);
    const acme = edgar.filter((i) => ciks(i).includes('0001000000'));
    assert.ok(acme.length >= 2, 'the demo has several filings of one company');
    const byCik = await getJson(base, '/edgar/preview?cik=1000000&limit=3');
    assert.deepEqual(
      byCik.articles.map((a: any) => a.url),
      acme
        .sort((a, b) => b.published - a.published)
        .slice(0, 3)
        .map((i) => i.url),
      "newest first, every one of them that company's",
    );
    for (const a of byCik.articles) assert.ok(a.data.parties.some((p: any) => p.cik === '0001000000'));
    const byItem = await getJson(base, '/edgar/preview?item=2.02,5.02');
    assert.ok(byItem.count > 0);
    for (const a of byItem.articles)
      assert.ok(
        a.data.items.some((n: string) => n === '2.02' || n === '5.02'),
        a.title,
      );
    assert.equal(byItem.count, Math.min(3, edgar.filter((i) => ((i.data?.items as string[] | undefined) ?? []).some((n) => n === '2.02' || n === '5.02')).length));
    assert.equal((await getJson(base, '/edgar/preview?item=2.02&cik=1045810')).count, 0, 'both filters apply');
    // The ticker map (SEC's, a real capture) gives the filer's tickers; ticker= finds them in any case.
    const nvda = await getJson(base, '/edgar/preview?ticker=nvda');
    assert.equal(nvda.count, 1);
    assert.deepEqual([nvda.articles[0].data.ticker, nvda.articles[0].data.tickers, nvda.articles[0].data.items], ['NVDA', ['NVDA'], ['5.02']]);
    assert.equal((await getJson(base, '/edgar/preview?ticker=NVDA&item=5.02')).count, 1);
    // A story that names its company's listing ((NASDAQ: NVDA), $AMD) carries the tickers, and ticker= finds it.
    const story = await getJson(base, '/news/preview?q=russell&ticker=amd');
    assert.equal(story.count, 1);
    assert.deepEqual(story.articles[0].data, { tickers: ['NVDA', 'AMD'] });
    assert.equal((await getJson(base, '/news/preview?q=russell&ticker=IBM')).count, 0);
    const quakes = service.wires.get('quake')!.items();
    const strong = quakes.filter((i) => (i.data?.mag as number) >= 5).sort((a, b) => b.published - a.published);
    assert.ok(strong.length > 0 && strong.length < quakes.length);
    const byMag = await getJson(base, '/quake/preview?min_mag=5');
    assert.deepEqual(
      byMag.articles.map((a: any) => a.url),
      strong.slice(0, 3).map((i) => i.url),
    );
    const withQ = await getJson(
      base,
      `/quake/preview?min_mag=5&q=${encodeURIComponent(
        String(strong[0]!.data!.place)
          .split(/\W+/)
          .find((w) => w.length > 3)!,
      )}`,
    );
    for (const a of withQ.articles) assert.ok(a.data.mag >= 5);
    for (const [path, param] of [
      ['/edgar/preview?cik=apple', 'cik'],
      ['/edgar/preview?item=2', 'item'],
      ['/quake/preview?min_mag=10', 'min_mag'],
      ['/news/preview?q=fed&cik=1', 'cik'],
    ] as const) {
      const res = await fetch(base + path);
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as any).error.param, param, path);
    }
  });

  test('/tickers: a name, a CIK or a ticker gives the company and its tickers from the map the demo serves', async () => {
    const byName = await getJson(base, '/tickers?q=nvid');
    assert.deepEqual(byName.companies[0], { cik: '0001045810', name: 'NVIDIA CORP', ticker: 'NVDA', tickers: ['NVDA'], exchange: 'Nasdaq' });
    assert.deepEqual(
      (await getJson(base, '/tickers?ticker=goog')).companies.map((c: any) => c.tickers),
      [['GOOGL', 'GOOG']],
    );
    assert.equal((await getJson(base, '/tickers?cik=320193')).companies[0].ticker, 'AAPL');
    const apple = await getJson(base, '/tickers?q=apple&limit=50');
    assert.equal(apple.companies[0].ticker, 'AAPL', 'a name that starts with the words comes first');
    assert.equal((await getJson(base, '/tickers?q=zzzzqqq')).count, 0);
    // The same lookup as an MCP tool, over POST /mcp.
    const call = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tickers_lookup', arguments: { q: 'nvidia' } } }),
    });
    const answer = (await call.json()) as any;
    assert.equal(JSON.parse(answer.result.content[0].text).companies[0].ticker, 'NVDA');
    for (const path of ['/tickers', '/tickers?q=apple&cik=1', '/tickers?cik=apple', '/tickers?q=apple&limit=51', '/tickers?name=apple']) {
      const res = await fetch(base + path);
      assert.equal(res.status, 400, path);
      assert.ok(((await res.json()) as any).error.message, path);
    }
  });

  test('/contracts: each award is in its size bucket, and no award is in two buckets', async () => {
    const awards = service.wires.get('contracts')!.items();
    const bucketOf = new Map<string, string>();
    for (const a of awards) {
      const bounds = AWARD_SIZE_BOUNDS[a.filter];
      if (!bounds) continue; // small-business is a kind of recipient, not an amount
      const amount = amountOf(a.summary);
      assert.ok(amount >= bounds[0] && amount <= bounds[1], `${a.title}: $${amount} under ${a.filter}`);
      assert.equal(bucketOf.get(a.url) ?? a.filter, a.filter, `${a.title} in two buckets`);
      bucketOf.set(a.url, a.filter);
    }
    for (const size of Object.keys(AWARD_SIZE_BOUNDS))
      assert.ok(
        awards.some((a) => a.filter === size),
        size,
      );
    const ca = await getJson(base, '/contracts/preview?q=CA');
    assert.ok(ca.count > 0);
    assert.equal(new Set(ca.articles.map((a: any) => a.url)).size, ca.count, 'no award twice in /contracts/preview?q=CA');
    const seen = new Map<string, string>();
    for (const size of Object.keys(AWARD_SIZE_BOUNDS)) {
      const preview = await getJson(base, `/contracts/preview?size=${size}&q=CA`);
      assert.ok(preview.count > 0, size);
      for (const a of preview.articles) {
        assert.equal(seen.get(a.url) ?? size, size, `${a.title} under ${seen.get(a.url)} and ${size}`);
        seen.set(a.url, size);
        assert.equal(bucketOf.get(a.url), size);
      }
    }
  });

  test('/jobs and /sports: the content fits the filter it is listed under', async () => {
    const data = service.wires
      .get('jobs')!
      .items()
      .filter((i) => i.filter === 'data');
    assert.ok(data.length > 0);
    for (const j of data) {
      assert.match(j.title, /data|analy|scien|\bBI\b/i, `${j.title} under data`);
      assert.doesNotMatch(j.title, /\(Go\)|backend|frontend|designer/i, `${j.title} under data`);
    }
    const bbcSport = service.wires
      .get('sports')!
      .items()
      .filter((i) => i.filter === 'bbc');
    assert.ok(bbcSport.length > 0);
    for (const s of bbcSport) {
      // The real feed also lists BBC Sport's iPlayer and Sounds programmes; never a news story.
      assert.match(s.url, /^https:\/\/www\.bbc\.(com|co\.uk)\/(sport|iplayer|sounds)\//, `${s.title} under BBC Sport`);
      assert.doesNotMatch(s.title, /ceasefire|floods|election/i, `${s.title} under BBC Sport`);
    }
    const bbcTech = service.wires
      .get('news')!
      .items()
      .filter((i) => i.filter === 'tech' && i.source === 'BBC News');
    assert.ok(bbcTech.length > 0);
    for (const s of bbcTech) assert.doesNotMatch(s.title, /ceasefire|goal|floods/i, `${s.title} under tech`);
    for (const [filter, words] of [
      ['design', /design|UI|UX/i],
      ['product', /product/i],
      ['customer-support', /support|customer/i],
      ['sales-marketing', /sales|marketing|account|development rep/i],
    ] as const) {
      const jobs = service.wires
        .get('jobs')!
        .items()
        .filter((i) => i.filter === filter);
      assert.ok(jobs.length > 0, filter);
      for (const j of jobs) assert.match(j.title, words, `${j.title} under ${filter}`);
    }
  });

  test('no story is copied under another filter value: a title under two filter values is one link', () => {
    // Within one feed a title may repeat (a 13F-HR and its amendment, GitHub's "Incident with
    // Actions"); across filter values a repeated title with another link is a copied fixture.
    for (const [wire, index] of service.wires) {
      const seen = new Map<string, { filter: string; url: string }>();
      for (const i of index.items()) {
        const first = seen.get(i.title);
        if (!first) seen.set(i.title, { filter: i.filter, url: i.url });
        else if (first.filter !== i.filter) assert.equal(i.url, first.url, `/${wire}: "${i.title}" under ${first.filter} and ${i.filter}`);
      }
    }
  });

  test('every preview: dates within the wire retention and not in the future', async () => {
    for (const route of PREVIEW_ROUTES) {
      const retention = retentionMs(route.wire);
      for (const value of [undefined, ...route.wire.filter.values]) {
        const qs = [value === undefined ? '' : `${route.wire.filter.name}=${value}`, route.def.qRequired ? 'q=the' : ''].filter(Boolean).join('&');
        const body = await getJson(base, `${route.path}${qs ? '?' + qs : ''}`);
        const now = Date.now();
        for (const a of body.articles) {
          const published = Date.parse(a.published);
          assert.ok(published <= now, `${route.path} ${a.title}: ${a.published} is in the future`);
          assert.ok(published >= now - retention, `${route.path} ${a.title}: ${a.published} older than ${route.wire.retention}`);
        }
      }
    }
  });

  test('EDGAR: every form has filings, with absolute links; the hand-written feed keeps the relative feed link and Latin-1', async () => {
    const all = await getJson(base, '/edgar/preview');
    assert.ok(all.count > 0);
    for (const form of WIRES.find((w) => w.id === 'edgar')!.filter.values) {
      const preview = await getJson(base, `/edgar/preview?form=${form}`);
      assert.ok(preview.count > 0, form);
      for (const a of preview.articles) assert.match(a.url, /^https?:\/\/www\.sec\.gov\/Archives\/edgar\/data\//, `${form}: ${a.url}`);
    }
    for (const i of service.wires.get('edgar')!.items()) assert.match(i.url, /^https?:\/\/www\.sec\.gov\/Archives\//);
    const handWritten = Buffer.from(await (await fetch(fixtures.overrides.edgar!)).arrayBuffer());
    assert.equal(fixtures.played.edgar, 'feeds/atom-edgar.xml');
    const text = handWritten.toString('latin1');
    assert.ok(text.includes('<link rel="alternate" href="/cgi-bin/browse-edgar?action=getcurrent"/>'));
    assert.match(text, /^<\?xml version="1.0" encoding="ISO-8859-1" \?>/);
    assert.ok(handWritten.includes(Buffer.from('SOCI\xc9T\xc9', 'latin1')), 'Latin-1 bytes, not UTF-8');
  });
});

describe('contract awards: the parser keeps an award only under its own size bucket', () => {
  const doc = (amounts: (number | null)[]) =>
    Buffer.from(
      JSON.stringify({
        results: amounts.map((amount, n) => ({
          'Recipient Name': `R${n}`,
          Description: 'D',
          'Award Amount': amount,
          'Base Obligation Date': '2026-11-20',
          'Place of Performance State Code': 'CA',
          'Awarding Agency': 'A',
          generated_internal_id: `CONT_AWD_${n}`,
        })),
      }),
    );
  const amounts = [-5_000, 100_000, 250_000, 600_000, 1_000_000, 2_000_000, 10_000_000, 50_000_000, null];
  const kept = (id: string) => parseSource(byId(id), doc(amounts), 'application/json', Date.UTC(2026, 10, 24)).items.map((i) => i.title);
  test('bounds are inclusive, as the API filter; an award without an amount stays', () => {
    assert.deepEqual(kept('usaspending-under-250k'), ['R0: D', 'R1: D', 'R2: D', 'R8: D']);
    assert.deepEqual(kept('usaspending-250k-1m'), ['R2: D', 'R3: D', 'R4: D', 'R8: D']);
    assert.deepEqual(kept('usaspending-1m-10m'), ['R4: D', 'R5: D', 'R6: D', 'R8: D']);
    assert.deepEqual(kept('usaspending-over-10m'), ['R6: D', 'R7: D', 'R8: D']);
    assert.equal(kept('usaspending-small-business').length, amounts.length, 'small-business is not an amount');
  });
});
