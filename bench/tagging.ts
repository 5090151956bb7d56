/**
 * How well the ticker tagger does on real news (`npm run bench:tagging`): strict precision of the tags
 * it emits, recall on labels whose company the text names, the most frequent wrong tags, the worst
 * confusions, and the time per text. A benchmark, not a test: it prints PASS/FAIL against the targets
 * and exits 0.
 *
 * Three labelled sets (fixtures/tagging/, see PROVENANCE.md there), each scored with exchange mentions
 * and cashtags alone and as the service tags (names in the headline, explicit mentions in the summary
 * too):
 * - Benzinga's headlines in the Alpha Vantage dump, labelled with the stocks Benzinga's editors tagged
 *   each story with (cut off the headline the tagger reads) and Alpha Vantage's: what each headline is
 *   about. The targets apply to the service on this set.
 * - headlines.csv: Benzinga headlines labelled with the one ticker whose news page filed them; round-ups
 *   are marked by the title patterns in `ROUND_UP` and never count for recall.
 * - alphavantage-news.csv: Alpha Vantage NEWS_SENTIMENT articles, text = title + summary, labels = every
 *   ticker of its `ticker_sentiment` that the SEC map lists.
 * Strict precision counts a tag right only when it is a label (or another share class of one); the
 * second figure also accepts tags of companies the text names by the bench's own rule (`mentions`),
 * which is generous to everyday-word names (a capitalised "Here" counts as naming Here Group). Which
 * labels the text "names" is decided by `mentions` too, without the tagger. Last, unlabelled: the
 * tickers the service gives the stories of its own real captures (fixtures/real/), for reading.
 */
import { readFileSync } from 'node:fs';
import { SOURCES } from '../src/catalog/index.js';
import { TAGGED_WIRES } from '../src/catalog/facets.js';
import { parseSource } from '../src/ingest/parse/index.js';
import { CompanyMap } from '../src/tickers/company-map.js';
import { Tagger } from '../src/tickers/tagger.js';

const PRECISION_TARGET = 0.95;
const RECALL_TARGET = 0.7;

/** Market round-ups and templates: filed under every ticker they list, naming none in the headline. */
const ROUND_UP =
  /52-Week|Biggest Movers|Stocks Moving|Mid-Day|Pre-Market|After-Hours|Earnings Scheduled|Benzinga|Option Alert|Options Alert|\bETFs?\b|Top Ratings|Upgrades, Downgrades|Stocks To Watch|Movers|Gainers|Losers|\bseveral\b.*\b(companies|stocks)\b|Sector/i;

const root = new URL('../../', import.meta.url);
const map = CompanyMap.parse(readFileSync(new URL('fixtures/real/sec-company_tickers_exchange-2025-12-14.json', root), 'utf8'));

/** One CSV record on one line (RFC 4180 quoting). */
function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) throw new Error(`unterminated quote: ${line}`);
        v += line.slice(i, q);
        if (line[q + 1] === '"') {
          v += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(v);
      i++; // the comma
    } else {
      const c = line.indexOf(',', i);
      const end = c < 0 ? line.length : c;
      out.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return out;
}

/** One labelled text: the tickers it is labelled with, and whether the bench counts it for recall. */
interface Row {
  id: string;
  /** The headline, and the summary under it (empty for headline-only sets). */
  title: string;
  summary: string;
  /** What the bench's own rules read: the headline and the summary. */
  text: string;
  /** Label tickers (each in the SEC map): a tag is right when it is one of them. */
  labels: string[];
  /** The labels recall is measured on, where only some labels say what the text is about (default: all). */
  about?: string[];
  /** Round-ups never count for recall (Benzinga only; see ROUND_UP). */
  roundUp: boolean;
}

interface LabelledSet {
  name: string;
  provenance: string;
  rows: Row[];
  /** How often each text is tagged for the timing (longer texts, fewer passes). */
  passes: number;
}

function readCsv(file: string): { header: string[]; records: string[][] } {
  const lines = readFileSync(new URL(`fixtures/tagging/${file}`, root), 'utf8')
    .split('\n')
    .filter(Boolean);
  return { header: parseCsvLine(lines[0]!), records: lines.slice(1).map(parseCsvLine) };
}

/** Benzinga headlines, one label each: the ticker whose news page filed the story. */
function benzinga(): LabelledSet {
  const { header, records } = readCsv('headlines.csv');
  const [iTitle, iStock] = [header.indexOf('title'), header.indexOf('stock')];
  return {
    name: 'Benzinga headlines (headlines.csv)',
    provenance:
      'Benzinga headlines from Kaggle "Massive Stock News Analysis DB" (analyst_ratings_processed.csv) via GitHub EnderonVuthaj/Final_Project_TextGenerator@146e9dcc; rows whose label ticker is in the SEC map of 2025-12-14',
    rows: records.map((f) => ({ id: f[0]!, title: f[iTitle]!, summary: '', text: f[iTitle]!, labels: [f[iStock]!], roundUp: ROUND_UP.test(f[iTitle]!) })),
    passes: 20,
  };
}

/**
 * Alpha Vantage NEWS_SENTIMENT articles, several labels each: text = title + ". " + summary, labels =
 * every ticker of `ticker_sentiment` that the SEC map lists (`CRYPTO:`, `FOREX:` and delisted
 * tickers dropped). Alpha Vantage's labels are its own entity tagging of the article; they miss
 * companies the text names and include some it does not.
 */
function alphaVantage(): LabelledSet {
  const { header, records } = readCsv('alphavantage-news.csv');
  const [iTitle, iUrl, iSummary, iTs] = ['title', 'url', 'summary', 'ticker_sentiment'].map((h) => header.indexOf(h)) as [number, number, number, number];
  return {
    name: 'Alpha Vantage news (alphavantage-news.csv)',
    provenance: 'Alpha Vantage NEWS_SENTIMENT dump, Dec 2024–Mar 2025, via GitHub nghiatran2609/llm-financial-sentiment-analysis@0261364e data/raw/alv_news_raw.csv; first row per distinct title',
    rows: records.map((f) => {
      const labels = alphaVantageLabels(f[iTs]!);
      return { id: f[iUrl]!, title: f[iTitle]!, summary: f[iSummary]!, text: `${f[iTitle]!}. ${f[iSummary]!}`, labels, roundUp: false };
    }),
    passes: 3,
  };
}

/**
 * Benzinga's headlines in the Alpha Vantage dump, each with the stocks Benzinga's editors tagged it
 * with. Benzinga appends its tags to the headline (`... - Monolithic Power Systems ( NASDAQ:MPWR ) ,
 * Apple ( NASDAQ:AAPL ) `); the bench cuts that list off, so the tagger sees the headline a reader
 * sees, and takes the tickers in it as what the story is about. Labels = Benzinga's tags and Alpha
 * Vantage's (each misses companies the other has); recall counts Benzinga's tags only.
 */
function benzingaTagged(): LabelledSet {
  const { header, records } = readCsv('alphavantage-news.csv');
  const [iTitle, iUrl, iSource, iTs] = ['title', 'url', 'source', 'ticker_sentiment'].map((h) => header.indexOf(h)) as [number, number, number, number];
  const rows: Row[] = [];
  for (const f of records) {
    if (f[iSource] !== 'Benzinga') continue;
    const title = f[iTitle]!;
    const list = BENZINGA_TAGS.exec(title);
    const about = list ? inMap([...list[1]!.matchAll(/:\s*([A-Z][A-Z0-9.-]*)\s*\)/g)].map((m) => m[1]!.replace('.', '-'))) : [];
    const av = alphaVantageLabels(f[iTs]!);
    const headline = list ? title.slice(0, list.index) : title;
    rows.push({ id: f[iUrl]!, title: headline, summary: '', text: headline, labels: [...new Set([...about, ...av])], about, roundUp: false });
  }
  return {
    name: "Benzinga headlines with Benzinga's own stock tags (alphavantage-news.csv, source Benzinga)",
    provenance: "the Benzinga rows of the Alpha Vantage dump; Benzinga's tag list cut off the headline; labels = Benzinga's tags + Alpha Vantage's, recall on Benzinga's",
    rows,
    passes: 20,
  };
}

/** The tickers the SEC map lists, as it writes them, each once. */
const inMap = (tickers: string[]) => [...new Set(tickers.filter((t) => map.byTicker(t)).map((t) => map.byTicker(t)!.ticker))];

/** Alpha Vantage's labels of an article: the tickers of its `ticker_sentiment` (a Python-repr list) that the SEC map lists. */
const alphaVantageLabels = (tickerSentiment: string) => inMap([...tickerSentiment.matchAll(/'ticker': '([^']+)'/g)].map((m) => m[1]!));

/** Benzinga's tag list at the end of a headline: ` - Name ( VENUE:TICKER ) , Name ( VENUE:TICKER ) `. */
const BENZINGA_TAGS = / - ((?:[^()]+\(\s*[A-Za-z ]+:\s*[A-Z][A-Z0-9.-]*\s*\)\s*,?\s*)+)$/;

/** The label's company's tickers (every share class). */
function classes(label: string): Set<string> {
  const l = map.byTicker(label);
  return new Set(l ? map.byCik(l.cik).map((x) => x.ticker) : [label]);
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether a text names a company, without the tagger: the ticker appears as `$T`, `(T)` (spaces
 * allowed inside the brackets) or `EXCHANGE: T`, or the first word (3+ letters) of the company's SEC
 * name, leading "The" dropped, appears capitalised as a whole word (possessive allowed). Recall counts
 * a label only where this holds and the row is not a round-up (`namesCompany`).
 */
function mentions(text: string, ticker: string): boolean {
  const t = esc(ticker);
  if (new RegExp(`\\$${t}(?![A-Za-z0-9])|\\(\\s*${t}\\s*\\)|[A-Za-z]\\s*:\\s*${t}(?![A-Za-z0-9])`).test(text)) return true;
  const name = map.byTicker(ticker)?.name ?? '';
  const first = name.replace(/^the\s+/i, '').split(/[^A-Za-z0-9]+/)[0] ?? '';
  if (first.length < 3) return false;
  const word = first[0]!.toUpperCase() + first.slice(1).toLowerCase();
  return new RegExp(`(?<![A-Za-z0-9])(${esc(word)}|${esc(first.toUpperCase())})(?![A-Za-z0-9])`).test(text);
}

function namesCompany(r: Row, label: string): boolean {
  return !r.roundUp && mentions(r.text, label);
}

/** One way of tagging a row with a tagger. */
interface Config {
  label: string;
  names: boolean;
  tag: (tagger: Tagger, r: Row) => string[];
}

/** One configuration of the tagger over one set: precision, recall, the worst confusions, speed. */
function run(set: LabelledSet, config: Config, target: boolean): void {
  const rows = set.rows;
  console.log(`\n== ${set.name}: ${config.label}`);
  const t0 = performance.now();
  const tagger = new Tagger(map, { names: config.names });
  const buildMs = performance.now() - t0;
  const tag = (r: Row) => config.tag(tagger, r);

  let emitted = 0;
  let correct = 0;
  let named = 0;
  let found = 0;
  let namedOther = 0;
  const confusions = new Map<string, { text: string; labels: string[]; tag: string; n: number; named: boolean }>();
  const byTag = new Map<string, { n: number; unnamed: number; example: string }>();
  for (const r of rows) {
    const tags = tag(r);
    const ok = new Set(r.labels.flatMap((l) => [...classes(l)]));
    for (const t of tags) {
      emitted++;
      if (ok.has(t)) correct++;
      else {
        const other = mentions(r.text, t);
        if (other) namedOther++;
        const key = `${r.text}\u0000${t}`;
        const c = confusions.get(key);
        if (c) c.n++;
        else confusions.set(key, { text: r.text, labels: r.labels, tag: t, n: 1, named: other });
        const b = byTag.get(t) ?? { n: 0, unnamed: 0, example: r.text };
        b.n++;
        if (!other) b.unnamed++;
        byTag.set(t, b);
      }
    }
    for (const l of r.about ?? r.labels) {
      if (!namesCompany(r, l)) continue;
      named++;
      const cls = classes(l);
      if (tags.some((t) => cls.has(t))) found++;
    }
  }

  // time: several passes over the set, each tag() call timed on its own
  const times: number[] = [];
  for (let pass = 0; pass < set.passes; pass++) {
    for (const r of rows) {
      const s = process.hrtime.bigint();
      tag(r);
      times.push(Number(process.hrtime.bigint() - s) / 1000);
    }
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;

  const precision = emitted ? correct / emitted : 1;
  const recall = named ? found / named : 0;
  const labels = rows.reduce((n, r) => n + r.labels.length, 0);
  console.log(`labelled set: ${rows.length} texts (${rows.filter((r) => r.roundUp).length} round-ups), ${labels} labels, ${new Set(rows.flatMap((r) => r.labels)).size} tickers`);
  console.log(`provenance: ${set.provenance}`);
  console.log(`tagger built in ${buildMs.toFixed(0)} ms from ${map.size} SEC listings`);
  console.log(`precision (strict): ${correct}/${emitted} = ${precision.toFixed(3)} (tags equal to a label or its other share class)`);
  console.log(
    `  of the ${emitted - correct} other tags, ${namedOther} are companies the text also names by the bench's rule (mentions); counting those as right: ${((correct + namedOther) / Math.max(1, emitted)).toFixed(3)}`,
  );
  console.log(`recall: ${found}/${named} = ${recall.toFixed(3)} (labels whose company the text names, by the rule in namesCompany)`);
  console.log(`tag() per text: median ${pct(0.5).toFixed(1)} µs, p99 ${pct(0.99).toFixed(1)} µs (${times.length} calls)`);
  const tops = [...byTag.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 15);
  console.log(`most frequent wrong tags (tag: times, of which the text does not name it by the rule):`);
  for (const [t, b] of tops) console.log(`  ${t} (${map.byTicker(t)?.name ?? '?'}): ${b.n}× (${b.unnamed} unnamed), e.g. ${b.example.slice(0, 110)}`);
  // worst first: tags of companies the text does not name, then the most repeated
  const worst = [...confusions.values()].sort((a, b) => Number(a.named) - Number(b.named) || b.n - a.n).slice(0, 15);
  console.log(`worst confusions (${confusions.size} distinct; emitted tag not a label; unnamed = the text does not name the tagged company by the rule):`);
  for (const c of worst) console.log(`  ${c.n}× [labels ${c.labels.join(' ') || '-'} → emitted ${c.tag}${c.named ? '' : ', unnamed'}] ${c.text.slice(0, 150)}`);
  const pass = precision >= PRECISION_TARGET && recall >= RECALL_TARGET;
  const verdict = target ? (pass ? 'PASS' : 'FAIL') : 'for comparison';
  console.log(`${verdict}: precision ${precision.toFixed(3)} (target ≥ ${PRECISION_TARGET}), recall ${recall.toFixed(3)} (target ≥ ${RECALL_TARGET})`);
}

const EXPLICIT: Config = { label: 'exchange mentions and cashtags only', names: false, tag: (t, r) => t.tag(r.text) };
const SERVICE: Config = { label: 'the service: names in the headline, exchange mentions and cashtags in both', names: true, tag: (t, r) => t.tagStory(r.title, r.summary) };
const NAMES_EVERYWHERE: Config = { label: 'names in the summary too', names: true, tag: (t, r) => t.tag(r.text) };

// The targets apply to the service on the set labelled with what each headline is about (Benzinga's
// own tags); the other two sets' labels say where a story was filed, or what an entity tagger saw.
const tagged = benzingaTagged();
for (const set of [benzinga(), alphaVantage(), tagged]) {
  for (const config of [EXPLICIT, SERVICE]) run(set, config, set === tagged && config === SERVICE);
  if (set.rows.some((r) => r.summary)) run(set, NAMES_EVERYWHERE, false);
}

// Unlabelled, for reading: the tickers the service gives the stories of its own real captures.
{
  const real = new URL('fixtures/real/', root);
  const tagger = new Tagger(map, { names: true });
  const context = { companies: map, tag: (headline: string, summary: string) => tagger.tagStory(headline, summary) };
  const captures = (JSON.parse(readFileSync(new URL('index.json', real), 'utf8')) as { file: string; sourceId: string; contentType: string; finalUrl: string }[]).flatMap((c) => {
    const source = SOURCES.find((s) => s.id === c.sourceId);
    return source && TAGGED_WIRES.includes(source.wire.id) ? [{ ...c, source }] : [];
  });
  let stories = 0;
  const lines: string[] = [];
  for (const c of captures) {
    for (const item of parseSource(c.source, readFileSync(new URL(c.file, real)), c.contentType, Date.UTC(2100, 0, 1), c.finalUrl, context).items) {
      stories++;
      const tickers = item.data?.tickers as string[] | undefined;
      if (tickers?.length) lines.push(`  ${c.source.wire.id} ${tickers.join(',')}: ${item.title.slice(0, 110)}`);
    }
  }
  console.log(`\n== the service's own real captures (fixtures/real/, wires ${TAGGED_WIRES.join(', ')}): ${lines.length} of ${stories} stories tagged`);
  for (const line of lines) console.log(line);
}
