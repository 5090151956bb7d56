/**
 * How well the ticker tagger does on real headlines (`npm run bench:tagging`): precision of the tags
 * it emits, recall on headlines that name their labelled company, the worst confusions, and the
 * time per headline. A benchmark, not a test: it prints PASS/FAIL against the targets and exits 0.
 *
 * The labelled set (fixtures/tagging/headlines.csv, see PROVENANCE.md there) is Benzinga headlines
 * labelled with the ticker whose news page filed them. Which rows "name" their company is decided
 * here by an explicit rule that does not use the tagger (see `namesCompany`), and round-ups are
 * marked by the title patterns in `ROUND_UP`.
 */
import { readFileSync } from 'node:fs';
import { CompanyMap } from '../src/tickers/company-map.js';
import { Tagger } from '../src/tickers/tagger.js';

const PRECISION_TARGET = 0.95;
const RECALL_TARGET = 0.7;
const PROVENANCE =
  'Benzinga headlines from Kaggle "Massive Stock News Analysis DB" (analyst_ratings_processed.csv) via GitHub EnderonVuthaj/Final_Project_TextGenerator@146e9dcc; rows whose label ticker is in the SEC map of 2025-12-14';

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

interface Row {
  id: string;
  title: string;
  label: string;
}

const lines = readFileSync(new URL('fixtures/tagging/headlines.csv', root), 'utf8').split('\n').filter(Boolean);
const header = parseCsvLine(lines[0]!);
const [iId, iTitle, iStock] = [0, header.indexOf('title'), header.indexOf('stock')];
const rows: Row[] = lines.slice(1).map((l) => {
  const f = parseCsvLine(l);
  return { id: f[iId]!, title: f[iTitle]!, label: f[iStock]! };
});

/** The label's company's tickers (every share class). */
function classes(label: string): Set<string> {
  const l = map.byTicker(label);
  return new Set(l ? map.byCik(l.cik).map((x) => x.ticker) : [label]);
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Whether a headline names its labelled company, without the tagger: not a round-up, and either the
 * ticker appears as `$T`, `(T)` or `EXCHANGE: T`, or the first word (3+ letters) of the company's SEC
 * name, leading "The" dropped, appears capitalised as a whole word (possessive allowed).
 */
function namesCompany(r: Row): boolean {
  return !ROUND_UP.test(r.title) && mentions(r.title, r.label);
}

/** The rule of `namesCompany` without the round-up test, for any ticker. */
function mentions(title: string, ticker: string): boolean {
  const t = esc(ticker);
  if (new RegExp(`\\$${t}(?![A-Za-z0-9])|\\(${t}\\)|[A-Za-z]\\s*:\\s*${t}(?![A-Za-z0-9])`).test(title)) return true;
  const name = map.byTicker(ticker)?.name ?? '';
  const first = name.replace(/^the\s+/i, '').split(/[^A-Za-z0-9]+/)[0] ?? '';
  if (first.length < 3) return false;
  const word = first[0]!.toUpperCase() + first.slice(1).toLowerCase();
  return new RegExp(`(?<![A-Za-z0-9])(${esc(word)}|${esc(first.toUpperCase())})(?![A-Za-z0-9])`).test(title);
}

/** One configuration of the tagger over the set: precision, recall, the worst confusions, speed. */
function run(label: string, opts: { names?: boolean }): void {
  console.log(`\n== ${label}`);
  const t0 = performance.now();
  const tagger = new Tagger(map, opts);
  const buildMs = performance.now() - t0;

  let emitted = 0;
  let correct = 0;
  let emittedNamed = 0;
  let correctNamed = 0;
  let named = 0;
  let found = 0;
  let roundUps = 0;
  let namedOther = 0;
  const confusions = new Map<string, { title: string; label: string; tag: string; n: number; named: boolean }>();
  for (const r of rows) {
    const tags = tagger.tag(r.title);
    const ok = classes(r.label);
    const isNamed = namesCompany(r);
    if (ROUND_UP.test(r.title)) roundUps++;
    for (const t of tags) {
      emitted++;
      if (isNamed) emittedNamed++;
      if (ok.has(t)) {
        correct++;
        if (isNamed) correctNamed++;
      } else {
        const other = mentions(r.title, t);
        if (other) namedOther++;
        const key = `${r.title}\u0000${t}`;
        const c = confusions.get(key);
        if (c) c.n++;
        else confusions.set(key, { title: r.title, label: r.label, tag: t, n: 1, named: other });
      }
    }
    if (isNamed) {
      named++;
      if (tags.some((t) => ok.has(t))) found++;
    }
  }

  // time: several passes over the set, each tag() call timed on its own
  const times: number[] = [];
  for (let pass = 0; pass < 20; pass++) {
    for (const r of rows) {
      const s = process.hrtime.bigint();
      tagger.tag(r.title);
      times.push(Number(process.hrtime.bigint() - s) / 1000);
    }
  }
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;

  const precision = emitted ? correct / emitted : 1;
  const recall = named ? found / named : 0;
  console.log(`labelled set: ${rows.length} headlines (${roundUps} round-ups), ${new Set(rows.map((r) => r.label)).size} tickers`);
  console.log(`provenance: ${PROVENANCE}`);
  console.log(`tagger built in ${buildMs.toFixed(0)} ms from ${map.size} SEC listings`);
  console.log(`precision: ${correct}/${emitted} = ${precision.toFixed(3)} (tags equal to the label or its other share class; on headlines that name their company: ${correctNamed}/${emittedNamed})`);
  console.log(
    `  of the ${emitted - correct} other tags, ${namedOther} are companies the headline also names by the same rule (multi-company headlines, analysts); counting those as right: ${((correct + namedOther) / Math.max(1, emitted)).toFixed(3)}`,
  );
  console.log(`recall: ${found}/${named} = ${recall.toFixed(3)} (headlines that name their labelled company, by the rule in namesCompany)`);
  console.log(`tag() per headline: median ${pct(0.5).toFixed(1)} µs, p99 ${pct(0.99).toFixed(1)} µs (${times.length} calls)`);
  // worst first: tags of companies the headline does not name, then the most repeated
  const worst = [...confusions.values()].sort((a, b) => Number(a.named) - Number(b.named) || b.n - a.n).slice(0, 15);
  console.log(`worst confusions (${confusions.size} distinct; emitted tag ≠ label; unnamed = the headline does not name the tagged company by the rule):`);
  for (const c of worst) console.log(`  ${c.n}× [label ${c.label} → emitted ${c.tag}${c.named ? '' : ', unnamed'}] ${c.title.slice(0, 150)}`);
  if (process.env.ALL_CONFUSIONS) for (const c of confusions.values()) console.log(`  ALL ${c.named ? 'named  ' : 'UNNAMED'} ${c.label}→${c.tag} ${c.title.slice(0, 140)}`);
  const pass = precision >= PRECISION_TARGET && recall >= RECALL_TARGET;
  console.log(`${pass ? 'PASS' : 'FAIL'}: precision ${precision.toFixed(3)} (target ≥ ${PRECISION_TARGET}), recall ${recall.toFixed(3)} (target ≥ ${RECALL_TARGET})`);
}

// The service tags exchange mentions and cashtags only (src/tickers/tagger.ts says why names are off).
run('the service: exchange mentions and cashtags', {});
run('with company names', { names: true });
