import { TAGGED_WIRES } from '../../catalog/facets.js';
import type { CompanyMap } from '../../tickers/company-map.js';

/**
 * An item's structured fields (`data`), as its source states them. Readers fill a plain object
 * per entry; this keeps only what was stated: a field the source leaves out, null, empty or
 * unparseable is absent, never guessed and never an empty string.
 */

/** The stated fields of `fields`, or undefined when none is. */
export function stated(fields: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [name, value] of Object.entries(fields)) {
    const kept = keep(value);
    if (kept === undefined) continue;
    out[name] = kept;
    any = true;
  }
  return any ? out : undefined;
}

function keep(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'boolean') return value;
  if (Array.isArray(value)) {
    const items = value.map(keep).filter((v) => v !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof value === 'object') return stated(value as Record<string, unknown>);
  return undefined;
}

/** A number the source gave as a number or a numeric string; undefined otherwise. */
export function num(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

/** A string the source gave; undefined for anything else. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

/** A calendar date (YYYY-MM-DD) from a date or date-time string; undefined when it is neither. */
export function day(value: unknown): string | undefined {
  const m = typeof value === 'string' ? /^(\d{4}-\d{2}-\d{2})(?:$|[T ])/.exec(value.trim()) : null;
  return m ? m[1] : undefined;
}

/** An ISO 8601 date-time in UTC from a string or epoch ms the source gave; undefined when unparseable. */
export function instant(value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

const CVE_ID = /\bCVE-\d{4}-\d{4,}\b/gi;

/** What the parsers read beside the document: SEC's ticker map, and the tagger built on it. */
export interface ParseContext {
  companies?: CompanyMap;
  /** The tickers a story is about, from its headline and summary (Tagger.tagStory). */
  tag?: (headline: string, summary: string) => string[];
}

/** Fields of an item derived from its title, its summary and the fields it states (`data` as read). */
export type DeriveFields = (title: string, summary: string, data: Readonly<Record<string, unknown>>) => Record<string, unknown>;

/**
 * Fields a wire's items state in their text, or that follow from what they state:
 * - the CVE ids an advisory names in its title or summary (Ubuntu's, Debian's, Microsoft's and
 *   ZDI's feeds), where the source gives none as a field (KEV's `cveID` wins);
 * - a filing's tickers: the listings SEC's map gives the company's CIK (its first-listed one as
 *   `ticker`);
 * - the tickers of the listed companies a story is about: named in its title, or pointed to by an
 *   exchange mention or cashtag in its title or summary (tickers/tagger.ts).
 */
export function deriveFieldsFor(wire: string | undefined, ctx: ParseContext): DeriveFields | undefined {
  if (wire === 'cve') return (t, s) => ({ cves: [...new Set(Array.from(`${t} ${s}`.matchAll(CVE_ID), (m) => m[0].toUpperCase()))] });
  const companies = ctx.companies;
  const tag = ctx.tag;
  if (tag && TAGGED_WIRES.includes(wire ?? '')) return (t, s) => ({ tickers: tag(t, s) });
  if (wire === 'edgar' && companies) {
    return (_t, _s, d) => {
      const listings = typeof d.cik === 'string' ? companies.byCik(d.cik) : [];
      return { ticker: listings[0]?.ticker, tickers: listings.map((l) => l.ticker) };
    };
  }
  return undefined;
}
