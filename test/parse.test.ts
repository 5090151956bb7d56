/**
 * The parsers: a contract every format reader and JSON mapping must meet on the recorded
 * fixtures, the specific quirks of the sources, and hostile input.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { SOURCES, type SourceDef } from '../src/catalog/index.js';
import { renderFixture } from '../src/ingest/fixture-template.js';
import { parseDate } from '../src/ingest/parse/dates.js';
import { MAX_ITEMS_PER_DOCUMENT, ParseError, parseSource, type ParsedItem } from '../src/ingest/parse/index.js';
import { canonicalUrl, htmlToText } from '../src/ingest/parse/text.js';

const NOW = Date.parse('2026-11-23T15:30:00Z');
const FIXTURES = new URL('../../fixtures/feeds/', import.meta.url);
const INDEX = JSON.parse(readFileSync(new URL('index.json', FIXTURES), 'utf8')) as Record<string, string>;

const source = (id: string): SourceDef => SOURCES.find((s) => s.id === id)!;
const fixture = (file: string) => renderFixture(readFileSync(new URL(file, FIXTURES)), NOW);
const parse = (id: string, body: Uint8Array | string, contentType?: string) =>
  parseSource(source(id), typeof body === 'string' ? Buffer.from(body) : body, contentType, NOW);
const rss = (items: string, decl = '<?xml version="1.0" encoding="UTF-8"?>') =>
  `${decl}<rss version="2.0"><channel><title>t</title><link>https://example.com/</link>${items}</channel></rss>`;
const rssItem = (title: string, date: string, extra = '') =>
  `<item><title>${title}</title><link>https://example.com/${encodeURIComponent(title)}</link><pubDate>${date}</pubDate>${extra}</item>`;

describe('contract: every source parses its fixture into clean items', () => {
  for (const s of SOURCES) {
    test(`${s.id} (${INDEX[s.id]})`, () => {
      const { items } = parseSource(s, fixture(INDEX[s.id]!), undefined, NOW);
      assert.ok(items.length >= 3, `${items.length} items`);
      for (const item of items) {
        assert.ok(item.title.length > 0 && item.title.length <= 300);
        assert.match(item.url, /^https:\/\//);
        assert.equal(item.url.includes('#'), false, 'fragment stripped');
        assert.equal(item.url.includes('utm_'), false, 'tracking stripped');
        assert.ok(item.published <= NOW && item.published > NOW - 10 * 86_400_000, `${item.title}: ${new Date(item.published).toISOString()}`);
        assert.equal(/<[a-z/][^>]*>/i.test(item.summary + item.title), false, `no HTML: ${item.summary}`);
        assert.equal(/&(amp|lt|gt|quot|#\d+);/.test(item.summary + item.title), false, `no entities: ${item.summary}`);
        assert.equal(item.source, s.name);
        assert.equal(item.filter, s.filter);
        assert.ok(item.id.length > 0);
      }
      assert.equal(new Set(items.map((i) => i.id)).size, items.length, 'ids unique');
    });
  }
});

describe('source quirks', () => {
  test('EDGAR: Latin-1 decoded, one item per accession, only the wanted form and its amendments', () => {
    const items = parse('edgar-8k', fixture('atom-edgar.xml')).items;
    assert.deepEqual(items.map((i) => i.id).sort(), ['0001234567-26-000001', '0001234567-26-000002', '0001234567-26-000003', '0001234567-26-000999']);
    assert.ok(items.some((i) => i.title === '8-K - SOCIÉTÉ GÉNÉRALE HOLDINGS (0001000001)'), items.map((i) => i.title).join(' | '));
    const form4 = parse('edgar-form4', fixture('atom-edgar.xml')).items;
    assert.equal(form4.length, 3, 'Issuer and Reporting entries of one filing are one item');
    assert.match(items[0]!.summary, /^Filed: \d{4}-\d\d-\d\d AccNo: /);
  });

  test('arXiv: only new and cross announcements, version-less ids, the abstract as summary', () => {
    const items = parse('arxiv-ai', fixture('rss-arxiv-ai.xml')).items;
    assert.equal(items.length, 5);
    assert.ok(items.every((i) => /^arxiv:\d{4}\.\d{5}$/.test(i.id)));
    assert.ok(items.every((i) => i.summary.startsWith('We study')));
  });

  test('BBC: #0 fragments removed; ESPN: named zone EST; CPSC: Month D, YYYY is a date without a time', () => {
    assert.ok(parse('bbc-world', fixture('rss-bbc.xml')).items.every((i) => !i.url.endsWith('#0')));
    const espn = parse('espn', fixture('rss-espn.xml')).items[0]!;
    assert.equal(espn.published, NOW - 4 * 60_000);
    const cpsc = parse('cpsc-recalls', fixture('rss-cpsc.xml')).items;
    assert.ok(cpsc.every((i) => i.publishedIsFirstSeen));
    assert.equal(cpsc[0]!.published, NOW, 'today, at the time first seen');
    assert.equal(cpsc[1]!.published, NOW - 86_400_000, 'yesterday, at the same time of day');
  });

  test('SEC litigation: a stray & does not break the feed', () => {
    const items = parse('sec-litigation', fixture('rss-sec-litigation.xml')).items;
    assert.equal(items.length, 4);
    assert.match(items[0]!.summary, /Smith & Co\./);
  });

  test('JSON: KEV dates are days, USGS epoch ms, Remotive ISO without zone is UTC, RemoteOK metadata skipped, NWS tests skipped', () => {
    const kev = parse('cisa-kev', fixture('json-cisa-kev.json')).items;
    assert.equal(kev[0]!.id, 'CVE-2026-4100');
    assert.equal(kev[0]!.url, 'https://nvd.nist.gov/vuln/detail/CVE-2026-4100');
    assert.ok(kev.every((i) => i.publishedIsFirstSeen));
    const quake = parse('usgs-2.5', fixture('json-usgs.json')).items[0]!;
    assert.equal(quake.published, NOW - 12 * 60_000);
    assert.match(quake.summary, /Magnitude 6.1 .* Tsunami: yes/);
    assert.equal(parse('remotive', fixture('json-remotive.json')).items[0]!.published, NOW - 2 * 3_600_000);
    const rok = parse('remoteok', fixture('json-remoteok.json')).items;
    assert.equal(rok.length, 4);
    assert.ok(rok.every((i) => i.title.includes(' at ')));
    const nws = parse('nws-extreme', fixture('json-nws.json')).items;
    assert.equal(nws.length, 4);
    assert.ok(nws.every((i) => !i.title.includes('Test')));
    const awards = parse('usaspending-over-10m', fixture('json-usaspending.json')).items;
    assert.deepEqual(awards.map((i) => i.state), ['CA', 'TX', 'CA', 'VA', 'NY']);
    assert.match(awards[0]!.url, /^https:\/\/www\.usaspending\.gov\/award\/CONT_AWD_/);
  });

  test('UTF-16 JSON with a byte-order mark', () => {
    const text = '\ufeff' + JSON.stringify({ vulnerabilities: [{ cveID: 'CVE-1', vulnerabilityName: 'Déjà vu', dateAdded: '2026-11-22', shortDescription: 'x', requiredAction: 'y' }] });
    const items = parse('cisa-kev', Buffer.from(text, 'utf16le'));
    assert.equal(items.items[0]!.title, 'CVE-1: Déjà vu');
  });

  test('a feed of duplicates yields each item once', () => {
    const item = rssItem('Same', 'Mon, 23 Nov 2026 15:00:00 GMT', '<guid>g1</guid>');
    assert.equal(parse('krebs', rss(item + item + item)).items.length, 1);
  });

  test('future dates are clamped to now; items without a date are dated when first seen', () => {
    const r = parse('krebs', rss(rssItem('Future', 'Mon, 23 Nov 2026 18:00:00 GMT') + rssItem('Undated', '')));
    assert.equal(r.items[0]!.published, NOW);
    assert.equal(r.items[0]!.publishedIsFirstSeen, undefined);
    assert.equal(r.items[1]!.published, NOW);
    assert.equal(r.items[1]!.publishedIsFirstSeen, true);
    assert.ok(r.warnings.some((w) => /future/.test(w)));
  });

  test('items without a title or an http(s) link are skipped and counted', () => {
    const r = parse('krebs', rss('<item><title></title><link>https://example.com/a</link></item><item><title>JS</title><link>javascript:alert(1)</link></item>' + rssItem('Good', 'Mon, 23 Nov 2026 15:00:00 GMT')));
    assert.equal(r.items.length, 1);
    assert.equal(r.skipped, 2);
  });
});

describe('dates', () => {
  const cases: [unknown, string, boolean][] = [
    ['Wed, 29 Jan 2025 23:39:41 GMT', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 18:39:41 -0500', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 18:39:41 EST', '2025-01-29T23:39:41.000Z', false],
    ['Tue, 24 Jul 2018 17:13 EDT', '2018-07-24T21:13:00.000Z', false],
    ['29 Jan 2025 23:39:41 UT', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T18:39:41-05:00', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T23:39:41Z', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T23:39:41', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T23:39:41.123+00:00', '2025-01-29T23:39:41.123Z', false],
    ['2025-01-29', '2025-01-29T00:00:00.000Z', true],
    ['20250129', '2025-01-29T00:00:00.000Z', true],
    ['January 29, 2025', '2025-01-29T00:00:00.000Z', true],
    [1738193981000, '2025-01-29T23:39:41.000Z', false],
    [1738193981, '2025-01-29T23:39:41.000Z', false],
    ['1738193981000', '2025-01-29T23:39:41.000Z', false],
  ];
  for (const [input, iso, dateOnly] of cases) {
    test(String(input), () => {
      const d = parseDate(input)!;
      assert.equal(new Date(d.ms).toISOString(), iso);
      assert.equal(d.dateOnly, dateOnly);
    });
  }
  test('garbage is undefined', () => {
    for (const bad of ['', 'yesterday', 'Foo, 99 Bar 2025', null, {}, -5, Number.NaN]) assert.equal(parseDate(bad), undefined, String(bad));
  });
});

describe('text', () => {
  test('HTML stripped and entities decoded, also when escaped twice', () => {
    assert.equal(htmlToText('<p>Rates &amp; <b>bonds</b>&nbsp;&#8212; &#x2019;ok&rsquo;</p><script>x()</script>'), 'Rates & bonds — ’ok’');
    assert.equal(htmlToText('&lt;b&gt;Filed:&lt;/b&gt; today'), 'Filed: today');
  });
  test('URLs canonicalised', () => {
    assert.equal(canonicalUrl('HTTPS://Example.COM/a?utm_source=x&id=2#frag'), 'https://example.com/a?id=2');
    assert.equal(canonicalUrl('/rel', 'https://example.com/feed'), 'https://example.com/rel');
    assert.equal(canonicalUrl('ftp://example.com/x'), undefined);
    assert.equal(canonicalUrl('not a url'), undefined);
  });
});

describe('hostile documents', () => {
  test('malformed XML, wrong-shape JSON, empty and unknown bodies are ParseErrors with a code', () => {
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof ParseError, String(err));
        return err.code;
      }
      return 'none';
    };
    assert.equal(code(() => parse('krebs', '<rss><channel><item><title>broken')), 'malformed');
    assert.equal(code(() => parse('cisa-kev', '{"nothing": []}')), 'wrong_shape');
    assert.equal(code(() => parse('cisa-kev', '{broken')), 'malformed');
    assert.equal(code(() => parse('krebs', '')), 'empty_body');
    assert.equal(code(() => parse('krebs', 'hello')), 'unsupported_format');
    assert.equal(code(() => parse('krebs', '<html><body>blocked</body></html>')), 'unsupported_format');
  });

  test('entity expansion (billion laughs) is not performed', () => {
    const lol = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>`;
    const r = parse('krebs', rss(rssItem('Laughs &lol4;', 'Mon, 23 Nov 2026 15:00:00 GMT'), lol));
    assert.ok(r.items.length <= 1);
    assert.ok((r.items[0]?.title.length ?? 0) < 100);
  });

  test('a document of 10,000 items is bounded', () => {
    let items = '';
    for (let i = 0; i < 10_000; i++) items += rssItem(`Item ${i}`, 'Mon, 23 Nov 2026 15:00:00 GMT', `<guid>g${i}</guid>`);
    const r = parse('krebs', rss(items));
    assert.equal(r.items.length, MAX_ITEMS_PER_DOCUMENT);
    assert.equal(r.skipped, 10_000 - MAX_ITEMS_PER_DOCUMENT);
  });

  test('fuzz: truncations and byte flips of every fixture throw nothing but ParseError', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    for (const [id, file] of Object.entries(INDEX)) {
      const good = fixture(file);
      for (let k = 0; k < 8; k++) {
        const bytes = Buffer.from(good.subarray(0, Math.floor(random() * good.length)));
        for (let f = 0; f < 4 && bytes.length > 0; f++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
        try {
          const r = parseSource(source(id), bytes, undefined, NOW);
          for (const item of r.items as ParsedItem[]) assert.ok(Number.isFinite(item.published) && item.url.startsWith('http'));
        } catch (err) {
          assert.ok(err instanceof ParseError, `${id}: ${String(err)}`);
        }
      }
    }
  });
});
