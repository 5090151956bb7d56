/**
 * Source-specific rules that a generic format reader cannot know, by source
 * (SOURCES.md lists the quirks they answer).
 */
import { SOURCES, type SourceDef } from '../../catalog/index.js';
import { num } from './data.js';
import type { RawEntry } from './entry.js';

export interface SourceRule {
  /** Why this source does not serve an entry, or null to keep it. */
  drop?: (e: RawEntry) => string | null;
  /** The drop reason that is the source's routine (another EDGAR form): never a failed poll, even when it drops every entry. */
  routineDrop?: string;
  /** Rewrites an entry before normalisation. */
  rewrite?: (e: RawEntry) => RawEntry;
  /** Merges the kept entries that describe one item (one per party of an EDGAR filing). */
  combine?: (entries: RawEntry[]) => RawEntry[];
}

/** Why an EDGAR entry is dropped when its form is none the wire sells: routine, never a failure. */
export const UNSOLD_FORM = 'a form the wire does not sell';

const ROLE = /\((Filer|Issuer|Reporting|Subject|Filed by)\)\s*$/i;

/**
 * An EDGAR title split into its form, its filer ("ACME CORP (0000123456)") and role. The
 * role is found by searching for its parenthesis, which keeps it linear: a pattern with a
 * leading `\s*` restarted at every space of a long run of spaces (100 kB took ten seconds).
 */
function party(title: string | undefined): { form: string; filer: string; role: string } | undefined {
  if (title === undefined) return undefined;
  const m = ROLE.exec(title);
  const rest = m ? title.slice(0, m.index).trimEnd() : title;
  const dash = rest.indexOf(' - ');
  if (dash === -1) return undefined;
  return { form: rest.slice(0, dash), filer: rest.slice(dash + 3), role: m ? m[1]!.toLowerCase() : '' };
}

/** The party a reader looks a filing up by comes first: the company, not the insider or holder. */
const ROLE_RANK: Readonly<Record<string, number>> = { issuer: 0, subject: 1, filer: 2, '': 3, 'filed by': 4, reporting: 5 };
const ROLE_NAME: Readonly<Record<string, string>> = { issuer: 'Issuer', subject: 'Subject', filer: 'Filer', 'filed by': 'Filed by', reporting: 'Reporting' };

const escapeHtml = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * EDGAR's getcurrent listing of every form: each entry goes to the filter value of its form
 * (`category/@term`; an amendment `X/A` with `X`); other forms are dropped as routine.
 * One accession is listed once per party (Issuer and Reporting for Form 4, Subject and
 * Filed by for 13D, co-registrants): one item, titled with the company and found by every
 * party's name.
 */
function edgar(routes: Readonly<Record<string, readonly string[]>>): SourceRule {
  const filterOf = new Map<string, string>();
  for (const [filter, forms] of Object.entries(routes)) for (const f of forms) filterOf.set(f, filter).set(`${f}/A`, filter);
  const formFilter = (e: RawEntry) => e.categories?.map((c) => filterOf.get(c.toUpperCase())).find(Boolean);
  return {
    // An entry without a form at all is a change of EDGAR's format, named apart.
    drop: (e) => (!e.categories?.length ? 'no form category' : formFilter(e) ? null : UNSOLD_FORM),
    routineDrop: UNSOLD_FORM,
    rewrite: (e) => ({ ...e, filter: formFilter(e), id: /accession-number=([\d-]+)/.exec(e.id ?? '')?.[1] ?? e.id }),
    combine: (entries) => {
      const byId = new Map<string, RawEntry[]>();
      for (const e of entries) {
        const group = byId.get(e.id ?? '');
        if (group) group.push(e);
        else byId.set(e.id ?? '', [e]);
      }
      const out: RawEntry[] = [];
      for (const group of byId.values()) {
        const parties = group.map((e) => ({ e, p: party(e.title) }));
        parties.sort((a, b) => (ROLE_RANK[a.p?.role ?? ''] ?? 3) - (ROLE_RANK[b.p?.role ?? ''] ?? 3));
        const main = parties[0]!;
        const others = parties.slice(1).filter((o) => o.p && o.p.filer !== main.p?.filer);
        const also = others.map((o) => `${ROLE_NAME[o.p!.role] ?? 'Filer'}: ${escapeHtml(o.p!.filer)}`).join('; ');
        out.push({
          ...main.e,
          // "8-K - ACME CORP (0000123456) (Filer)": the role suffix says nothing to a reader.
          title: main.p ? `${main.p.form} - ${main.p.filer}` : main.e.title,
          summary: also ? `${main.e.summary ?? ''} ${also}` : main.e.summary,
          data: edgarData(
            main.e,
            parties.map((x) => x.p),
          ),
        });
      }
      return out;
    },
  };
}

/** "ACME CORP (0000123456)" → its name and CIK. */
const FILER = /^(.*?)\s*\((\d{10})\)$/;
const FILED = /Filed:\s*(?:<\/b>)?\s*(\d{4}-\d{2}-\d{2})/;
/** "Item 5.07: Submission of Matters…" in an 8-K's summary. */
const ITEM = /\bItem (\d{1,2}\.\d{2})\b/g;

/**
 * A filing's fields (src/catalog/fields.ts) from what its entries state: the form in the
 * entry's category, the accession in its id, the filing date and 8-K items in its summary,
 * and each party's role, name and CIK in the titles. The company is the first party (issuer,
 * subject, then filer: see ROLE_RANK).
 */
function edgarData(e: RawEntry, parties: readonly (ReturnType<typeof party> | undefined)[]): Record<string, unknown> {
  const named = parties.flatMap((p) => {
    const m = p && FILER.exec(p.filer);
    return m ? [{ role: p.role || undefined, cik: m[2]!, name: m[1]! }] : [];
  });
  const items = [...new Set([...(e.summary ?? '').matchAll(ITEM)].map((m) => m[1]!))];
  return {
    cik: named[0]?.cik,
    company: named[0]?.name,
    form: e.categories?.[0] ?? parties[0]?.form,
    accession: /^\d{10}-\d{2}-\d{6}$/.test(e.id ?? '') ? e.id : undefined,
    filed: FILED.exec(e.summary ?? '')?.[1],
    items,
    parties: named,
  };
}

/** arXiv's RSS guid, `oai:arXiv.org:2607.21596v1`: the paper's id and its version. */
const ARXIV_GUID = /^oai:arXiv\.org:(.+?)(?:v\d+)?$/;

/**
 * A paper's fields (src/catalog/fields.ts): its id from the guid, its authors from the one
 * `dc:creator`, which arXiv writes as a comma-separated list (a collaboration first, then
 * `:`), its categories from `<category>`, the announce type, and the DOI and journal
 * reference when the authors gave them.
 */
function arxivData(e: RawEntry): Record<string, unknown> {
  return {
    arxiv_id: ARXIV_GUID.exec(e.id?.trim() ?? '')?.[1],
    // "Nanbeige Lab,  :, Chen Yang, …": the `:` after a collaboration's name is no author.
    authors: e.authors?.flatMap((a) => a.split(',').filter((n) => /[\p{L}\p{N}]/u.test(n))),
    categories: e.categories,
    announce_type: e.announceType,
    doi: e.doi,
    journal_ref: e.journalRef,
  };
}

const arxiv: SourceRule = {
  // `replace*` entries are new versions of old papers, not new research.
  drop: (e) => (e.announceType === undefined || e.announceType === 'new' || e.announceType === 'cross' ? null : 'a new version of an earlier paper'),
  rewrite: (e) => ({
    ...e,
    data: { ...e.data, ...arxivData(e) },
    // A paper is listed in every category it belongs to: one id without the version.
    id: /(\d{4}\.\d{4,5})/.exec(e.id ?? e.link ?? '')?.[1] ? `arxiv:${/(\d{4}\.\d{4,5})/.exec(e.id ?? e.link ?? '')![1]}` : e.id,
    summary: e.summary?.replace(/^[\s\S]*?Abstract:\s*/, ''),
  }),
};

/** A rule that adds the fields `fields` reads from each entry to its `data`. */
const withData = (fields: (e: RawEntry) => Record<string, unknown>): SourceRule => ({ rewrite: (e) => ({ ...e, data: { ...e.data, ...fields(e) } }) });

/**
 * hnrss's description ends with the story's score and comment count at the time of the poll,
 * in a fixed format (`<p>Points: 20</p>`, `<p># Comments: 10</p>`); the last of each is read,
 * after any text of the submitter's own. The submitter is `dc:creator`, the story's id the
 * guid's `item?id=`.
 */
const HN_POINTS = /<p>Points: (\d+)<\/p>/g;
const HN_COMMENTS = /<p># Comments: (\d+)<\/p>/g;
const lastCount = (re: RegExp, html: string | undefined) => {
  const all = [...(html ?? '').matchAll(re)];
  return all.length ? Number(all[all.length - 1]![1]) : undefined;
};
const HN_ITEM = /^https:\/\/news\.ycombinator\.com\/item\?id=(\d+)$/;
const hn = withData((e) => ({
  hn_id: num(HN_ITEM.exec(e.id?.trim() ?? '')?.[1]),
  author: e.authors?.[0],
  points: lastCount(HN_POINTS, e.summary),
  comments: lastCount(HN_COMMENTS, e.summary),
}));

/** We Work Remotely's own item elements: `<category>`, `<region>` and `<type>`. */
const weWorkRemotely = withData((e) => ({ category: e.categories?.[0], location: e.region, job_type: e.jobType }));

/** SEC's litigation feed gives the release number (`34-105993`, `IC-36269`) as `dc:creator`. */
const secLitigation = withData((e) => ({ release_number: e.authors?.[0] }));

/**
 * The distributions' advisories state their id and what they fix in the title, in a fixed
 * form: Debian `DSA-5681-1 linux - security update` (the source package), Ubuntu
 * `USN-7758-4:  Linux kernel (Oracle) vulnerability` (Ubuntu's name for the software, not a
 * package name: the feed lists no packages).
 */
const DSA_TITLE = /^(DSA-\d+-\d+)\s+(\S+)\s+-\s/;
/** The software is read only when the title ends in one of Ubuntu's words for a notice. */
const USN_TITLE = /^(USN-\d+-\d+):\s*(?:(.+?)\s+(?:vulnerability|vulnerabilities|regression|update)\s*$)?/i;
const debianDsa = withData((e) => {
  const m = DSA_TITLE.exec(e.title?.trim() ?? '');
  return { advisory: m?.[1], packages: m ? [m[2]!] : undefined };
});
const ubuntuUsn = withData((e) => {
  const m = USN_TITLE.exec(e.title?.trim() ?? '');
  return { advisory: m?.[1], product: m?.[2] };
});

/**
 * ZDI's advisories start their title with their id (`ZDI-26-1101: …`, also their guid) and
 * give their score in a fixed sentence of the description: `The ZDI has assigned a CVSS
 * rating of 7.8.` (no vector, no version).
 */
const ZDI_CVSS = /The ZDI has assigned a CVSS rating of (\d{1,2}(?:\.\d)?)\b/;
const zdi = withData((e) => {
  const score = Number(ZDI_CVSS.exec(e.summary ?? '')?.[1]);
  return { advisory: /^ZDI-\d{2}-\d+/.exec(e.title?.trim() ?? '')?.[0], cvss_score: score <= 10 ? score : undefined };
});

/**
 * GovInfo names each package by a documented id, its RSS guid: `BILLS-119hr1234ih` (the 119th
 * Congress, H.R. 1234, the version as introduced in the House), `PLAW-119publ45` (Public Law
 * 119-45), `USCOURTS-caDC-25-05310` (the D.C. Circuit's case 25-05310).
 */
const BILLS_ID = /^BILLS-(\d+)([a-z]+?)(\d+)([a-z]+)$/;
const PLAW_ID = /^PLAW-(\d+)(publ|pvtl)(\d+)$/;
const USCOURTS_ID = /^USCOURTS-([A-Za-z0-9]+)-(.+)$/;
const govinfoBills = withData((e) => {
  const id = e.id?.trim() ?? '';
  const bill = BILLS_ID.exec(id);
  if (bill) return { package_id: id, congress: Number(bill[1]), bill_type: bill[2], bill_number: Number(bill[3]), version: bill[4] };
  const law = PLAW_ID.exec(id);
  if (law) return { package_id: id, congress: Number(law[1]), law_type: law[2], law_number: Number(law[3]) };
  return {};
});
const govinfoCourts = withData((e) => {
  const id = e.id?.trim() ?? '';
  const m = USCOURTS_ID.exec(id);
  return m ? { package_id: id, court: m[1]!.toLowerCase(), docket: m[2] } : {};
});

/**
 * The wires whose items' bylines (`dc:creator`, `<author>`) and RSS/Atom `<category>` terms
 * are their `authors` and `categories` fields. Not the recalls or enforcement wires: FDA's
 * creator is always "FDA", FTC's a site login, SEC's a release number.
 */
const BYLINE_WIRES: Readonly<Record<string, readonly ('authors' | 'categories')[]>> = {
  security: ['authors', 'categories'],
  ailab: ['authors', 'categories'],
  crypto: ['authors', 'categories'],
  space: ['authors', 'categories'],
  sports: ['authors'],
  fed: ['categories'],
};
const WIRE_OF: ReadonlyMap<string, string> = new Map(SOURCES.map((s) => [s.id, s.wire.id]));
const bylines = (fields: readonly ('authors' | 'categories')[]) =>
  withData((e) => ({ authors: fields.includes('authors') ? e.authors : undefined, categories: fields.includes('categories') ? e.categories : undefined }));
const BYLINE_RULES = new Map(Object.entries(BYLINE_WIRES).map(([wire, fields]) => [wire, bylines(fields)]));

export function ruleFor(source: SourceDef): SourceRule | undefined {
  if (source.id === 'edgar') return edgar(source.routes ?? {});
  if (source.id.startsWith('arxiv-')) return arxiv;
  if (source.id.startsWith('hn-')) return hn;
  if (source.id.startsWith('wwr-')) return weWorkRemotely;
  if (source.id === 'sec-litigation') return secLitigation;
  if (source.id === 'debian-dsa') return debianDsa;
  if (source.id === 'zdi') return zdi;
  if (source.id === 'govinfo-bills' || source.id === 'govinfo-plaw') return govinfoBills;
  if (source.id.startsWith('govinfo-uscourts-')) return govinfoCourts;
  if (source.id === 'ubuntu-usn') return ubuntuUsn;
  return BYLINE_RULES.get(WIRE_OF.get(source.id) ?? '');
}
