/**
 * The parsers: a contract every format reader and JSON mapping must meet on the recorded
 * fixtures, the specific quirks of the sources, and hostile input.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { filtersOf, SOURCES, WIRES, type SourceDef } from '../src/catalog/index.js';
import { WireIndex } from '../src/search/wire-index.js';
import { renderFixture } from '../src/ingest/fixture-template.js';
import { parseDate } from '../src/ingest/parse/dates.js';
import { lossReasons, MAX_ITEMS_PER_DOCUMENT, noItemsReason, ParseError, parseSource, type ParsedItem } from '../src/ingest/parse/index.js';
import { canonicalUrl, htmlToText } from '../src/ingest/parse/text.js';

const NOW = Date.parse('2026-11-23T15:30:00Z');
const FIXTURES = new URL('../../fixtures/feeds/', import.meta.url);
const INDEX = JSON.parse(readFileSync(new URL('index.json', FIXTURES), 'utf8')) as Record<string, string>;

const source = (id: string): SourceDef => SOURCES.find((s) => s.id === id)!;
const fixture = (file: string) => renderFixture(readFileSync(new URL(file, FIXTURES)), NOW);
const parse = (id: string, body: Uint8Array | string, contentType?: string) => parseSource(source(id), typeof body === 'string' ? Buffer.from(body) : body, contentType, NOW);
const rss = (items: string, decl = '<?xml version="1.0" encoding="UTF-8"?>') => `${decl}<rss version="2.0"><channel><title>t</title><link>https://example.com/</link>${items}</channel></rss>`;
const parseAt = (id: string, body: Uint8Array | string, documentUrl?: string) => parseSource(source(id), typeof body === 'string' ? Buffer.from(body) : body, undefined, NOW, documentUrl);
const urls = (r: { items: ParsedItem[] }) => r.items.map((i) => i.url);
const titles = (r: { items: ParsedItem[] }) => r.items.map((i) => i.title);
const DATE = '<updated>2026-11-23T15:00:00Z</updated>';
const atom = (entries: string, feedAttrs = '', feedLinks = '') =>
  `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom"${feedAttrs}><title>t</title><id>urn:t</id>${feedLinks}${entries}</feed>`;
const atomEntry = (title: string, inner: string, attrs = '') => `<entry${attrs}><id>urn:${encodeURIComponent(title)}</id><title>${title}</title>${DATE}${inner}</entry>`;
const rssItem = (title: string, date: string, extra = '') => `<item><title>${title}</title><link>https://example.com/${encodeURIComponent(title)}</link><pubDate>${date}</pubDate>${extra}</item>`;

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
        assert.ok(filtersOf(s).includes(item.filter), item.filter);
        assert.ok(item.id.length > 0);
      }
      assert.equal(new Set(items.map((i) => i.id)).size, items.length, 'ids unique');
    });
  }
});

describe('source quirks', () => {
  test('EDGAR: one listing of every form, each filing routed to its form, Latin-1 decoded, one item per accession', () => {
    const r = parse('edgar', fixture('atom-edgar.xml'));
    const byForm = (f: string) => r.items.filter((i) => i.filter === f);
    assert.deepEqual(
      byForm('8-k')
        .map((i) => i.id)
        .sort(),
      ['0001234567-26-000001', '0001234567-26-000002', '0001234567-26-000003', '0001234567-26-000999'],
      'the 8-K amendment goes with 8-K',
    );
    for (const form of WIRES.find((w) => w.id === 'edgar')!.filter.values) assert.equal(byForm(form).length >= 3, true, form);
    assert.ok(
      r.items.some((i) => i.title === '8-K - SOCIÉTÉ GÉNÉRALE HOLDINGS (0001000001)'),
      titles(r).join(' | '),
    );
    assert.equal(byForm('form-4').length, 3, 'Issuer and Reporting entries of one filing are one item');
    assert.equal(byForm('13d').length, 3, 'Subject and Filed by entries of one filing are one item');
    assert.match(r.items[0]!.summary, /^Filed: \d{4}-\d\d-\d\d AccNo: /);
  });

  test('EDGAR: a Form 4 is titled with the company, whichever party is listed first, and found by the insider too (real capture)', () => {
    const bytes = readFileSync(new URL('../../fixtures/real/edgar-getcurrent-4-2026-08-27.xml', import.meta.url));
    const r = parseSource(source('edgar'), bytes, 'application/atom+xml', Date.parse('2026-08-27T12:00:00Z'));
    assert.equal(r.items.length, 5);
    // EDGAR lists the insider (Reporting) before the company (Issuer).
    const xos = r.items.find((i) => i.title === '4 - Xos, Inc. (0001819493)');
    assert.ok(xos, titles(r).join(' | '));
    assert.match(xos.summary, /Reporting: Aljomaih Automotive Co\. \(0001878366\)$/);
    assert.equal(r.items.filter((i) => i.title.startsWith('4 - FARADAY FUTURE')).length, 4);
    const wire = new WireIndex({ maxAgeMs: Number.POSITIVE_INFINITY, maxItems: 100 });
    wire.add(r.items, Date.parse('2026-08-27T12:00:00Z'));
    for (const q of ['xos', 'aljomaih', 'faraday', 'yueting']) assert.ok(wire.search({ q, limit: 10, sinceMs: 0 }, Date.parse('2026-08-27T12:00:00Z')).length > 0, q);
  });

  test('EDGAR: forms the wire does not sell are dropped as routine, never a failed poll', () => {
    const entry = (acc: string, form: string) =>
      `<entry><title>${form} - X CORP (0000000001) (Filer)</title><link rel="alternate" type="text/html" href="https://www.sec.gov/Archives/edgar/data/1/${acc}-index.htm"/><summary type="html">x</summary><updated>2026-11-23T10:00:00-05:00</updated><category scheme="http://www.sec.gov/" label="form type" term="${form}"/><id>urn:tag:sec.gov,2008:accession-number=${acc}</id></entry>`;
    const r = parse('edgar', atom(entry('0000000001-26-000001', '424B2') + entry('0000000001-26-000002', 'D') + entry('0000000001-26-000003', '497')));
    assert.equal(r.items.length, 0);
    assert.equal(r.dropped, 3);
    assert.equal(noItemsReason(r), null);
    assert.equal(lossReasons(r).dropReason, '3 of 3 entries dropped: a form the wire does not sell');
    assert.deepEqual(r.span, {
      newest: Date.parse('2026-11-23T15:00:00Z'),
      newestId: 'urn:tag:sec.gov,2008:accession-number=0000000001-26-000001',
      oldest: Date.parse('2026-11-23T15:00:00Z'),
      ids: [1, 2, 3].map((n) => `urn:tag:sec.gov,2008:accession-number=0000000001-26-00000${n}`),
    });
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

  test('OilPrice: an IANA zone name in pubDate; GovInfo: &amp;nbsp; and a line break in titles, no XML declaration; Azure: dates in Z', () => {
    const oil = parse('oilprice', fixture('rss-news-oilprice.xml')).items;
    assert.equal(oil[0]!.published, NOW - 4 * 60_000, 'America/Chicago read as Chicago time, not first seen');
    assert.equal(oil[0]!.publishedIsFirstSeen, undefined);
    assert.equal(oil[1]!.title, "India's Fuel Demand Hits Record High in October");
    const bills = parse('govinfo-bills', fixture('rss-govinfo.xml')).items;
    assert.match(bills[0]!.title, /^H\.R\.\s1234\s\(IH\) - Clean Energy Permitting Act$/);
    assert.equal(bills[0]!.url, 'https://www.govinfo.gov/app/details/BILLS-119hr1234ih');
    assert.equal(bills[0]!.id, 'BILLS-119hr1234ih');
    const azure = parse('status-azure', fixture('rss-status-azure.xml')).items;
    assert.equal(azure[0]!.published, NOW - 4 * 60_000);
  });

  test("GovInfo (hand-written fixtures; no real capture found): a package's id, Congress, bill or law number and version, a court case's docket, from the guid", () => {
    const bills = parseSource(source('govinfo-bills'), fixture('rss-govinfo.xml'), undefined, NOW).items;
    const billIds = Array.from(
      Buffer.from(fixture('rss-govinfo.xml'))
        .toString('utf8')
        .matchAll(/<guid[^>]*>([^<]+)<\/guid>/g),
      (m) => m[1],
    );
    assert.deepEqual(
      bills.map((i) => i.data?.package_id),
      billIds,
    );
    assert.deepEqual(bills[0]!.data, { package_id: 'BILLS-119hr1234ih', congress: 119, bill_type: 'hr', bill_number: 1234, version: 'ih' });
    assert.deepEqual(bills[3]!.data, { package_id: 'BILLS-119sres321is', congress: 119, bill_type: 'sres', bill_number: 321, version: 'is' });
    const laws = parseSource(source('govinfo-plaw'), fixture('rss-govinfo-plaw.xml'), undefined, NOW).items;
    assert.deepEqual(laws[0]!.data, { package_id: 'PLAW-119publ45', congress: 119, law_type: 'publ', law_number: 45 });
    assert.match(laws[0]!.title, /^Public Law 119-45 /, 'the title says the same law');
    const cases = parseSource(source('govinfo-uscourts-cadc'), fixture('rss-govinfo-cadc.xml'), undefined, NOW).items;
    assert.deepEqual(cases[0]!.data, { package_id: 'USCOURTS-caDC-26-01012', court: 'cadc', docket: '26-01012' });
    assert.ok(cases.every((c) => c.data?.court === 'cadc'));
  });

  test('ZDI (hand-written fixture; public copies of its advisories carry the same sentence): the advisory id and the CVSS score the description states', () => {
    const items = parseSource(source('zdi'), fixture('rss-cve-zdi.xml'), undefined, NOW).items;
    assert.ok(items.length >= 4);
    for (const i of items) {
      const stated = /CVSS rating of ([\d.]+)\./.exec(i.summary)![1];
      assert.equal(i.data!.cvss_score, Number(stated), i.title);
      assert.equal(i.data!.advisory, i.title.slice(0, i.title.indexOf(':')));
    }
    assert.deepEqual(items[0]!.data, { cves: ['CVE-2026-40101'], advisory: 'ZDI-26-1101', cvss_score: 8.8 });
  });

  test('SEC litigation: a stray & does not break the feed', () => {
    const items = parse('sec-litigation', fixture('rss-sec-litigation.xml')).items;
    assert.equal(items.length, 4);
    assert.match(items[0]!.summary, /Smith & Co\./);
  });

  test('JSON: KEV dates are days, USGS epoch ms, Remotive ISO without zone is UTC, RemoteOK metadata and other jobs than software skipped, NWS tests skipped', () => {
    const kev = parse('cisa-kev', fixture('json-cisa-kev.json')).items;
    assert.equal(kev[0]!.id, 'CVE-2026-4100');
    assert.equal(kev[0]!.url, 'https://nvd.nist.gov/vuln/detail/CVE-2026-4100');
    assert.ok(kev.every((i) => i.publishedIsFirstSeen));
    const quake = parse('usgs-2.5', fixture('json-usgs.json')).items[0]!;
    assert.equal(quake.published, NOW - 12 * 60_000);
    assert.match(quake.summary, /Magnitude 6.1 .* Tsunami: yes/);
    assert.equal(parse('remotive', fixture('json-remotive.json')).items[0]!.published, NOW - 2 * 3_600_000);
    const rok = parse('remoteok', fixture('json-remoteok.json')).items;
    // The whole board arrives; the source serves software development only: not the designer.
    assert.deepEqual(
      rok.map((i) => i.title.split(' at ')[0]),
      ['Senior Backend Engineer (Go)', 'DevOps Engineer, Kubernetes', 'Data Platform Engineer'],
    );
    const nws = parse('nws-extreme', fixture('json-nws.json')).items;
    assert.equal(nws.length, 4);
    assert.ok(nws.every((i) => !i.title.includes('Test')));
    const awards = parse('usaspending-over-10m', fixture('json-usaspending.json')).items;
    assert.deepEqual(
      awards.map((i) => i.state),
      ['CA', 'TX', 'CA', 'VA', 'NY'],
    );
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

  test('hand-written snippet: different entries under one link get a URL each; one story listed twice keeps one', () => {
    const entry = (title: string, guid: string, link = 'https://status.example.com/') =>
      `<item><title>${title}</title><link>${link}</link><guid isPermaLink="false">${guid}</guid><pubDate>Mon, 23 Nov 2026 15:00:00 GMT</pubDate></item>`;
    const shared = parse('status-aws', rss(entry('Resolved: errors', 'https://status.example.com/#e_2') + entry('Investigating errors', 'https://status.example.com/#e_1') + entry('Note', 'n 3')));
    assert.deepEqual(urls(shared), ['https://status.example.com/#e_2', 'https://status.example.com/#e_1', 'https://status.example.com/#n%203']);
    const wire = new WireIndex({ maxAgeMs: Number.POSITIVE_INFINITY, maxItems: 100 });
    wire.add(shared.items, NOW);
    assert.equal(wire.size, 3, 'three different items stay three');
    // A home page tells no entry apart, even when a poll lists only one.
    assert.deepEqual(urls(parse('status-aws', rss(entry('Alone', 'https://status.example.com/#e_9')))), ['https://status.example.com/#e_9']);
    const story = 'https://news.example.com/articles/one';
    const repeated = parse('bbc-business', rss(entry('One story', `${story}#0`, story) + entry('One story', `${story}#3`, story)));
    assert.deepEqual(urls(repeated), [story, story]);
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
    const r = parse(
      'krebs',
      rss('<item><title></title><link>https://example.com/a</link></item><item><title>JS</title><link>javascript:alert(1)</link></item>' + rssItem('Good', 'Mon, 23 Nov 2026 15:00:00 GMT')),
    );
    assert.equal(r.items.length, 1);
    assert.equal(r.skipped, 2);
  });
});

describe('links resolve as RFC 3986 and XML Base say', () => {
  const EDGAR_FINAL = 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcurrent&type=8-K&count=100&output=atom';

  test('EDGAR fixture: the relative feed-level link does not invalidate the absolute entry links', () => {
    for (const documentUrl of [undefined, EDGAR_FINAL]) {
      const r = parseAt('edgar', fixture('atom-edgar.xml'), documentUrl);
      assert.equal(r.items.length, 25, String(documentUrl));
      assert.equal(r.skipped, 0);
      assert.ok(
        r.items.every((i) => i.url.startsWith('https://www.sec.gov/Archives/edgar/data/')),
        urls(r).join(' '),
      );
      assert.equal(
        r.warnings.some((w) => /usable http/.test(w)),
        false,
      );
    }
  });

  test('hand-written snippet: a relative feed link resolves against the document URL, relative entry links against it', () => {
    const doc = atom(atomEntry('A', '<link href="a/1"/>') + atomEntry('B', '<link href="?id=2"/>'), '', '<link rel="alternate" href="/news/"/>');
    assert.deepEqual(urls(parseAt('theverge', doc, 'https://final.example.org/feeds/atom.xml')), ['https://final.example.org/news/a/1', 'https://final.example.org/news/?id=2']);
    // Without a document URL there is nothing to resolve them against: skipped, not wrong.
    assert.equal(parseAt('theverge', doc).items.length, 0);
  });

  test('hand-written snippet: nested xml:base (feed, entry, link) each resolved against the one above', () => {
    const doc = atom(
      atomEntry('Nested', '<link href="post-1"/>', ' xml:base="2026/"') +
        atomEntry('Root-relative', '<link href="/about"/>') +
        atomEntry('On the link', '<link xml:base="https://cdn.example.net/x/" href="y"/>', ' xml:base="2026/"') +
        atomEntry('Absolute wins', '<link href="https://other.example.com/z"/>', ' xml:base="not-resolvable-but-harmless/"'),
      ' xml:base="https://blog.example.com/posts/"',
      '<link href="https://ignored.example.com/"/>',
    );
    assert.deepEqual(urls(parseAt('theverge', doc, 'https://final.example.org/feed')), [
      'https://blog.example.com/posts/2026/post-1',
      'https://blog.example.com/about',
      'https://cdn.example.net/x/y',
      'https://other.example.com/z',
    ]);
  });

  test('hand-written snippet: a relative xml:base resolves against the final document URL', () => {
    const doc = atom(atomEntry('A', '<link href="a"/>'), ' xml:base="/news/"');
    assert.deepEqual(urls(parseAt('theverge', doc, 'https://moved.example.org/feeds/atom')), ['https://moved.example.org/news/a']);
  });

  test('hand-written snippet: RSS channel xml:base and relative item links; a relative channel link', () => {
    const withBase = `<rss version="2.0" xml:base="https://site.example.com/blog/"><channel><title>t</title><link>https://site.example.com/</link>${rssItem('x', 'Mon, 23 Nov 2026 15:00:00 GMT').replace(/<link>[^<]*<\/link>/, '<link>entry-1</link>')}</channel></rss>`;
    assert.deepEqual(urls(parseAt('krebs', withBase)), ['https://site.example.com/blog/entry-1']);
    const relativeChannel = `<rss version="2.0"><channel><title>t</title><link>/blog/</link><item><title>x</title><link>p/2</link></item><item><title>y</title><link>https://abs.example.com/3</link></item></channel></rss>`;
    assert.deepEqual(urls(parseAt('krebs', relativeChannel, 'https://www.example.com/feed.xml')), ['https://www.example.com/blog/p/2', 'https://abs.example.com/3']);
    assert.deepEqual(urls(parseAt('krebs', relativeChannel)), ['https://abs.example.com/3']);
  });

  test('hand-written snippet: JSON relative links resolve against the document URL', () => {
    const doc = JSON.stringify({ jobs: [{ id: 1, title: 'Dev', company_name: 'X', url: '/remote-jobs/dev-1', publication_date: '2026-11-23T12:00:00' }] });
    assert.deepEqual(urls(parseAt('remotive', doc, 'https://remotive.com/api/remote-jobs?limit=50')), ['https://remotive.com/remote-jobs/dev-1']);
    assert.equal(parseAt('remotive', doc).items.length, 0);
  });

  test('canonicalUrl: an absolute link ignores a base that is not a URL', () => {
    assert.equal(canonicalUrl('https://example.com/a', '/relative/base'), 'https://example.com/a');
    assert.equal(canonicalUrl('  \n https://example.com/b?x=1&utm_medium=rss \n', undefined), 'https://example.com/b?x=1');
    assert.equal(canonicalUrl('//cdn.example.com/c', 'https://example.com/'), 'https://cdn.example.com/c');
  });
});

describe('format variants (hand-written snippets; real captured documents are tested separately)', () => {
  test('Atom text constructs: type="text" is plain text, "html" escaped HTML, "xhtml" inline markup', () => {
    const doc = atom(
      atomEntry('x1', '<link href="https://e.com/1"/><summary type="text">AT&amp;T &lt;3 bonds: use &lt;b&gt; sparingly</summary>').replace(
        '<title>x1</title>',
        '<title type="text">Q&amp;A: &lt;div&gt; soup &#8212; explained</title>',
      ) +
        atomEntry('x2', '<link href="https://e.com/2"/><summary type="html">&lt;p&gt;Rates &amp;amp; &lt;b&gt;bonds&lt;/b&gt;&lt;/p&gt;</summary>').replace(
          '<title>x2</title>',
          '<title type="html">&lt;em&gt;Fed&lt;/em&gt; holds</title>',
        ) +
        atomEntry('x3', '<link href="https://e.com/3"/><content type="html"><![CDATA[<p>Hi <i>there</i> &amp; bye</p>]]></content>').replace(
          '<title>x3</title>',
          '<title type="html"><![CDATA[Cut <b>now</b>]]></title>',
        ) +
        atomEntry('x4', '<link href="https://e.com/4"/><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hello <b>bold</b> world &amp; more</p><p>Second</p></div></content>').replace(
          '<title>x4</title>',
          '<title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">An <em>xhtml</em> title</div></title>',
        ) +
        atomEntry(
          'x5',
          '<link href="https://e.com/5"/><summary type="xhtml"><xhtml:div xmlns:xhtml="http://www.w3.org/1999/xhtml"><xhtml:p>One</xhtml:p><xhtml:p>Two</xhtml:p></xhtml:div></summary>',
        ).replace('<title>x5</title>', '<title>Default type is text</title>'),
    );
    const r = parseAt('theverge', doc);
    assert.deepEqual(titles(r), ['Q&A: <div> soup — explained', 'Fed holds', 'Cut now', 'An xhtml title', 'Default type is text']);
    assert.deepEqual(
      r.items.map((i) => i.summary),
      ['AT&T <3 bonds: use <b> sparingly', 'Rates & bonds', 'Hi there & bye', 'Hello bold world & more Second', 'One Two'],
    );
  });

  test('Atom: summary falls back to content; non-text content (base64 media) is not read as text', () => {
    const r = parseAt(
      'theverge',
      atom(
        atomEntry('Media', '<link href="https://e.com/m"/><content type="application/pdf">JVBERi0xLjQK</content>') +
          atomEntry('Content', '<link href="https://e.com/c"/><content>Plain content</content>'),
      ),
    );
    assert.deepEqual(
      r.items.map((i) => i.summary),
      ['', 'Plain content'],
    );
  });

  test('Atom entries with several links: the alternate HTML page wins over self, enclosure, edit, related, other types', () => {
    const doc = atom(
      atomEntry(
        'all',
        '<link rel="edit" href="https://e.com/edit/1"/><link rel="self" type="application/atom+xml" href="https://e.com/self/1"/><link rel="enclosure" type="audio/mpeg" href="https://e.com/1.mp3"/><link rel="related" href="https://e.com/related/1"/><link rel="alternate" type="application/pdf" href="https://e.com/1.pdf"/><link rel="alternate" type="text/html" href="https://e.com/page/1"/>',
      ) +
        atomEntry('no rel', '<link rel="self" href="https://e.com/self/2"/><link href="https://e.com/page/2"/>') +
        atomEntry(
          'iana rel',
          '<link rel="replies" href="https://e.com/comments/3"/><link rel="http://www.iana.org/assignments/relation/alternate" type="text/html; charset=utf-8" href="https://e.com/page/3"/>',
        ) +
        atomEntry(
          'no alternate',
          '<link rel="edit" href="https://e.com/edit/4"/><link rel="self" href="https://e.com/self/4"/><link rel="enclosure" href="https://e.com/4.mp3"/><link rel="related" href="https://e.com/related/4"/>',
        ) +
        atomEntry('pdf only', '<link rel="self" href="https://e.com/self/5"/><link rel="alternate" type="application/pdf" href="https://e.com/5.pdf"/>'),
    );
    assert.deepEqual(urls(parseAt('theverge', doc)), ['https://e.com/page/1', 'https://e.com/page/2', 'https://e.com/page/3', 'https://e.com/related/4', 'https://e.com/5.pdf']);
  });

  test('RSS: a permalink guid stands in for a missing <link>; isPermaLink="false" never does', () => {
    const doc = rss(
      '<item><title>explicit</title><guid isPermaLink="true">https://e.com/p/1</guid></item>' +
        '<item><title>default</title><guid>https://e.com/p/2</guid></item>' +
        '<item><title>not a permalink</title><guid isPermaLink="false">https://e.com/p/3</guid></item>' +
        '<item><title>opaque id</title><guid>1234567</guid></item>' +
        '<item><title>link wins</title><link>https://e.com/l/5</link><guid isPermaLink="true">https://e.com/p/5</guid></item>',
    );
    const r = parse('krebs', doc);
    assert.deepEqual(
      r.items.map((i) => [i.title, i.url]),
      [
        ['explicit', 'https://e.com/p/1'],
        ['default', 'https://e.com/p/2'],
        ['link wins', 'https://e.com/l/5'],
      ],
    );
    assert.equal(r.skipped, 2);
  });

  test('links in CDATA or among whitespace and newlines (RSS text, Atom href)', () => {
    const r = parse(
      'krebs',
      rss(
        '<item><title>cdata</title><link><![CDATA[https://e.com/c?a=1&b=2]]></link></item>' +
          '<item><title>spaces</title><link>\n      https://e.com/w\n    </link></item>' +
          '<item><title>both</title><link>\n  <![CDATA[ https://e.com/cw ]]>\n</link></item>' +
          '<item><title>guid cdata</title><guid isPermaLink="true"><![CDATA[\n https://e.com/g ]]></guid></item>',
      ),
    );
    assert.deepEqual(urls(r), ['https://e.com/c?a=1&b=2', 'https://e.com/w', 'https://e.com/cw', 'https://e.com/g']);
    const a = parseAt('theverge', atom(atomEntry('href', '<link rel="alternate"\n href="\n  https://e.com/atom  \n"/>')));
    assert.deepEqual(urls(a), ['https://e.com/atom']);
  });

  test('RDF (RSS 1.0): an item with only rdf:about takes it as its link', () => {
    const doc = `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel rdf:about="https://e.com/"><title>t</title><link>https://e.com/</link></channel><item rdf:about="https://e.com/dsa-1"><title>about only</title><dc:date>2026-11-23T15:00:00Z</dc:date></item><item rdf:about="https://e.com/dsa-2"><title>with link</title><link>https://e.com/dsa-2.html</link></item></rdf:RDF>`;
    const r = parse('debian-dsa', doc);
    assert.deepEqual(urls(r), ['https://e.com/dsa-1', 'https://e.com/dsa-2.html']);
    assert.equal(r.items[0]!.published, Date.parse('2026-11-23T15:00:00Z'));
  });

  test('dates in items: dc:date in RSS, Atom published preferred over updated, USGS epoch ms', () => {
    const dc = parse(
      'krebs',
      `<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title><item><title>dc</title><link>https://e.com/1</link><dc:date>2026-11-23T10:00:00-05:00</dc:date></item></channel></rss>`,
    );
    assert.equal(dc.items[0]!.published, Date.parse('2026-11-23T15:00:00Z'));
    const both = parseAt(
      'theverge',
      atom('<entry><id>urn:1</id><title>both</title><link href="https://e.com/a"/><updated>2026-11-23T15:20:00Z</updated><published>2026-11-23T14:00:00Z</published></entry>'),
    );
    assert.equal(both.items[0]!.published, Date.parse('2026-11-23T14:00:00Z'));
    const quake = JSON.stringify({
      type: 'FeatureCollection',
      features: [{ id: 'us1', properties: { title: 'M 5.0', url: 'https://earthquake.usgs.gov/earthquakes/eventpage/us1', time: NOW - 60_000, mag: 5 }, geometry: { coordinates: [0, 0, 10] } }],
    });
    assert.equal(parse('usgs-2.5', quake).items[0]!.published, NOW - 60_000);
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
    // Hand-written variants of the forms the sources use.
    ['Wed, 29 Jan 25 23:39:41 GMT', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 15:39:41 PST', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 15:39:41 pdt', '2025-01-29T22:39:41.000Z', false],
    ['Wed, 29 Jan 2025 23:39:41 Z', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 23:39:41 +0000', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 23:39:41 +00:00', '2025-01-29T23:39:41.000Z', false],
    ['Thu, 30 Jan 2025 05:09:41 +0530', '2025-01-29T23:39:41.000Z', false],
    ['29 Jan 2025 18:39:41 -0500', '2025-01-29T23:39:41.000Z', false],
    ['Wednesday, 29 January 2025 23:39:41 GMT', '2025-01-29T23:39:41.000Z', false],
    ['Wednesday, 29-Jan-25 23:39:41 GMT', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 23:39:41 GMT+1', '2025-01-29T22:39:41.000Z', false],
    ['Thu, 30 Jan 2025 00:39:41 CET', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 29 Jan 2025 23:39:41', '2025-01-29T23:39:41.000Z', false],
    ['Wed, 1 Jan 2025 09:05 GMT', '2025-01-01T09:05:00.000Z', false],
    ['29 Jan 2025', '2025-01-29T00:00:00.000Z', true],
    ['2025-01-29T23:39:41.123456Z', '2025-01-29T23:39:41.123Z', false],
    ['2025-01-29T18:39:41.5-05:00', '2025-01-29T23:39:41.500Z', false],
    ['2025-01-29T23:39:41+0000', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T23:39:41 +00:00', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-30T04:39:41+05', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29 23:39:41', '2025-01-29T23:39:41.000Z', false],
    ['2025-01-29T23:39Z', '2025-01-29T23:39:00.000Z', false],
    ['2024-02-29', '2024-02-29T00:00:00.000Z', true],
    // An IANA zone name instead of an offset, as OilPrice writes it: its offset on that date.
    ['Tue, 15 Sep 2026 16:01:48 America/Chicago', '2026-09-15T21:01:48.000Z', false],
    ['Tue, 15 Dec 2026 16:01:48 America/Chicago', '2026-12-15T22:01:48.000Z', false],
    ['Sun, 08 Mar 2026 03:30:00 America/New_York', '2026-03-08T07:30:00.000Z', false],
    ['Sun, 29 Mar 2026 12:00:00 Europe/London', '2026-03-29T11:00:00.000Z', false],
    // EIA: two spaces before the time, and EST all year.
    ['Wed, 07 Oct 2026  09:00:00 EST', '2026-10-07T14:00:00.000Z', false],
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
    // Out of range is refused, not rolled over into the next day or month; unknown zones are not guessed.
    for (const bad of [
      'Wed, 29 Jan 2025 25:39:41 GMT',
      'Wed, 32 Jan 2025 23:39:41 GMT',
      'Mon, 30 Feb 2026 10:00:00 GMT',
      '2025-02-30',
      '2025-02-29',
      'Wed, 29 Jan 2025 23:39:41 XYZ',
      'Wed, 29 Jan 2025 23:39:41 Mars/Olympus_Mons',
    ]) {
      assert.equal(parseDate(bad), undefined, bad);
    }
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
    assert.equal(
      code(() => parse('krebs', '<rss><channel><item><title>broken')),
      'malformed',
    );
    assert.equal(
      code(() => parse('cisa-kev', '{"nothing": []}')),
      'wrong_shape',
    );
    assert.equal(
      code(() => parse('cisa-kev', '{broken')),
      'malformed',
    );
    assert.equal(
      code(() => parse('krebs', '')),
      'empty_body',
    );
    assert.equal(
      code(() => parse('krebs', 'hello')),
      'unsupported_format',
    );
    assert.equal(
      code(() => parse('krebs', '<html><body>blocked</body></html>')),
      'unsupported_format',
    );
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
    const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
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
