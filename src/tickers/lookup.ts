/**
 * `/tickers`: a company's ticker, CIK and listings from SEC's map, by ticker, by CIK or by
 * name, free, so an agent can turn "Nvidia" into NVDA before it pays for `ticker=NVDA`. The
 * name index is built once per map (a day's version), not per request.
 */
import { CIK_PATTERN, TICKER_PATTERN } from '../catalog/facets.js';
import { LOOKUP_LIMIT, LOOKUP_Q_MAX as Q_MAX } from '../catalog/lookup-params.js';
import { apiError, type ApiError } from '../http/errors.js';
import type { CompanyMap, Listing } from './company-map.js';

export interface Company {
  cik: string;
  name: string;
  /** The first-listed ticker. */
  ticker: string;
  tickers: string[];
  exchange: string | null;
}

/** Words of a company name or a query, as compared: lower case, letters and digits. */
const words = (text: string) =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .match(/[a-z0-9]+/g) ?? [];

export class CompanyLookup {
  private readonly companies: Company[] = [];
  private readonly byCik = new Map<string, Company>();
  /** Every word of every name, sorted, each with the companies whose name has it. */
  private readonly vocabulary: string[];
  private readonly withWord = new Map<string, Company[]>();

  constructor(readonly map: CompanyMap) {
    const listed = new Map<string, Listing[]>();
    for (const l of map.listings) listed.set(l.cik, [...(listed.get(l.cik) ?? []), l]);
    for (const [cik, ls] of listed) {
      const c: Company = { cik, name: ls[0]!.name, ticker: ls[0]!.ticker, tickers: ls.map((l) => l.ticker), exchange: ls[0]!.exchange };
      this.companies.push(c);
      this.byCik.set(cik, c);
      for (const w of new Set(words(c.name))) this.withWord.set(w, [...(this.withWord.get(w) ?? []), c]);
    }
    this.vocabulary = [...this.withWord.keys()].sort();
  }

  ticker(ticker: string): Company[] {
    const l = this.map.byTicker(ticker);
    return l ? [this.byCik.get(l.cik)!] : [];
  }

  cik(cik: string): Company[] {
    const c = this.byCik.get(cik.padStart(10, '0'));
    return c ? [c] : [];
  }

  /**
   * Companies whose name has every word of `q`, the last one as a prefix ("nvid" finds NVIDIA);
   * a company whose ticker is `q` comes first, then names that start with `q`, then the rest;
   * within each, the shorter name first (`Apple Inc.` before `Apple Hospitality REIT, Inc.`).
   */
  search(q: string, limit: number): Company[] {
    const terms = words(q);
    if (terms.length === 0) return [];
    let found: Set<Company> | null = null;
    terms.forEach((term, i) => {
      const matches = new Set<Company>(i === terms.length - 1 ? this.withPrefix(term) : (this.withWord.get(term) ?? []));
      found = found === null ? matches : new Set([...found].filter((c) => matches.has(c)));
    });
    const exact = this.ticker(q.trim());
    const start = terms.join(' ');
    const rank = (c: Company) => (exact[0] === c ? 0 : words(c.name).join(' ').startsWith(start) ? 1 : 2);
    const out = [...new Set([...exact, ...found!])].sort((a, b) => rank(a) - rank(b) || a.name.length - b.name.length || a.name.localeCompare(b.name));
    return out.slice(0, limit);
  }

  private withPrefix(prefix: string): Company[] {
    const out: Company[] = [];
    let lo = 0;
    let hi = this.vocabulary.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.vocabulary[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.vocabulary.length && this.vocabulary[i]!.startsWith(prefix); i++) out.push(...this.withWord.get(this.vocabulary[i]!)!);
    return out;
  }
}

export type LookupQuery = { by: 'q' | 'cik' | 'ticker'; value: string; limit: number };

/** Exactly one of q, cik and ticker, and an optional limit: the rules, worded as the routes word theirs. */
export function parseLookup(values: Record<string, unknown>): { ok: true; query: LookupQuery } | { ok: false; error: ApiError } {
  const given = (['q', 'cik', 'ticker'] as const).filter((k) => values[k] !== undefined);
  if (given.length !== 1)
    return { ok: false, error: apiError(400, given.length ? 'invalid_parameter' : 'missing_parameter', 'Give exactly one of q (a company name), cik or ticker.', { allowed: ['q', 'cik', 'ticker'] }) };
  const by = given[0]!;
  const value = String(values[by]).trim();
  const limitText = values.limit === undefined ? undefined : String(values.limit);
  const limit = limitText === undefined ? LOOKUP_LIMIT.default : /^\d{1,2}$/.test(limitText) ? Number(limitText) : 0;
  if (limit < 1 || limit > LOOKUP_LIMIT.max) return { ok: false, error: apiError(400, 'invalid_parameter', `limit must be an integer from 1 to ${LOOKUP_LIMIT.max}`, { param: 'limit' }) };
  const bad = (expected: string) => ({ ok: false as const, error: apiError(400, 'invalid_parameter', `${by} must be ${expected}`, { param: by }) });
  if (by === 'cik' && !CIK_PATTERN.test(value)) return bad('1 to 10 digits');
  if (by === 'ticker' && !TICKER_PATTERN.test(value)) return bad('a ticker such as NVDA or BRK-B');
  if (by === 'q' && (value.length > Q_MAX || words(value).length === 0)) return bad(`1 to ${Q_MAX} characters with a letter or digit`);
  return { ok: true, query: { by, value, limit } };
}

export function lookup(index: CompanyLookup, q: LookupQuery): Company[] {
  if (q.by === 'ticker') return index.ticker(q.value);
  if (q.by === 'cik') return index.cik(q.value);
  return index.search(q.value, q.limit);
}

const NO_MAP = apiError(503, 'ticker_map_unavailable', "SEC's ticker map is not loaded yet on this server; retry in a minute.");
/** One name index per map (a new one arrives once a day). */
const indexes = new WeakMap<CompanyMap, CompanyLookup>();

/** A lookup's answer, for /tickers and the MCP tool alike: the JSON body, or the error. */
export function answerLookup(map: CompanyMap | null, values: Record<string, unknown>): { ok: true; body: string } | { ok: false; error: ApiError } {
  const parsed = parseLookup(values);
  if (!parsed.ok) return parsed;
  if (!map) return { ok: false, error: NO_MAP };
  let index = indexes.get(map);
  if (!index) indexes.set(map, (index = new CompanyLookup(map)));
  const companies = lookup(index, parsed.query);
  return { ok: true, body: JSON.stringify({ query: { [parsed.query.by]: parsed.query.value }, count: companies.length, companies }) };
}
