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

/** The listed companies a story names (catalog/facets.ts TAGGED_WIRES): the tagger's reading of its title and summary. */
const TICKERS = strings(
  'tickers',
  "The tickers of the US-listed companies the story is about: named in the title (a company's name from SEC's map; an ambiguous, everyday-word or person's name only with support), or given as an exchange-qualified mention or a cashtag in the title or summary; in order of first mention.",
);

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
    string('advisory', 'The advisory id: `DSA-5681-1` (Debian, from the title), `USN-7758-4` (Ubuntu, from the title), `ZDI-26-1101` (ZDI, from the title).'),
    number(
      'cvss_score',
      "The CVSS base score the advisory states: ZDI's (`The ZDI has assigned a CVSS rating of 7.8.`), which gives no vector or version. CISA's catalogue and the distributions' and Microsoft's feeds state none.",
    ),
    strings('packages', 'The source package a Debian advisory fixes, from its title: `["linux"]`, `["ruby3.1"]`. Ubuntu\'s feed names no packages.'),
    string('vendor', 'The vendor or project (CISA KEV).'),
    string('product', "The product (CISA KEV), or Ubuntu's name for the software in a notice's title: `Linux kernel (Oracle)`, `OpenJPEG`."),
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
  jobs: [
    string('company', 'The hiring company (Remotive `company_name`, Remote OK `company`).'),
    string('category', "The board's category of the job (Remotive `category`, We Work Remotely's `<category>`): `Software Development`, `DevOps and Sysadmin`."),
    strings('tags', "The posting's tags (Remotive and Remote OK `tags`)."),
    string('job_type', 'The kind of employment as the board writes it (Remotive `job_type`: `full_time`, `contract`; We Work Remotely `<type>`: `Full-Time`).'),
    string(
      'location',
      'Where the job is open to, as the board writes it (Remotive `candidate_required_location`, Remote OK `location`, We Work Remotely `<region>`): `USA`, `Worldwide`, `Anywhere in the World`.',
    ),
    string('salary', 'The salary as Remotive writes it, free text: `$170k - $200k`, `up to $19/hour`.'),
    number(
      'salary_min',
      "The salary range's lower end as Remote OK states it (`salary_min`; absent when Remote OK gives 0, its value for none). Remote OK states no unit or period: most postings give a yearly amount, a few an hourly one (`30`).",
    ),
    number('salary_max', "The salary range's upper end as Remote OK states it (`salary_max`; absent when 0)."),
  ],
  hn: [
    integer('hn_id', "The story's Hacker News item id (hnrss's guid, `news.ycombinator.com/item?id=`)."),
    string('author', 'The HN user who submitted the story (hnrss `dc:creator`).'),
    integer('points', "The story's points when the feed was read (hnrss's `Points:` line)."),
    integer('comments', "The story's comment count when the feed was read (hnrss's `# Comments:` line)."),
  ],
  arxiv: [
    string('arxiv_id', "The paper's arXiv id without its version, `2607.21596` (from the guid `oai:arXiv.org:2607.21596v1`)."),
    strings('authors', "The paper's authors, in order (arXiv's `dc:creator`, a comma-separated list)."),
    strings('categories', 'The arXiv categories the feed lists the paper under (`<category>`): `cs.AI`, `cs.LG`.'),
    string('announce_type', '`new` or `cross` (a cross-listing from another category): `arxiv:announce_type`.'),
    string('doi', "The published version's DOI, when the authors gave one (`arxiv:DOI`)."),
    string('journal_ref', 'The journal reference, when the authors gave one (`arxiv:journal_reference`).'),
  ],
  status: [
    string('severity', 'Google Cloud: the incident severity, `low`, `medium` or `high` (`severity`).'),
    string('status_impact', 'Google Cloud: `SERVICE_INFORMATION`, `SERVICE_DISRUPTION` or `SERVICE_OUTAGE` (`status_impact`).'),
    string('status', "Google Cloud: the latest update's status, `AVAILABLE` once resolved (`most_recent_update.status`)."),
    strings('affected_products', 'Google Cloud: the products affected (`affected_products[].title`).'),
    dateTime('begin', 'Google Cloud: when the incident began (`begin`).'),
    dateTime('end', 'Google Cloud: when it ended (`end`; absent while ongoing).'),
  ],
  bills: [
    string('package_id', "GovInfo's package id (the feed's guid): `BILLS-119hr1234ih`, `PLAW-119publ45`."),
    integer('congress', 'The Congress, `119`.'),
    string('bill_type', 'A bill: its type as GovInfo codes it, `hr`, `s`, `hres`, `sres`, `hjres`, `sjres`, `hconres`, `sconres`.'),
    integer('bill_number', 'A bill: its number, `1234`.'),
    string('version', 'A bill: the text version GovInfo codes, `ih` (introduced in the House), `is`, `rh` (reported), `eh` (engrossed), `enr` (enrolled).'),
    string('law_type', 'A law: `publ` (public) or `pvtl` (private).'),
    integer('law_number', 'A law: its number within the Congress, `45` for Public Law 119-45.'),
  ],
  court: [
    string('package_id', "GovInfo's package id (the feed's guid), `USCOURTS-caDC-25-05310`. CourtListener's feeds state no case fields beyond the title."),
    string('court', "GovInfo's court code, lower-case: `cadc`."),
    string('docket', 'The case number as GovInfo writes it in the package id: `25-05310`.'),
  ],
  news: [TICKERS],
  recalls: [TICKERS],
  enforcement: [string('release_number', "SEC's release number of the action, `34-105993`, `IC-36269` (the litigation feed's `dc:creator`)."), TICKERS],
  fed: [strings('categories', "The Federal Reserve's category of the release (`<category>`): `Monetary Policy`.")],
  security: [
    strings('authors', 'The bylines (`dc:creator`; RSS `<author>`, the name of its `email (Name)` form): `Sergiu Gatlan`, `The Hacker News`.'),
    strings('categories', "The publication's categories of the story (`<category>`)."),
    TICKERS,
  ],
  crypto: [
    strings('authors', 'The bylines as written (`dc:creator`): `Krisztian Sandor`, `Cointelegraph by Sam Bourgi`.'),
    strings('categories', "The publication's categories and tags of the story (`<category>`)."),
    TICKERS,
  ],
  space: [strings('authors', "The release's author (`dc:creator`)."), strings('categories', "NASA's topics of the release (`<category>`): `Artemis`, `Humans in Space`.")],
  sports: [strings('authors', 'The bylines (`dc:creator`): `Associated Press`.')],
  ailab: [strings('authors', "The post's authors (`dc:creator`, `<author>` or its `<name>`)."), strings('categories', "The lab's categories of the post (`<category>`).")],
};

/** A wire's declared fields (none for a wire not in the table). */
export function fieldsOf(wire: string): readonly FieldDef[] {
  return WIRE_FIELDS[wire] ?? [];
}
