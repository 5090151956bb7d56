/**
 * Ingestion end to end: the real scheduler and Piscina worker threads polling loopback
 * servers that play the public sources (recorded-format fixtures) and misbehaving ones.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PAID_ROUTES, PREVIEW_ROUTES, ROUTES, SOURCES, WIRES } from '../src/catalog/index.js';
import { ConfigError } from '../src/config.js';
import { startFixtureServer, type FixtureServer } from '../src/demo/fixture-server.js';
import { loadOverrides } from '../src/ingest/overrides.js';
import { loadWire, readTermTable, saveIndex, saveWire, savedItemsOf, snapshotDir, statedChecksum } from '../src/ingest/snapshot.js';
import { startWarmStart } from '../src/ingest/warm-start.js';
import { createIndexes } from '../src/service.js';
import { WireIndex } from '../src/search/wire-index.js';
import { syntheticItems } from '../bench/synthetic.js';
import { tokenize } from '../src/search/tokenize.js';
import { fragmentsOf, plainItem, storeItem, type Item } from '../src/search/item.js';
import { setLogLevel } from '../src/log.js';
import { startChaosServer, type ChaosServer } from './helpers/chaos-server.js';
import { startPollingService, type PollingService } from './helpers/service.js';

setLogLevel('error');

/** Sources pointed at misbehaving endpoints, and what /health must then say about them. */
const CHAOS: Record<string, { path: string; code?: string }> = {
  krebs: { path: '/500', code: 'http_status' },
  'ethereum-blog': { path: '/malformed', code: 'parse_malformed' },
  'nasa-releases': { path: '/huge', code: 'too_large' },
  espn: { path: '/bomb', code: 'decoded_too_large' },
  'ftc-press': { path: '/loop', code: 'redirect_loop' },
  'aws-ml-blog': { path: '/latin1' },
  'hn-show': { path: '/dupes' },
};

async function getJson(base: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path);
  return { status: res.status, body: await res.json() };
}

function sourceState(health: any, id: string): any {
  return health.sources.detail.find((s: any) => s.id === id);
}

/**
 * Polls /health every 100 ms until `done(health)` holds, and returns that health; fails after
 * `ms`. Ingestion runs in a worker thread at the lowest CPU priority, so on a loaded machine it
 * takes as long as it takes: tests wait for conditions, never for fixed windows.
 */
async function healthWhen(base: string, what: string, done: (health: any) => boolean, ms = 60_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await getJson(base, '/health');
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}: ${JSON.stringify(body.sources.detail.map((s: any) => [s.id, s.polls, s.last_error?.code ?? null]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('ingestion from recorded-format feeds and misbehaving sources', () => {
  let fixtures: FixtureServer;
  let chaos: ChaosServer;
  let run: PollingService;

  before(async () => {
    fixtures = await startFixtureServer();
    chaos = await startChaosServer();
    const overrides = { ...fixtures.overrides };
    for (const [id, c] of Object.entries(CHAOS)) overrides[id] = chaos.url + c.path;
    // No deadline here is a test's window: the slow misbehaviours (a 50 MiB body, a gzip bomb)
    // end at their caps however long a loaded machine takes to get there.
    run = await startPollingService(overrides);
    await run.service.scheduler!.firstRun;
  });
  after(async () => {
    await run.service.stop();
    await fixtures.close();
    await chaos.close();
  });

  test('every preview of every wire and filter value serves ingested items with correct fields and ages', async () => {
    const chaosFilters = new Set(Object.keys(CHAOS).map((id) => SOURCES.find((s) => s.id === id)!.filter));
    for (const route of PREVIEW_ROUTES) {
      for (const value of route.wire.filter.values) {
        // Filter values fed only by a misbehaving source may rightly be empty.
        const onlyChaos = route.wire.sources.filter((s) => s.filter === value).every((s) => s.id in CHAOS);
        const qs = `${route.wire.filter.name}=${value}${route.def.qRequired ? '&q=the' : ''}`;
        const { status, body } = await getJson(run.base, `${route.path}?${qs}`);
        assert.equal(status, 200, `${route.path}?${qs}`);
        if (onlyChaos && chaosFilters.has(value)) continue;
        if (route.def.qRequired) continue; // "the" need not occur in every category's fixtures
        assert.ok(body.count > 0, `${route.path}?${qs} has items`);
        for (const a of body.articles) {
          assert.equal(a.category, value);
          assert.ok(a.title.length > 0);
          assert.match(a.url, /^https?:\/\//);
          assert.equal(a.title.includes('<'), false, 'no HTML in titles');
          const age = (Date.now() - Date.parse(a.published)) / 60_000;
          assert.ok(Math.abs(a.age_minutes - Math.floor(age)) <= 1, `${a.age_minutes} vs ${age}`);
          assert.ok(a.age_minutes >= 0);
        }
      }
    }
  });

  test('paid routes of every wire still answer 402 with their offer', async () => {
    for (const route of PAID_ROUTES) {
      const res = await fetch(run.base + route.path + (route.def.qRequired ? '?q=x' : ''));
      assert.equal(res.status, 402, route.path);
      assert.ok(res.headers.get('payment-required'));
    }
  });

  test('each misbehaving source is reported with its own error on /health and /sources', async () => {
    const { body } = await getJson(run.base, '/health');
    for (const [id, c] of Object.entries(CHAOS)) {
      const s = sourceState(body, id);
      if (c.code) {
        assert.equal(s.last_error?.code, c.code, `${id}: ${JSON.stringify(s.last_error)}`);
        assert.equal(s.consecutive_failures, 1, id);
        assert.equal(s.last_success, null, id);
      } else {
        assert.equal(s.last_error, null, `${id}: ${JSON.stringify(s.last_error)}`);
      }
    }
    assert.equal(sourceState(body, 'krebs').last_error.status, 500);
    assert.equal(body.sources.failing, Object.values(CHAOS).filter((c) => c.code).length);
    // A handful of failing sources out of many is not an outage. (This service is degraded
    // for another reason: its facilitator URL has nothing behind it.)
    assert.equal(body.status, 'degraded');
    assert.match(body.x402.problem, /facilitator/);
    assert.ok(body.sources.failing / body.sources.total < 0.25);
    assert.ok(body.last_poll);
    const sources = (await getJson(run.base, '/sources')).body;
    const krebs = sources.find((s: any) => s.id === 'krebs');
    assert.equal(krebs.url, chaos.url + '/500');
    assert.equal(krebs.state.last_error.code, 'http_status');
  });

  test('a non-UTF-8 feed is decoded and a feed of duplicates yields each item once', async () => {
    const ai = await getJson(run.base, '/ailab/preview?lab=aws&q=caf%C3%A9');
    assert.equal(ai.body.count, 1);
    assert.equal(ai.body.articles[0].title, 'Café société résultats');
    const show = await getJson(run.base, '/hn/preview?feed=show');
    const titles = show.body.articles.map((a: any) => a.title);
    assert.equal(titles.filter((t: string) => t === 'Repeated story').length, 1);
    assert.equal(sourceState((await getJson(run.base, '/health')).body, 'hn-show').items, 4);
  });

  test('a second run gets 304 from unchanged sources and changes nothing', async () => {
    const before = (await getJson(run.base, '/health')).body;
    await run.service.scheduler!.runOnce();
    const afterRun = (await getJson(run.base, '/health')).body;
    const breaking = SOURCES.filter((s) => s.wire.tier === 'breaking' && !(s.id in CHAOS));
    // EDGAR, polled every 2 s whatever POLL_INTERVAL_SEC says, may have had more than one.
    for (const s of breaking) assert.ok(sourceState(afterRun, s.id).etag_hits >= 1, s.id);
    for (const w of WIRES) assert.equal(afterRun.wires[w.id].items, before.wires[w.id].items, w.id);
    assert.ok(afterRun.observed_interval_sec !== null);
  });

  test('snapshot on stop, warm restart serves the same items without polling', async () => {
    const before = (await getJson(run.base, '/health')).body;
    await run.service.snapshot();
    const restarted = await startPollingService({}, { INGEST: '0' }, run.dataDir);
    try {
      const afterRestart = (await getJson(restarted.base, '/health')).body;
      for (const w of WIRES) assert.equal(afterRestart.wires[w.id].items, before.wires[w.id].items, w.id);
      const articles = (body: any) => body.articles.map((x: any) => [x.title, x.url, x.published, x.summary]);
      const a = await getJson(run.base, '/cve/preview?src=cisa');
      const b = await getJson(restarted.base, '/cve/preview?src=cisa');
      assert.deepEqual(articles(b.body), articles(a.body));
      // Searches too: the restarted wires' term index is rebuilt from the snapshot.
      for (const wire of ['edgar', 'cve', 'jobs', 'quake']) {
        const newest = (await getJson(run.base, `/${wire}/preview`)).body.articles[0];
        const word = newest.title.split(/[^A-Za-z]+/).sort((x: string, y: string) => y.length - x.length)[0];
        const path = `/${wire}/preview?q=${encodeURIComponent(word)}`;
        const before = (await getJson(run.base, path)).body;
        assert.ok(before.articles.length > 0, path);
        assert.deepEqual(articles((await getJson(restarted.base, path)).body), articles(before), path);
      }
    } finally {
      await restarted.service.stop();
    }
  });
});

describe('cadence', () => {
  test('a hanging source holds up no other source; runs keep their interval, skip it, and shutdown does not wait for it', async () => {
    const fixtures = await startFixtureServer();
    const chaos = await startChaosServer();
    // The hanging poll's deadline (120 s) is far beyond the wait below (at most 45 s).
    const run = await startPollingService({ ...fixtures.overrides, 'cnbc-energy': chaos.url + '/hang' }, { POLL_INTERVAL_SEC: '1', FETCH_TIMEOUT_SEC: '120' });
    let stopped = false;
    try {
      // A breaking source is polled three times (a source is never polled twice at once, so two
      // of them completed) while the hanging one is still on its first: runs went on without
      // waiting for it. (A scheduler that waited would never get there.)
      // Every other source is in by then, too: the hanging one holds up nobody.
      const health = await healthWhen(
        run.base,
        'three polls of a healthy breaking source and every other source in',
        (h) => sourceState(h, 'cnbc-finance').polls >= 3 && h.sources.detail.every((s: any) => s.id === 'cnbc-energy' || s.last_success !== null),
        45_000,
      );
      const hanging = sourceState(health, 'cnbc-energy');
      assert.equal(hanging.polls, 1, 'never polled twice at once');
      assert.equal(hanging.last_success, null);
      assert.equal(hanging.last_error, null, 'the first poll is still in flight');
      // The others keep their own interval whatever is in flight (1 s; 5 allows for a loaded
      // machine and the hosts' budgets, which CNBC's six feeds share).
      assert.ok(health.observed_interval_sec >= 0.9 && health.observed_interval_sec <= 5, `observed ${health.observed_interval_sec}`);
      // Shutting down does not wait for the hanging poll's 120 s deadline.
      const stopping = Date.now();
      await run.service.stop();
      stopped = true;
      assert.ok(Date.now() - stopping < 20_000, `stop took ${Date.now() - stopping} ms`);
    } finally {
      if (!stopped) await run.service.stop();
      await chaos.close();
      await fixtures.close();
    }
  });
});

describe('a hanging source', () => {
  test('is given up at FETCH_TIMEOUT_SEC with a timeout error', async () => {
    const chaos = await startChaosServer();
    // Every other source gets a quick 404 (no parsing): nothing else competes for the worker.
    const overrides: Record<string, string> = {};
    for (const s of SOURCES) overrides[s.id] = `${chaos.url}/missing/${s.id}`;
    overrides.zdi = chaos.url + '/hang';
    const run = await startPollingService(overrides, { FETCH_TIMEOUT_SEC: '3' });
    try {
      const health = await healthWhen(run.base, 'the hanging source to give up', (h) => sourceState(h, 'zdi').last_error !== null, 60_000);
      const zdi = sourceState(health, 'zdi');
      assert.equal(zdi.last_error.code, 'timeout', JSON.stringify(zdi.last_error));
      assert.match(zdi.last_error.message, /3000 ms/);
      assert.equal(zdi.polls, 1);
      assert.equal(zdi.last_success, null);
      assert.equal(sourceState(health, 'krebs').last_error.code, 'http_status', 'the others were answered');
    } finally {
      await run.service.stop();
      await chaos.close();
    }
  });
});

describe('snapshot format', () => {
  const odd: Item = {
    id: 'a"1',
    title: 'Rates "up", Zürich 📈',
    url: 'https://example.com/a?x=1&y="2"',
    source: 'Ex "Wire"',
    filter: 'markets',
    published: Date.UTC(2026, 10, 24, 12, 0, 0, 123),
    summary: 'two\nlines\u2028',
  };
  const award: Item = { ...odd, id: 'b', url: 'https://example.com/b', filter: 'over-10m', state: 'CA' };

  test('a saved wire reads back as the same items, to the millisecond and the character', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-snap-'));
    await saveWire(dir, 'news', [storeItem(odd, 1), storeItem(award, 2)]);
    assert.deepEqual(
      loadWire(dir, 'news')!.map((i) => plainItem(i)),
      [odd, award],
    );
  });

  test('keys written inside texts and fields do not move where a line is cut, and the item is stored with the JSON it was saved with', async () => {
    const tricky: Item = {
      ...odd,
      id: 'c,"id":"d"',
      title: 'A title with ,"summary":"x" and ,"url":"y" in it',
      summary: 'A summary with ,"data":{"a":1} and ,"id":"z" in it',
      data: { parties: [{ role: 'filer', cik: '0000000001', name: 'N ,"id":' }], id: 'e', note: '},"id":"f' },
    };
    const bare: Item = { ...odd, id: 'g', summary: '' };
    const dir = mkdtempSync(join(tmpdir(), 'wires-snap-keys-'));
    await saveWire(dir, 'news', [storeItem(tricky, 1), storeItem(bare, 2), storeItem(award, 3)]);
    const back = loadWire(dir, 'news')!;
    assert.deepEqual(
      back.map((i) => plainItem(i)),
      [tricky, bare, award],
    );
    for (const [i, original] of [tricky, bare, award].entries()) {
      const { jsonHead, jsonSummary, jsonData } = storeItem(back[i]!, i);
      assert.deepEqual({ jsonHead, jsonSummary, jsonData }, fragmentsOf(original));
    }
  });

  test('a snapshot saved by the previous version (one Item per line) still loads: an upgrade keeps the items', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-snap-v1-'));
    mkdirSync(snapshotDir(dir), { recursive: true });
    // Within the retention: a warm start keeps them.
    const items = [odd, award].map((i, n) => ({ ...i, published: Date.now() - 60_000 + n }));
    const body = items.map((i) => JSON.stringify(i) + '\n').join('');
    const header = { format: 'wires-snapshot', version: 1, wire: 'news', count: 2, savedAt: new Date().toISOString(), sha256: createHash('sha256').update(body).digest('hex') };
    writeFileSync(join(snapshotDir(dir), 'news.jsonl'), JSON.stringify(header) + '\n' + body);
    assert.deepEqual(loadWire(dir, 'news'), items);
    // And through the warm start, whose worker leaves such a file to the serving thread.
    const write = process.stderr.write;
    let logged = '';
    process.stderr.write = ((chunk: string) => ((logged += chunk), true)) as typeof process.stderr.write;
    setLogLevel('info');
    let news: WireIndex;
    try {
      news = (await startWarmStart(dir, createIndexes()).load()).get('news')!;
    } finally {
      process.stderr.write = write;
      setLogLevel('error');
    }
    assert.deepEqual(
      news.items().map((i) => plainItem(i)),
      items,
    );
    assert.doesNotMatch(logged, /worker failed/);
  });
});

describe('snapshots that cannot be trusted', () => {
  test('a corrupted or truncated snapshot is ignored, and the service starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-corrupt-'));
    const fixtures = await startFixtureServer();
    const first = await startPollingService(fixtures.overrides, {}, dir);
    await first.service.scheduler!.firstRun;
    const newsItems = first.service.wires.get('news')!.size;
    const quakeItems = first.service.wires.get('quake')!.size;
    assert.ok(newsItems > 0 && quakeItems > 0);
    await first.service.stop();
    await fixtures.close();

    const newsFile = join(snapshotDir(dir), 'news.jsonl');
    const text = readFileSync(newsFile, 'utf8');
    writeFileSync(newsFile, text.replace(/"title":"./, '"title":"#')); // one byte changed
    const quakeFile = join(snapshotDir(dir), 'quake.jsonl');
    writeFileSync(quakeFile, readFileSync(quakeFile, 'utf8').slice(0, 200)); // cut short

    const second = await startPollingService({}, { INGEST: '0' }, dir);
    try {
      assert.equal(second.service.wires.get('news')!.size, 0, 'checksum mismatch: ignored');
      assert.equal(second.service.wires.get('quake')!.size, 0, 'truncated: ignored');
      assert.ok(second.service.wires.get('cve')!.size > 0, 'intact wires still load');
      assert.equal((await fetch(second.base + '/news/preview?q=x')).status, 200);
    } finally {
      await second.service.stop();
    }
  });
});

describe('warm start: a worker reads, checks and parses each file, the serving thread slices it', () => {
  const story = (n: number, title: string): Item => ({
    id: `s${n}`,
    title,
    url: `https://example.com/s${n}`,
    source: 'Example',
    filter: 'markets',
    published: Date.now() - n * 60_000,
    summary: `Story ${n}`,
  });
  const save = (dir: string, items: Item[]) =>
    saveWire(
      dir,
      'news',
      items.map((i, n) => storeItem(i, n + 1)),
    );
  /** Saved as a wire saves them: with its term table and facet values. */
  const saveIndexed = (dir: string, items: Item[], now: number) => {
    const news = new WireIndex(createIndexes().get('news')!.options);
    news.add(items, now);
    return saveIndex(dir, 'news', news);
  };
  /** Starts the warm start, lets its worker read the files, then replaces the news snapshot before this thread reads it. */
  const replacedAfterStart = async (dir: string, replace: () => Promise<void> | void) => {
    const warm = startWarmStart(dir, createIndexes());
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await replace();
    return (await warm.load()).get('news')!;
  };
  const found = (news: WireIndex, q: string) => news.search({ q, sinceMs: 0, limit: 10 }, Date.now()).map((h) => h.item.title);

  test('a file saved again in between is loaded as it now is, with its own terms', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-warm-'));
    await save(dir, [story(1, 'Old copper story'), story(2, 'Old tin story')]);
    // As many items as before: a term table of the old file would fit, and find the wrong ones.
    const news = await replacedAfterStart(dir, () => save(dir, [story(3, 'New nickel story'), story(4, 'New zinc story')]));
    assert.deepEqual(found(news, 'nickel'), ['New nickel story']);
    assert.deepEqual(found(news, 'copper'), []);
    assert.equal(news.size, 2);
  });

  test('a file corrupted in between is refused, though the worker found the earlier one intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-warm-'));
    await save(dir, [story(1, 'Old copper story')]);
    const file = join(snapshotDir(dir), 'news.jsonl');
    const news = await replacedAfterStart(dir, async () => {
      // Another save, then one byte of it changed: its header and its bytes no longer agree.
      await save(dir, [story(4, 'New zinc story')]);
      writeFileSync(file, readFileSync(file, 'utf8').replace('New zinc', 'New tin!'));
    });
    assert.equal(news.size, 0, 'the checksum the file states decides');
  });

  test('items come back as saved, to the character, whatever their texts hold', async () => {
    const now = Date.now();
    const base: Item = { id: 'x', title: 'Rates "up", Zürich 📈', url: 'https://example.com/x', source: 'Ex "Wire"', filter: 'markets', published: now - 60_000, summary: 'two\nlines\u2028' };
    const items: Item[] = [
      { ...base, id: 'a"1', url: 'https://example.com/a?x=1&y="2"' }, // escaped id and URL
      { ...base, id: 'https://example.com/same', url: 'https://example.com/same' }, // the id is the URL
      { ...base, id: 'c\\d', url: 'https://example.com/c' }, // an escaped id only
      { ...base, id: 'é', url: 'https://example.com/é?q=ü', state: 'CA', summary: '' },
      { ...base, id: 'k', url: 'https://example.com/k', title: 'A title with ,"summary":"x" and ,"url":"y"', data: { id: 'e', note: '},"id":"f', tickers: ['NVDA'] } },
    ].map((i, n) => ({ ...i, published: i.published + n }));
    // Saved alone (each line parsed at the restart), and by a wire with its index (none parsed).
    for (const how of ['items alone', 'with the index'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'wires-warm-texts-'));
      if (how === 'items alone') await save(dir, items);
      else await saveIndexed(dir, items, now);
      let news!: WireIndex;
      const log = await logged(async () => void (news = (await startWarmStart(dir, createIndexes()).load()).get('news')!));
      assert.match(log, how === 'items alone' ? /"term_tables":\{"saved":0,"built":1\}/ : /"term_tables":\{"saved":1,"built":0\}/, how);
      assert.deepEqual(
        news.items().map((i) => plainItem(i)),
        items,
        how,
      );
      assert.equal(found(news, 'zurich').length, items.filter((i) => i.title.includes('Zürich')).length, how);
      // Its fields' facets, worked out by the worker or saved with the index, are indexed.
      assert.deepEqual(
        news.search({ tags: [['ticker:NVDA']], sinceMs: 0, limit: 10 }, now).map((h) => h.item.id),
        ['k'],
        how,
      );
    }
  });

  test('an index file whose table names a position beyond its items is not used', async () => {
    const now = Date.now();
    const live = new WireIndex(createIndexes().get('news')!.options);
    live.add([story(1, 'Copper story'), story(2, 'Tin story')], now);
    const { table, facets } = live.savedIndex();
    const dir = mkdtempSync(join(tmpdir(), 'wires-warm-position-'));
    // Written with its own checksum, so only the check of what it names can refuse it.
    await saveWire(dir, 'news', live.items(), { table: { ...table, position: table.position.map((p) => (p === 1 ? table.count : p)) }, facets });
    let news!: WireIndex;
    const log = await logged(async () => void (news = (await startWarmStart(dir, createIndexes()).load()).get('news')!));
    assert.match(log, /term table rebuilt.*damaged: lengths do not match/);
    assert.deepEqual(found(news, 'tin'), ['Tin story']);
  });

  test('facet values saved with the index are used, unless the facet code that worked them out has changed', async () => {
    const now = Date.now();
    const opts = createIndexes().get('news')!.options;
    const live = new WireIndex(opts);
    live.add(
      [
        { ...story(1, 'Chips'), data: { tickers: ['NVDA'] } },
        { ...story(2, 'Cars'), data: { tickers: ['TSLA'] } },
      ],
      now,
    );
    const dir = mkdtempSync(join(tmpdir(), 'wires-warm-facets-'));
    // Saved with the two items' values swapped: a restart that reads them finds the other story.
    const saved = live.savedIndex();
    const swapped = { ...saved.facets!, ids: Int32Array.from(saved.facets!.ids).reverse() };
    await saveWire(dir, 'news', live.items(), { table: saved.table, facets: swapped });
    const byTicker = async () => {
      const news = (await startWarmStart(dir, createIndexes()).load()).get('news')!;
      return news.search({ tags: [['ticker:NVDA']], sinceMs: 0, limit: 10 }, now).map((h) => h.item.title);
    };
    assert.deepEqual(await byTicker(), ['Cars'], 'the saved values');
    // The same file, its header naming other facet code: the values are worked out from the fields.
    const terms = join(snapshotDir(dir), 'news.terms');
    const bytes = readFileSync(terms);
    const newline = bytes.indexOf(10);
    const header = JSON.parse(bytes.toString('utf8', 0, newline)) as { facets: string };
    header.facets = '0'.repeat(64);
    writeFileSync(terms, Buffer.concat([Buffer.from(JSON.stringify(header)), bytes.subarray(newline)]));
    assert.deepEqual(await byTicker(), ['Chips'], 'worked out again');
  });

  /** Every stderr line written while `fn` runs. */
  const logged = async (fn: () => Promise<void>): Promise<string> => {
    const write = process.stderr.write;
    let out = '';
    process.stderr.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stderr.write;
    setLogLevel('info');
    try {
      await fn();
    } finally {
      process.stderr.write = write;
      setLogLevel('error');
    }
    return out;
  };

  test('the text index saved with a snapshot is restored, less the items past their retention since', async () => {
    const now = Date.now();
    const opts = createIndexes().get('news')!.options;
    // Saved two hours ago: its oldest items have passed the 72 hours since.
    const savedAt = now - 2 * 3_600_000;
    const live = new WireIndex(opts);
    live.add(syntheticItems(3000, savedAt, 4, opts.maxAgeMs - 60_000, ['markets', 'world']), savedAt);
    const dir = mkdtempSync(join(tmpdir(), 'wires-warm-terms-'));
    await saveIndex(dir, 'news', live);
    const restore = async () => {
      let news: WireIndex | undefined;
      const log = await logged(async () => void (news = (await startWarmStart(dir, createIndexes()).load()).get('news')!));
      return { news: news!, log };
    };
    const { news, log } = await restore();
    assert.match(log, /"snapshot loaded".*"term_tables":\{"saved":1,"built":0\}/);
    // The reference: the same items, kept and indexed from their text.
    const reference = new WireIndex(opts);
    reference.load(
      live.items().map((i) => plainItem(i)),
      now,
    );
    assert.ok(reference.size < live.size && reference.size > 0, 'some items dropped since the save');
    assert.equal(news.size, reference.size);
    const words = [...new Set(live.items().flatMap((i) => tokenize(i.title)))];
    for (const word of words.slice(0, 300)) assert.deepEqual(found(news, word), found(reference, word), word);

    // The warm start reads each index file into one buffer it reuses, and takes the arrays as
    // views of it, moved to an 8-byte boundary where the header leaves them: the table and the
    // items' values saved, wherever the body falls.
    const terms = join(snapshotDir(dir), 'news.terms');
    const sha = statedChecksum(dir, 'news')!;
    const room = Buffer.alloc(statSync(terms).size + 8);
    for (let offset = 0; offset < 8; offset++) {
      const read = readTermTable(dir, 'news', sha, (size) => room.subarray(offset, offset + size));
      const { table, facets } = live.savedIndex();
      assert.deepEqual(read, { table, items: savedItemsOf(live.items(), facets) }, `body at offset ${offset}`);
    }

    // A damaged table is not used: the text is indexed again, and the restart says why.
    const bytes = readFileSync(terms);
    // Its header (outside the checksum) asking for more than the file holds.
    const newline = bytes.indexOf(10);
    const header = JSON.parse(bytes.toString('utf8', 0, newline)) as { lengths: Record<string, number> };
    header.lengths.slots = 1e9;
    writeFileSync(terms, Buffer.concat([Buffer.from(JSON.stringify(header)), bytes.subarray(newline)]));
    assert.match((await restore()).log, /term table rebuilt.*damaged: lengths do not match/);
    // Its bytes.
    bytes[bytes.length - 10]! ^= 1;
    writeFileSync(terms, bytes);
    const again = await restore();
    assert.match(again.log, /term table rebuilt.*damaged: checksum mismatch/);
    assert.match(again.log, /"term_tables":\{"saved":0,"built":1\}/);
    for (const word of words.slice(0, 50)) assert.deepEqual(found(again.news, word), found(reference, word), word);

    // Items saved again without their table (a crash between the two renames): the table
    // names the earlier items' checksum and is not used.
    await saveWire(dir, 'news', live.items().slice(0, -1));
    const third = await restore();
    assert.match(third.log, /term table rebuilt.*saved for other items/);
    const shorter = new WireIndex(opts);
    shorter.load(
      live
        .items()
        .slice(0, -1)
        .map((i) => plainItem(i)),
      now,
    );
    assert.equal(third.news.size, shorter.size);
    for (const word of words.slice(0, 50)) assert.deepEqual(found(third.news, word), found(shorter, word), word);
  });
});

describe('source overrides', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wires-overrides-'));
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  test('an overrides file redirects the named sources only', () => {
    const map = loadOverrides(write('ok.json', JSON.stringify({ 'cnbc-finance': 'http://127.0.0.1:9/feed.xml' })));
    assert.equal(map.get('cnbc-finance'), 'http://127.0.0.1:9/feed.xml');
    assert.equal(map.size, 1);
  });

  test('unknown ids, bad URLs and bad files are errors at start', () => {
    const cases: [string, RegExp][] = [
      [JSON.stringify({ 'no-such-source': 'http://x/' }), /unknown source id "no-such-source"/],
      [JSON.stringify({ 'cnbc-finance': 'ftp://x/' }), /absolute http\(s\) URL/],
      [JSON.stringify({ 'cnbc-finance': 42 }), /absolute http\(s\) URL/],
      [JSON.stringify(['cnbc-finance']), /JSON object/],
      ['{not json', /cannot read/],
    ];
    for (const [content, message] of cases) {
      assert.throws(
        () => loadOverrides(write('bad.json', content)),
        (e: Error) => e instanceof ConfigError && message.test(e.message),
      );
    }
    assert.throws(() => loadOverrides(join(dir, 'missing.json')), /cannot read/);
  });

  test('every catalogue source has a fixture, so the demo covers every wire and filter', async () => {
    const fixtures = await startFixtureServer();
    try {
      for (const s of SOURCES) assert.ok(fixtures.overrides[s.id], s.id);
      assert.ok(ROUTES.length > 0);
    } finally {
      await fixtures.close();
    }
  });
});
