/**
 * Filters on an article's structured fields (`data`, ./fields.ts): which query parameter
 * filters which field, on which wires, and how its values are written. Routes, previews, MCP
 * tools and the docs take them from here; the wire index keeps an exact index of each.
 */

export interface FacetDef {
  /** The query parameter. */
  param: string;
  wires: readonly string[];
  doc: string;
  /**
   * `any`: up to MAX_VALUES comma-separated values, an article matches when one of its values
   * is among them. `min`: one number, an article matches when its field is at least that.
   */
  kind: 'any' | 'min';
  /** A valid parameter value (after splitting at commas, for `any`). */
  pattern: RegExp;
  /** What the parameter's error says a value must be. */
  expected: string;
  /** A value as the index keeps it (a CIK padded to 10 digits, a ticker upper-case). */
  normalise: (value: string) => string;
  /** An article's values of it, from its `data` (an `any` facet), or its number (a `min` facet). */
  of: (data: Readonly<Record<string, unknown>>) => readonly string[] | number | undefined;
}

/** The wires whose stories are tagged with the tickers of the listed companies they name (tickers/tagger.ts). */
export const TAGGED_WIRES: readonly string[] = ['news', 'crypto', 'enforcement', 'security', 'recalls'];

/** A ticker as a parameter names it (any case; SEC's `BRK-B`). */
export const TICKER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9.-]{0,9}$/;
/** A CIK as a parameter names it: 1 to 10 digits, with or without the leading zeros. */
export const CIK_PATTERN = /^\d{1,10}$/;

/** Values one `any` parameter may list. */
export const MAX_VALUES = 10;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []);

export const FACETS: readonly FacetDef[] = [
  {
    param: 'ticker',
    wires: ['edgar', ...TAGGED_WIRES],
    doc: 'Articles about any of these listed companies: up to 10 comma-separated tickers, any case (`NVDA,amd`).',
    kind: 'any',
    pattern: TICKER_PATTERN,
    expected: 'a ticker such as NVDA or BRK-B',
    normalise: (v) => v.toUpperCase(),
    of: (d) => strings(d.tickers),
  },
  {
    param: 'cik',
    wires: ['edgar'],
    doc: "Filings by or about these companies or people: up to 10 comma-separated CIKs (with or without leading zeros), matched against every party's CIK.",
    kind: 'any',
    pattern: CIK_PATTERN,
    expected: 'a CIK of 1 to 10 digits',
    normalise: (v) => v.padStart(10, '0'),
    of: (d) => [...new Set([...strings(d.cik), ...(Array.isArray(d.parties) ? d.parties.flatMap((p) => strings((p as { cik?: unknown }).cik)) : [])])],
  },
  {
    param: 'item',
    wires: ['edgar'],
    doc: '8-Ks that report any of these items: up to 10 comma-separated item numbers, e.g. 2.02,5.02.',
    kind: 'any',
    pattern: /^\d{1,2}\.\d{2}$/,
    expected: 'an 8-K item number such as 2.02',
    normalise: (v) => v,
    of: (d) => strings(d.items),
  },
  {
    param: 'min_mag',
    wires: ['quake'],
    doc: 'Quakes of at least this magnitude, e.g. 5 or 6.5.',
    kind: 'min',
    pattern: /^\d(\.\d{1,2})?$/,
    expected: 'a magnitude from 0 to 9.99, e.g. 5 or 6.5',
    normalise: (v) => v,
    of: (d) => (typeof d.mag === 'number' ? d.mag : undefined),
  },
];

/** The facets a wire's routes take. */
export function facetsOf(wire: string): readonly FacetDef[] {
  return FACETS.filter((f) => f.wires.includes(wire));
}

/** The index's tag of an `any` facet's value: `cik:0000320193`. */
export const facetTag = (facet: FacetDef, value: string) => `${facet.param}:${value}`;

/**
 * An article's values of a wire's facets, as the index keeps them: its tags (one per value of
 * each `any` facet), and its `min` facet's number (NaN: none). All of what turns an article's
 * fields into its facet values is in this module: a snapshot saves the values, and a restart
 * reuses them only when this module's code is the same (ingest/snapshot.ts).
 */
export function articleFacets(facets: readonly FacetDef[], data: Readonly<Record<string, unknown>> | undefined): { tags: string[]; number: number } {
  const tags: string[] = [];
  let number = Number.NaN;
  if (!data) return { tags, number };
  for (const f of facets) {
    const values = f.of(data);
    if (f.kind === 'min') {
      if (typeof values === 'number') number = values;
    } else if (Array.isArray(values)) for (const v of values) tags.push(facetTag(f, f.normalise(v)));
  }
  return { tags, number };
}
