/**
 * One small declarative mapping per JSON source shape: where the items are, and which field
 * (or short template) gives each Article field. Paths are dot-separated. A mapping is chosen
 * by the source id's prefix, so the several sources of one API share it.
 */
import { day, instant, num, text } from './data.js';
import type { RawEntry } from './entry.js';

type Row = Record<string, unknown>;
type Field = string | ((row: Row) => unknown);

interface JsonMapping {
  /** Path of the item array; '' when the document itself is the array. */
  items: string;
  /** Rows this source does not serve (metadata elements, test alerts), with the reason; null keeps the row. */
  drop?: (row: Row) => string | null;
  id: Field;
  title: Field;
  url: Field;
  date: Field;
  summary?: Field;
  state?: Field;
  /** The wire's structured fields (src/catalog/fields.ts) this row states. */
  data?: (row: Row) => Record<string, unknown>;
}

export function get(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split('.')) {
    if (key === '') continue;
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Row)[key];
  }
  return cur;
}

/**
 * A field as text. An object whose `toString`/`valueOf` keys hold plain JSON values has no
 * text (String() would throw "Cannot convert object to primitive value"), nor has an array
 * nested too deep to join.
 */
const str = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'object') return String(v);
  try {
    return String(v);
  } catch {
    return '';
  }
};
/** "Position at Company", or whichever of the two there is; '' (no title) when neither. */
const at = (position: string, company: string) => (position && company ? `${position} at ${company}` : position || company);

const DOUBLE_ENCODED = /[\u00c2-\u00f4][\u0080-\u00bf]/;
/**
 * Text whose UTF-8 bytes were read as Latin-1 and encoded again, decoded once more: Remote OK
 * serves `\u00c3\u00b3` for "ó" (`ZÃ³calo Health`) and `\u00e2\u0080\u0099` for "’"
 * (fixtures/real/remoteok-api-2026-03-17.json). Only a string of code points up to U+00FF
 * that is valid UTF-8 as bytes is changed; anything else is returned as it is.
 */
export function undoubleUtf8(text: string): string {
  if (!DOUBLE_ENCODED.test(text) || /[^\u0000-\u00ff]/.test(text)) return text;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

/** A software qualifier (stack, platform, field)… */
const SOFTWARE_WORD =
  /\b(?:software|developers?|programmers?|devops|sre|front[- ]?end|back[- ]?end|full[- ]?stack|firmware|embedded|ios|android|web|mobile|platform|infrastructure|data|ml|machine learning|ai|cloud|security|qa|test|reliability|systems?|staff|principal|c\+\+|python|java|golang|go|rust|react|node|typescript|javascript|php|ruby)\b/i;
/** …and a builder's role… */
const BUILDER_WORD = /\b(?:engineers?|engineering|developers?|programmers?|architects?|sre|devops)\b/i;
/** …but not engineering outside software, nor selling it. */
const OTHER_ENGINEERING = /\b(?:electrical|mechanical|civil|chemical|structural|manufacturing|hardware|process|field|sales|solutions)\b/i;

/** Whether a job title names software-development work ("Senior Backend Engineer", not "Sales Engineer"). */
export function isSoftwareRole(position: string): boolean {
  return SOFTWARE_WORD.test(position) && BUILDER_WORD.test(position) && !OTHER_ENGINEERING.test(position);
}

/** "from X", or nothing when X is missing. */
const words = (lead: string, v: unknown) => (str(v) ? `${lead} ${str(v)}` : '');
const usd = (v: unknown) => (typeof v === 'number' ? `$${Math.round(v).toLocaleString('en-US')}` : '');

export const JSON_MAPPINGS: Readonly<Record<string, JsonMapping>> = {
  'cisa-kev': {
    items: 'vulnerabilities',
    id: 'cveID',
    title: (r) => `${str(r.cveID)}: ${str(r.vulnerabilityName)}`,
    url: (r) => `https://nvd.nist.gov/vuln/detail/${str(r.cveID)}`,
    date: 'dateAdded',
    summary: (r) => `${str(r.shortDescription)} Required action: ${str(r.requiredAction)} (due ${str(r.dueDate)}).`,
    data: (r) => ({
      cves: [text(r.cveID)],
      vendor: text(r.vendorProject),
      product: text(r.product),
      kev: { date_added: day(r.dateAdded), due_date: day(r.dueDate), known_ransomware_use: text(r.knownRansomwareCampaignUse) },
      cwes: Array.isArray(r.cwes) ? r.cwes.map(text) : undefined,
    }),
  },
  'fedreg-': {
    items: 'results',
    id: 'document_number',
    title: 'title',
    url: 'html_url',
    date: 'publication_date',
    summary: (r) => str(r.abstract),
    data: (r) => ({
      document_number: text(r.document_number),
      type: text(r.type),
      agencies: Array.isArray(r.agencies) ? r.agencies.map((a) => text(get(a, 'name')) ?? text(get(a, 'raw_name'))) : undefined,
      citation: text(r.citation),
      effective_on: day(r.effective_on),
      comments_close_on: day(r.comments_close_on),
    }),
  },
  'nws-': {
    items: 'features',
    drop: (r) => (get(r, 'properties.status') !== undefined && get(r, 'properties.status') !== 'Actual' ? 'not an actual alert (a test, exercise or draft)' : null),
    id: 'properties.id',
    title: (r) => str(get(r, 'properties.headline')) || `${str(get(r, 'properties.event'))}: ${str(get(r, 'properties.areaDesc'))}`,
    url: (r) => str(get(r, 'properties.@id')) || str(r.id),
    date: 'properties.sent',
    summary: 'properties.description',
    data: (r) => {
      const p = (r.properties ?? {}) as Row;
      return {
        event: text(p.event),
        severity: text(p.severity),
        urgency: text(p.urgency),
        certainty: text(p.certainty),
        areas: text(p.areaDesc),
        onset: instant(p.onset),
        expires: instant(p.expires),
        sender: text(p.senderName),
        message_type: text(p.messageType),
      };
    },
  },
  'usgs-': {
    items: 'features',
    id: 'id',
    title: 'properties.title',
    url: 'properties.url',
    date: 'properties.time',
    summary: (r) => {
      const p = (r.properties ?? {}) as Row;
      const depth = get(r, 'geometry.coordinates.2');
      return `Magnitude ${str(p.mag)} ${str(p.place)}. Depth ${str(depth)} km. PAGER alert: ${str(p.alert) || 'none'}. Tsunami: ${p.tsunami ? 'yes' : 'no'}. Felt reports: ${str(p.felt ?? 0)}.`;
    },
    data: (r) => {
      const p = (r.properties ?? {}) as Row;
      const tsunami = num(p.tsunami);
      return {
        mag: num(p.mag),
        mag_type: text(p.magType),
        place: text(p.place),
        lon: num(get(r, 'geometry.coordinates.0')),
        lat: num(get(r, 'geometry.coordinates.1')),
        depth_km: num(get(r, 'geometry.coordinates.2')),
        tsunami: tsunami === undefined ? undefined : tsunami === 1,
        alert: text(p.alert),
        felt: num(p.felt),
        sig: num(p.sig),
        status: text(p.status),
        event_id: text(r.id),
      };
    },
  },
  'status-gcp': {
    items: '',
    id: 'id',
    title: 'external_desc',
    url: (r) => `https://status.cloud.google.com/${str(r.uri).replace(/^\//, '')}`,
    date: (r) => r.begin ?? r.created,
    summary: (r) => `${str(r.severity)} ${str(r.status_impact)}. ${str(get(r, 'most_recent_update.text'))}`,
    data: (r) => ({
      severity: text(r.severity),
      status_impact: text(r.status_impact),
      status: text(get(r, 'most_recent_update.status')),
      affected_products: Array.isArray(r.affected_products) ? r.affected_products.map((p) => text(get(p, 'title'))) : undefined,
      begin: instant(r.begin),
      end: instant(r.end),
    }),
  },
  'usaspending-': {
    items: 'results',
    id: 'generated_internal_id',
    // USAspending serves null for what it does not know (a description, a foreign place of
    // performance, aggregate rows' recipient): such parts are left out, not left empty.
    title: (r) => [str(r['Recipient Name']), str(r.Description)].filter(Boolean).join(': '),
    url: (r) => `https://www.usaspending.gov/award/${str(r.generated_internal_id)}`,
    date: (r) => r['Base Obligation Date'] ?? r['Last Modified Date'],
    summary: (r) => {
      const who = [usd(r['Award Amount']), words('from', r['Awarding Agency']), words('to', r['Recipient Name'])].filter(Boolean).join(' ');
      const where = str(r['Place of Performance State Code']);
      return [who && (where ? `${who}, performed in ${where}.` : `${who}.`), str(r.Description)].filter(Boolean).join(' ');
    },
    state: 'Place of Performance State Code',
    data: (r) => ({
      award_id: text(r['Award ID']),
      recipient: text(r['Recipient Name']),
      amount_usd: num(r['Award Amount']),
      agency: text(r['Awarding Agency']),
      sub_agency: text(r['Awarding Sub Agency']),
      state: text(r['Place of Performance State Code'])?.toUpperCase(),
      award_type: text(r['Award Type']) ?? text(r['Contract Award Type']),
      start: day(r['Start Date']),
      end: day(r['End Date']),
    }),
  },
  remotive: {
    items: 'jobs',
    id: 'id',
    // A job without a title or company is no title, not " at ".
    title: (r) => at(str(r.title).trim(), str(r.company_name).trim()),
    url: 'url',
    date: 'publication_date',
    summary: 'description',
    data: (r) => ({
      company: text(r.company_name),
      category: text(r.category),
      tags: Array.isArray(r.tags) ? r.tags.map(text) : undefined,
      job_type: text(r.job_type),
      location: text(r.candidate_required_location),
      salary: text(r.salary),
    }),
  },
  remoteok: {
    items: '',
    // The API is the whole board (there is no category query, and its tags are unreliable),
    // and the source serves `software-dev`: other jobs are not its items.
    drop: (r) => (r.id === undefined || 'legal' in r ? "not a job (the API's notice)" : !isSoftwareRole(undoubleUtf8(str(r.position))) ? 'not a software development job' : null),
    id: 'id',
    title: (r) => at(undoubleUtf8(str(r.position)).trim(), undoubleUtf8(str(r.company)).trim()),
    url: 'url',
    date: (r) => r.date ?? r.epoch,
    summary: (r) => undoubleUtf8(str(r.description)),
    // Remote OK writes 0 for a salary the posting does not give.
    data: (r) => ({
      company: undoubleUtf8(str(r.company)),
      tags: Array.isArray(r.tags) ? r.tags.map((t) => undoubleUtf8(str(t))) : undefined,
      location: undoubleUtf8(str(r.location)),
      salary_min: num(r.salary_min) || undefined,
      salary_max: num(r.salary_max) || undefined,
    }),
  },
};

/**
 * The award amounts of each `usaspending-<size>` source: src/ingest/requests.ts asks
 * USAspending for them from this table (`award_amounts`; no lower bound under $250k, so
 * deobligations count there). Both ends are inclusive here, so an award of exactly $250,000 stays in whichever
 * neighbouring bucket the API put it in rather than being dropped by a boundary reading.
 * `small-business` is a kind of recipient, not an amount.
 */
export const AWARD_SIZE_BOUNDS: Readonly<Record<string, readonly [number, number]>> = {
  'under-250k': [-Infinity, 250_000],
  '250k-1m': [250_000, 1_000_000],
  '1m-10m': [1_000_000, 10_000_000],
  'over-10m': [10_000_000, Infinity],
};

/**
 * An award is served under a size bucket only if its own amount is in that bucket. The API's
 * filter already does this, so in production the check drops nothing; it is here because the
 * bucket is something a reader checks against the amount printed in the item, and it must hold
 * even when the filter did not apply (a changed API, an override pointing several buckets at
 * one document, as the demo once did: one $12.5M award listed under three buckets). An award
 * without a numeric amount is kept: nothing says it is in the wrong bucket.
 *
 * Quakes are deliberately not checked by magnitude: USGS's bands are its own (its 2.5+ feed
 * lists an M2.49, shown as "M 2.5"; "significant" is a significance score, and lists M4.0
 * quakes that were widely felt), so the feed a quake comes in is the authority.
 */
function awardSizeRule(mapping: JsonMapping, size: string): JsonMapping {
  const bounds = AWARD_SIZE_BOUNDS[size];
  if (!bounds) return mapping;
  const [low, high] = bounds;
  return {
    ...mapping,
    drop: (r) => {
      const amount = r['Award Amount'];
      return typeof amount === 'number' && Number.isFinite(amount) && (amount < low || amount > high) ? `an award outside the ${size} size bucket` : null;
    },
  };
}

export function mappingFor(sourceId: string): JsonMapping | undefined {
  for (const [key, mapping] of Object.entries(JSON_MAPPINGS)) {
    if (key.endsWith('-') ? sourceId.startsWith(key) : sourceId === key || sourceId.startsWith(key + '-')) {
      return key === 'usaspending-' ? awardSizeRule(mapping, sourceId.slice(key.length)) : mapping;
    }
  }
  return undefined;
}

function field(row: Row, f: Field | undefined): unknown {
  if (f === undefined) return undefined;
  return typeof f === 'function' ? f(row) : get(row, f);
}

/**
 * Applies a mapping; `undefined` when the document does not have the mapping's shape. A row
 * the source does not serve becomes an entry with only its `dropped` reason, so that it is
 * counted as the document's entry like any other.
 */
export function mapJson(doc: unknown, mapping: JsonMapping): RawEntry[] | undefined {
  const rows = mapping.items === '' ? doc : get(doc, mapping.items);
  if (!Array.isArray(rows)) return undefined;
  const out: RawEntry[] = [];
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue;
    const r = row as Row;
    const dropped = mapping.drop?.(r);
    if (dropped) {
      out.push({ dropped });
      continue;
    }
    const entry: RawEntry = {
      id: str(field(r, mapping.id)) || undefined,
      title: str(field(r, mapping.title)),
      link: str(field(r, mapping.url)),
      date: field(r, mapping.date),
      summary: str(field(r, mapping.summary)),
    };
    const state = field(r, mapping.state);
    if (typeof state === 'string') entry.state = state.toUpperCase();
    if (mapping.data) entry.data = mapping.data(r);
    out.push(entry);
  }
  return out;
}
