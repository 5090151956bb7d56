/**
 * Each wire's structured fields: the `data` object of its articles, declared once here (name,
 * type, meaning). Parsers fill them from what the source states; a field the source does not
 * state is absent. OpenAPI, /llms-full.txt and docs/routes.md are derived from this table, and
 * a test checks every field the real captures yield against it.
 *
 * Names are snake_case and stable: a renamed field breaks every bot that reads it.
 */

/** A field's JSON type: OpenAPI's, with the formats the parsers write. */
export type FieldSchema =
  | { type: 'string'; format?: 'date' | 'date-time' }
  | { type: 'number' | 'integer' | 'boolean' }
  | { type: 'array'; items: { type: 'string' } }
  | { type: 'array'; items: { type: 'object'; properties: Readonly<Record<string, { type: 'string' }>> } }
  | { type: 'object'; properties: Readonly<Record<string, { type: 'string'; format?: 'date' }>> };

export interface FieldDef {
  name: string;
  schema: FieldSchema;
  doc: string;
}

const string = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'string' }, doc });
const date = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'string', format: 'date' }, doc });
const dateTime = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'string', format: 'date-time' }, doc });
const number = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'number' }, doc });
const integer = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'integer' }, doc });
const boolean = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'boolean' }, doc });
const strings = (name: string, doc: string): FieldDef => ({ name, schema: { type: 'array', items: { type: 'string' } }, doc });

/** Wire id → its fields, in the order the docs list them. A wire not named here has none yet. */
export const WIRE_FIELDS: Readonly<Record<string, readonly FieldDef[]>> = {
  edgar: [
    string('cik', "The company's SEC Central Index Key, 10 digits as EDGAR writes it: the issuer of an ownership form (3, 4, 5), the subject company of a 13D or 13G, else the filer."),
    string('company', "That company's name as EDGAR lists it."),
    string('ticker', "That company's ticker: the first of its listings in SEC's company ticker map (absent for an unlisted company)."),
    strings('tickers', "All of that company's listed tickers (share classes, warrants, preferreds), from SEC's map."),
    string('form', 'The exact form type, amendments included: `8-K`, `8-K/A`, `4`, `SC 13D`.'),
    string('accession', "The accession number, `0001104659-26-109915`: the filing's id at SEC."),
    date('filed', 'The filing date EDGAR gives.'),
    strings('items', 'The 8-K items the filing reports, as numbers: `["2.02","9.01"]`.'),
    {
      name: 'parties',
      schema: { type: 'array', items: { type: 'object', properties: { role: { type: 'string' }, cik: { type: 'string' }, name: { type: 'string' } } } },
      doc: 'Every party EDGAR lists for the filing, each with its role (`filer`, `issuer`, `reporting`, `subject`, `filed by`), CIK and name: the insider of a Form 4 is the `reporting` party.',
    },
  ],
  quake: [
    number('mag', 'Magnitude.'),
    string('mag_type', 'Magnitude type (`mw`, `ml`, `mb`, …).'),
    string('place', "USGS's description of the place."),
    number('lat', 'Latitude of the epicentre, degrees.'),
    number('lon', 'Longitude of the epicentre, degrees.'),
    number('depth_km', 'Depth, km.'),
    boolean('tsunami', "Whether USGS flags the event for the tsunami centres' review."),
    string('alert', 'PAGER alert level: `green`, `yellow`, `orange` or `red`.'),
    integer('felt', '"Did You Feel It?" reports.'),
    integer('sig', 'USGS significance score, 0 to 1000 and more.'),
    string('status', '`automatic` or `reviewed`.'),
    string('event_id', "USGS's event id."),
  ],
  weather: [
    string('event', 'The alert type: `Tornado Warning`, `Winter Storm Watch`, …'),
    string('severity', 'CAP severity: `Extreme`, `Severe`, `Moderate`, `Minor` or `Unknown`.'),
    string('urgency', 'CAP urgency: `Immediate`, `Expected`, `Future`, `Past` or `Unknown`.'),
    string('certainty', 'CAP certainty: `Observed`, `Likely`, `Possible`, `Unlikely` or `Unknown`.'),
    string('areas', 'The areas the alert covers, as NWS describes them.'),
    dateTime('onset', 'When the hazard begins.'),
    dateTime('expires', 'When the alert expires.'),
    string('sender', 'The issuing NWS office.'),
    string('message_type', '`Alert`, `Update` or `Cancel`.'),
  ],
  cve: [
    strings('cves', 'The CVE ids the advisory names.'),
    string('vendor', 'The vendor or project (CISA KEV).'),
    string('product', 'The product (CISA KEV).'),
    {
      name: 'kev',
      schema: { type: 'object', properties: { date_added: { type: 'string', format: 'date' }, due_date: { type: 'string', format: 'date' }, known_ransomware_use: { type: 'string' } } },
      doc: "CISA's Known Exploited Vulnerabilities entry: when it was added, the federal remediation due date, and known ransomware use (`Known` or `Unknown`).",
    },
    strings('cwes', 'The CWE ids of the weakness (CISA KEV).'),
  ],
  reg: [
    string('document_number', "The Federal Register's document number."),
    string('type', 'The document type: `Rule`, `Proposed Rule`, `Notice` or `Presidential Document`.'),
    strings('agencies', 'The agencies that issued it.'),
    string('citation', 'The Federal Register citation, `89 FR 43`.'),
    date('effective_on', 'When a rule takes effect.'),
    date('comments_close_on', 'When the comment period closes.'),
  ],
  contracts: [
    string('award_id', 'The award id (PIID or FAIN).'),
    string('recipient', 'The recipient.'),
    number('amount_usd', 'The award amount, USD.'),
    string('agency', 'The awarding agency.'),
    string('sub_agency', 'The awarding sub-agency.'),
    string('state', 'The place of performance, a two-letter state code.'),
    string('award_type', 'The award type as USAspending names it.'),
    date('start', 'The period of performance start.'),
    date('end', 'The period of performance end.'),
  ],
};

/** A wire's declared fields (none for a wire not in the table). */
export function fieldsOf(wire: string): readonly FieldDef[] {
  return WIRE_FIELDS[wire] ?? [];
}
