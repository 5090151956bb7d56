/**
 * Source-specific rules that a generic format reader cannot know, keyed by source id
 * (SOURCES.md lists the quirks they answer).
 */
import type { RawEntry } from './entry.js';

export interface SourceRule {
  /** Why this source does not serve an entry, or null to keep it. */
  drop?: (e: RawEntry) => string | null;
  /** Rewrites an entry before normalisation. */
  rewrite?: (e: RawEntry) => RawEntry;
}

/** EDGAR's `type=` parameter of each source, as the form name in entries' `category/@term`. */
const EDGAR_FORMS: Readonly<Record<string, string[]>> = {
  'edgar-8k': ['8-K'],
  'edgar-10q': ['10-Q'],
  'edgar-10k': ['10-K'],
  'edgar-form4': ['4'],
  'edgar-s1': ['S-1'],
  'edgar-13f': ['13F-HR'],
  'edgar-6k': ['6-K'],
  'edgar-13d': ['SCHEDULE 13D', 'SC 13D'],
};

const ROLE = /\((?:Filer|Issuer|Reporting|Subject|Filed by)\)\s*$/i;

/**
 * The title without its trailing role: what `/\s*\((Filer|…)\)\s*$/i` removes. Searching
 * for the parenthesis first keeps it linear: the leading `\s*` restarted at every space of a
 * long run of spaces (100 kB of them took ten seconds).
 */
function dropRole(title: string | undefined): string | undefined {
  const m = title === undefined ? null : ROLE.exec(title);
  return m ? title!.slice(0, m.index).trimEnd() : title;
}

function edgar(forms: string[]): SourceRule {
  const wanted = new Set(forms.flatMap((f) => [f, `${f}/A`]));
  const other = `another form than ${forms[0]}`;
  return {
    // The type filter may match more than the exact form: keep the form and its amendments.
    // An entry without a form at all is a change of EDGAR's format, named apart.
    drop: (e) => (!e.categories?.length ? 'no form category' : e.categories.some((c) => wanted.has(c.toUpperCase())) ? null : other),
    rewrite: (e) => ({
      ...e,
      // One accession is listed once per party (Issuer and Reporting, Subject and Filed by).
      id: /accession-number=([\d-]+)/.exec(e.id ?? '')?.[1] ?? e.id,
      // "8-K - ACME CORP (0000123456) (Filer)": the role suffix says nothing to a reader.
      title: dropRole(e.title),
    }),
  };
}

const arxiv: SourceRule = {
  // `replace*` entries are new versions of old papers, not new research.
  drop: (e) => (e.announceType === undefined || e.announceType === 'new' || e.announceType === 'cross' ? null : 'a new version of an earlier paper'),
  rewrite: (e) => ({
    ...e,
    // A paper is listed in every category it belongs to: one id without the version.
    id: /(\d{4}\.\d{4,5})/.exec(e.id ?? e.link ?? '')?.[1] ? `arxiv:${/(\d{4}\.\d{4,5})/.exec(e.id ?? e.link ?? '')![1]}` : e.id,
    summary: e.summary?.replace(/^[\s\S]*?Abstract:\s*/, ''),
  }),
};

export function ruleFor(sourceId: string): SourceRule | undefined {
  if (EDGAR_FORMS[sourceId]) return edgar(EDGAR_FORMS[sourceId]!);
  if (sourceId.startsWith('arxiv-')) return arxiv;
  return undefined;
}
