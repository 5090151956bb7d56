/**
 * The catalogue: every wire of the contract as data, and nothing else.
 *
 * Routes, parameter validation, OpenAPI, /llms-full.txt, /sources, the MCP catalogue and
 * the x402 price list are all derived from this one list (see ./index.ts), so a wire, a
 * filter value or a price is written down exactly once.
 */

/** How often a wire's sources are polled (spec section 1). */
export type Tier = 'breaking' | 'timely' | 'sparse';

/** Source formats the ingestion layer understands. */
export type SourceFormat = 'rss' | 'atom' | 'rdf' | 'json';

/** What `q` means on a wire's routes. */
export type QueryKind =
  | 'text' //         free-text search terms
  | 'state' //        a two-letter US state code (contract awards)
  | 'none'; //        no q parameter (headlines)

export interface SourceDef {
  /** Stable id, unique across the catalogue; used by overrides, /sources and /health. */
  id: string;
  /** Human name shown as the Article's `source`. */
  name: string;
  /** The filter value this source feeds (absent when `routes` sends each entry to its own). */
  filter?: string;
  /**
   * A source that feeds several filter values: filter value → the category terms of its
   * entries (EDGAR's form names; an amendment `X/A` goes with `X`). Entries of any other
   * category are dropped and counted.
   */
  routes?: Readonly<Record<string, readonly string[]>>;
  format: SourceFormat;
  url: string;
  /**
   * Politeness floor: never poll this source more often than this, whatever its tier
   * (e.g. the whole KEV catalogue, or job boards that allow a few requests a day).
   */
  minIntervalSec?: number;
  /** Its own fixed poll interval instead of its tier's adaptive range (see ./polling.ts), and why. */
  interval?: { sec: number; why: string };
  /**
   * Paging: the query parameter that skips entries and the page size. When a poll's first
   * page does not reach back to the newest entry of the previous poll, the next pages are
   * fetched until it does (within the source's request budget).
   */
  paging?: { param: string; size: number; maxPages: number };
}

export interface RouteDef {
  path: string;
  /** USD per call as a decimal string; absent on free routes. */
  price?: '0.005' | '0.01';
  q: QueryKind;
  qRequired: boolean;
  /** Maximum number of results (paid: 50; preview: 3). */
  maxLimit: number;
  summary: string;
}

export interface WireDef {
  /** Short name, used by the CLI and MCP tool names. */
  id: string;
  title: string;
  description: string;
  /** Paid routes that read this wire (news has two: /news and /headlines). */
  paid: RouteDef[];
  preview: RouteDef;
  filter: { name: string; values: readonly string[]; description: string };
  tier: Tier;
  /** Items older than this leave the wire; also the default and largest `since`. */
  retention: string;
  /** Upper bound on stored items, oldest dropped first. */
  maxItems: number;
  sources: SourceDef[];
}

const PAID_MAX = 50;
const PREVIEW_MAX = 3;

function paid(path: string, price: '0.005' | '0.01', summary: string, q: QueryKind = 'text', qRequired = false): RouteDef {
  return { path, price, q, qRequired, maxLimit: PAID_MAX, summary };
}
function preview(path: string, summary: string, q: QueryKind = 'text', qRequired = false): RouteDef {
  return { path, q, qRequired, maxLimit: PREVIEW_MAX, summary };
}

const CNBC = (id: string) => `https://search.cnbc.com/rs/search/combinedcms/view.xml?partnerId=wrss01&id=${id}`;
const FEDREG = (code: string) => `https://www.federalregister.gov/api/v1/documents.json?conditions[type][]=${code}&order=newest&per_page=50`;
const CL = (court: string) => `https://www.courtlistener.com/feed/court/${court}/`;

export const WIRES: readonly WireDef[] = [
  {
    id: 'news',
    title: 'Breaking news',
    description: 'Breaking news from major publishers in six categories, searchable over a rolling 72-hour window.',
    paid: [paid('/news', '0.005', 'Search breaking news (q required, rolling 72-hour window)', 'text', true), paid('/headlines', '0.005', 'Newest headlines, no search terms', 'none')],
    preview: preview('/news/preview', 'Free top-3 news search (no summaries)', 'text', true),
    filter: { name: 'category', values: ['markets', 'crypto', 'tech', 'world', 'business', 'energy'], description: 'News category' },
    tier: 'breaking',
    retention: '72h',
    maxItems: 20_000,
    sources: [
      { id: 'cnbc-finance', name: 'CNBC', filter: 'markets', format: 'rss', url: CNBC('10000664') },
      { id: 'cnbc-investing', name: 'CNBC', filter: 'markets', format: 'rss', url: CNBC('15839069') },
      { id: 'marketwatch-pulse', name: 'MarketWatch', filter: 'markets', format: 'rss', url: 'https://feeds.content.dowjones.io/public/rss/mw_marketpulse' },
      { id: 'yahoo-finance', name: 'Yahoo Finance', filter: 'markets', format: 'rss', url: 'https://finance.yahoo.com/news/rssindex' },
      { id: 'news-coindesk', name: 'CoinDesk', filter: 'crypto', format: 'rss', url: 'https://www.coindesk.com/arc/outboundfeeds/rss/' },
      { id: 'news-cointelegraph', name: 'Cointelegraph', filter: 'crypto', format: 'rss', url: 'https://cointelegraph.com/rss' },
      { id: 'decrypt', name: 'Decrypt', filter: 'crypto', format: 'rss', url: 'https://decrypt.co/feed' },
      { id: 'techcrunch', name: 'TechCrunch', filter: 'tech', format: 'rss', url: 'https://techcrunch.com/feed/' },
      { id: 'theverge', name: 'The Verge', filter: 'tech', format: 'atom', url: 'https://www.theverge.com/rss/index.xml' },
      { id: 'arstechnica', name: 'Ars Technica', filter: 'tech', format: 'rss', url: 'https://arstechnica.com/feed/' },
      { id: 'bbc-technology', name: 'BBC News', filter: 'tech', format: 'rss', url: 'https://feeds.bbci.co.uk/news/technology/rss.xml' },
      { id: 'bbc-world', name: 'BBC News', filter: 'world', format: 'rss', url: 'https://feeds.bbci.co.uk/news/world/rss.xml' },
      { id: 'aljazeera', name: 'Al Jazeera', filter: 'world', format: 'rss', url: 'https://www.aljazeera.com/xml/rss/all.xml' },
      { id: 'npr-world', name: 'NPR', filter: 'world', format: 'rss', url: 'https://feeds.npr.org/1004/rss.xml' },
      { id: 'cnbc-world', name: 'CNBC', filter: 'world', format: 'rss', url: CNBC('100727362') },
      { id: 'cnbc-business', name: 'CNBC', filter: 'business', format: 'rss', url: CNBC('10001147') },
      { id: 'cnbc-economy', name: 'CNBC', filter: 'business', format: 'rss', url: CNBC('20910258') },
      { id: 'bbc-business', name: 'BBC News', filter: 'business', format: 'rss', url: 'https://feeds.bbci.co.uk/news/business/rss.xml' },
      { id: 'npr-business', name: 'NPR', filter: 'business', format: 'rss', url: 'https://feeds.npr.org/1006/rss.xml' },
      { id: 'oilprice', name: 'OilPrice.com', filter: 'energy', format: 'rss', url: 'https://oilprice.com/rss/main' },
      { id: 'cnbc-energy', name: 'CNBC', filter: 'energy', format: 'rss', url: CNBC('19836768') },
      { id: 'eia-today', name: 'EIA', filter: 'energy', format: 'rss', url: 'https://www.eia.gov/rss/todayinenergy.xml' },
    ],
  },
  {
    id: 'edgar',
    title: 'SEC EDGAR filings',
    description: 'Latest federal securities filings from SEC EDGAR, by form type.',
    paid: [paid('/edgar/filings', '0.01', 'Latest SEC filings')],
    preview: preview('/edgar/preview', 'Free top-3 SEC filings'),
    filter: { name: 'form', values: ['8-k', '10-q', '10-k', 'form-4', 's-1', '13f', '6-k', '13d'], description: 'Filing form type' },
    tier: 'breaking',
    retention: '7d',
    maxItems: 20_000,
    sources: [
      {
        id: 'edgar',
        name: 'SEC EDGAR',
        format: 'atom',
        // Every form in one listing, newest first; `owner=include` keeps ownership forms (Form 4).
        url: 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcurrent&type=&company=&dateb=&owner=include&start=0&count=100&output=atom',
        routes: {
          '8-k': ['8-K'],
          '10-q': ['10-Q'],
          '10-k': ['10-K'],
          'form-4': ['4'],
          's-1': ['S-1'],
          '13f': ['13F-HR'],
          '6-k': ['6-K'],
          '13d': ['SCHEDULE 13D', 'SC 13D'],
        },
        interval: {
          sec: 2,
          why: 'SEC allows 10 requests/s: one every 2 s is 5 % of that, keeps a filing under 2 s behind on average and 5 s at worst (one interval plus a fetch), and a 100-entry page covers 50 filings a second before paging is needed',
        },
        paging: { param: 'start', size: 100, maxPages: 10 },
      },
    ],
  },
  {
    id: 'cve',
    title: 'Vulnerability advisories',
    description: 'Known-exploited vulnerabilities and vendor security advisories.',
    paid: [paid('/cve/latest', '0.005', 'Latest vulnerability advisories')],
    preview: preview('/cve/preview', 'Free top-3 vulnerability advisories'),
    filter: { name: 'src', values: ['cisa', 'ubuntu', 'msrc', 'debian', 'zdi'], description: 'Advisory publisher' },
    tier: 'timely',
    retention: '30d',
    maxItems: 10_000,
    sources: [
      { id: 'cisa-kev', name: 'CISA KEV', filter: 'cisa', format: 'json', url: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json', minIntervalSec: 900 },
      { id: 'ubuntu-usn', name: 'Ubuntu Security Notices', filter: 'ubuntu', format: 'rss', url: 'https://ubuntu.com/security/notices/rss.xml' },
      { id: 'msrc', name: 'Microsoft Security Response Center', filter: 'msrc', format: 'rss', url: 'https://api.msrc.microsoft.com/update-guide/rss' },
      { id: 'debian-dsa', name: 'Debian Security', filter: 'debian', format: 'rdf', url: 'https://www.debian.org/security/dsa' },
      { id: 'zdi', name: 'Zero Day Initiative', filter: 'zdi', format: 'rss', url: 'https://www.zerodayinitiative.com/rss/published/' },
    ],
  },
  {
    id: 'reg',
    title: 'Federal regulations',
    description: 'Federal Register documents: rules, proposed rules, notices and presidential documents.',
    paid: [paid('/reg/latest', '0.005', 'Latest Federal Register documents')],
    preview: preview('/reg/preview', 'Free top-3 Federal Register documents'),
    filter: { name: 'type', values: ['rule', 'proposed-rule', 'notice', 'presidential'], description: 'Document type' },
    tier: 'sparse',
    retention: '30d',
    maxItems: 10_000,
    sources: [
      { id: 'fedreg-rule', name: 'Federal Register', filter: 'rule', format: 'json', url: FEDREG('RULE') },
      { id: 'fedreg-proposed', name: 'Federal Register', filter: 'proposed-rule', format: 'json', url: FEDREG('PRORULE') },
      { id: 'fedreg-notice', name: 'Federal Register', filter: 'notice', format: 'json', url: FEDREG('NOTICE') },
      { id: 'fedreg-presidential', name: 'Federal Register', filter: 'presidential', format: 'json', url: FEDREG('PRESDOCU') },
    ],
  },
  {
    id: 'weather',
    title: 'Severe weather alerts',
    description: 'Active US National Weather Service alerts by severity and urgency.',
    paid: [paid('/weather/alerts', '0.005', 'Active severe weather alerts')],
    preview: preview('/weather/preview', 'Free top-3 weather alerts'),
    filter: { name: 'severity', values: ['extreme', 'severe', 'immediate'], description: 'Alert severity or urgency' },
    tier: 'breaking',
    retention: '3d',
    maxItems: 5_000,
    sources: [
      { id: 'nws-extreme', name: 'National Weather Service', filter: 'extreme', format: 'json', url: 'https://api.weather.gov/alerts/active?severity=Extreme' },
      { id: 'nws-severe', name: 'National Weather Service', filter: 'severe', format: 'json', url: 'https://api.weather.gov/alerts/active?severity=Severe' },
      { id: 'nws-immediate', name: 'National Weather Service', filter: 'immediate', format: 'json', url: 'https://api.weather.gov/alerts/active?urgency=Immediate' },
    ],
  },
  {
    id: 'quake',
    title: 'Earthquakes',
    description: 'USGS real-time earthquake feed by magnitude band.',
    paid: [paid('/quake/latest', '0.005', 'Latest earthquakes')],
    preview: preview('/quake/preview', 'Free top-3 earthquakes'),
    filter: { name: 'mag', values: ['significant', 'm4.5', 'm2.5'], description: 'Magnitude band' },
    tier: 'breaking',
    retention: '7d',
    maxItems: 5_000,
    sources: [
      { id: 'usgs-significant', name: 'USGS', filter: 'significant', format: 'json', url: 'https://earthquake.usgs.gov/earthquakes/feed/v1.0/summary/significant_week.geojson' },
      { id: 'usgs-4.5', name: 'USGS', filter: 'm4.5', format: 'json', url: 'https://earthquake.usgs.gov/earthquakes/feed/v1.0/summary/4.5_day.geojson' },
      { id: 'usgs-2.5', name: 'USGS', filter: 'm2.5', format: 'json', url: 'https://earthquake.usgs.gov/earthquakes/feed/v1.0/summary/2.5_day.geojson' },
    ],
  },
  {
    id: 'arxiv',
    title: 'AI research papers',
    description: 'New arXiv papers in AI, machine learning, NLP and security.',
    paid: [paid('/arxiv/latest', '0.005', 'Latest arXiv papers')],
    preview: preview('/arxiv/preview', 'Free top-3 arXiv papers'),
    filter: { name: 'cat', values: ['ai', 'ml', 'nlp', 'security'], description: 'arXiv category' },
    tier: 'sparse',
    retention: '14d',
    maxItems: 20_000,
    sources: [
      { id: 'arxiv-ai', name: 'arXiv', filter: 'ai', format: 'rss', url: 'https://rss.arxiv.org/rss/cs.AI' },
      { id: 'arxiv-ml', name: 'arXiv', filter: 'ml', format: 'rss', url: 'https://rss.arxiv.org/rss/cs.LG+stat.ML' },
      { id: 'arxiv-nlp', name: 'arXiv', filter: 'nlp', format: 'rss', url: 'https://rss.arxiv.org/rss/cs.CL' },
      { id: 'arxiv-security', name: 'arXiv', filter: 'security', format: 'rss', url: 'https://rss.arxiv.org/rss/cs.CR' },
    ],
  },
  {
    id: 'fed',
    title: 'Central banks',
    description: 'Federal Reserve, FOMC and ECB announcements.',
    paid: [paid('/fed/latest', '0.01', 'Latest central bank announcements')],
    preview: preview('/fed/preview', 'Free top-3 central bank announcements'),
    filter: { name: 'src', values: ['fed', 'fomc', 'ecb'], description: 'Central bank feed' },
    tier: 'breaking',
    retention: '90d',
    maxItems: 5_000,
    sources: [
      { id: 'fed-press', name: 'Federal Reserve', filter: 'fed', format: 'rss', url: 'https://www.federalreserve.gov/feeds/press_all.xml' },
      { id: 'fed-monetary', name: 'Federal Reserve (FOMC)', filter: 'fomc', format: 'rss', url: 'https://www.federalreserve.gov/feeds/press_monetary.xml' },
      { id: 'ecb-press', name: 'European Central Bank', filter: 'ecb', format: 'rss', url: 'https://www.ecb.europa.eu/rss/press.html' },
    ],
  },
  {
    id: 'hn',
    title: 'Hacker News',
    description: 'Hacker News front page, Show HN and rising stories.',
    paid: [paid('/hn/latest', '0.005', 'Latest Hacker News stories')],
    preview: preview('/hn/preview', 'Free top-3 Hacker News stories'),
    filter: { name: 'feed', values: ['frontpage', 'show', 'rising'], description: 'Hacker News feed' },
    tier: 'breaking',
    retention: '7d',
    maxItems: 5_000,
    sources: [
      { id: 'hn-frontpage', name: 'Hacker News', filter: 'frontpage', format: 'rss', url: 'https://hnrss.org/frontpage' },
      { id: 'hn-show', name: 'Hacker News', filter: 'show', format: 'rss', url: 'https://hnrss.org/show' },
      { id: 'hn-rising', name: 'Hacker News', filter: 'rising', format: 'rss', url: 'https://hnrss.org/newest?points=20' },
    ],
  },
  {
    id: 'status',
    title: 'Cloud and AI provider incidents',
    description: 'Incidents from cloud and AI provider status pages.',
    paid: [paid('/status/latest', '0.005', 'Latest provider incidents')],
    preview: preview('/status/preview', 'Free top-3 provider incidents'),
    filter: { name: 'provider', values: ['aws', 'github', 'cloudflare', 'openai', 'anthropic', 'azure', 'gcp'], description: 'Provider' },
    tier: 'breaking',
    retention: '30d',
    maxItems: 5_000,
    sources: [
      { id: 'status-aws', name: 'AWS Health', filter: 'aws', format: 'rss', url: 'https://status.aws.amazon.com/rss/all.rss' },
      { id: 'status-github', name: 'GitHub Status', filter: 'github', format: 'atom', url: 'https://www.githubstatus.com/history.atom' },
      { id: 'status-cloudflare', name: 'Cloudflare Status', filter: 'cloudflare', format: 'atom', url: 'https://www.cloudflarestatus.com/history.atom' },
      { id: 'status-openai', name: 'OpenAI Status', filter: 'openai', format: 'atom', url: 'https://status.openai.com/history.atom' },
      { id: 'status-anthropic', name: 'Anthropic Status', filter: 'anthropic', format: 'atom', url: 'https://status.claude.com/history.atom' },
      { id: 'status-azure', name: 'Azure Status', filter: 'azure', format: 'rss', url: 'https://rssfeed.azure.status.microsoft/en-us/status/feed/' },
      { id: 'status-gcp', name: 'Google Cloud Status', filter: 'gcp', format: 'json', url: 'https://status.cloud.google.com/incidents.json' },
    ],
  },
  {
    id: 'ailab',
    title: 'AI lab announcements',
    description: 'Blog posts and announcements from AI labs.',
    paid: [paid('/ailab/latest', '0.005', 'Latest AI lab announcements')],
    preview: preview('/ailab/preview', 'Free top-3 AI lab announcements'),
    filter: { name: 'lab', values: ['openai', 'deepmind', 'google', 'huggingface', 'aws'], description: 'AI lab' },
    tier: 'timely',
    retention: '180d',
    maxItems: 5_000,
    sources: [
      { id: 'openai-news', name: 'OpenAI', filter: 'openai', format: 'rss', url: 'https://openai.com/news/rss.xml' },
      { id: 'deepmind-blog', name: 'Google DeepMind', filter: 'deepmind', format: 'rss', url: 'https://deepmind.google/blog/rss.xml' },
      { id: 'google-ai-blog', name: 'Google AI', filter: 'google', format: 'rss', url: 'https://blog.google/technology/ai/rss/' },
      { id: 'huggingface-blog', name: 'Hugging Face', filter: 'huggingface', format: 'rss', url: 'https://huggingface.co/blog/feed.xml' },
      { id: 'aws-ml-blog', name: 'AWS Machine Learning Blog', filter: 'aws', format: 'rss', url: 'https://aws.amazon.com/blogs/machine-learning/feed/' },
    ],
  },
  {
    id: 'security',
    title: 'Security journalism',
    description: 'Security news from specialist publications.',
    paid: [paid('/security/news', '0.005', 'Latest security news')],
    preview: preview('/security/preview', 'Free top-3 security news'),
    filter: { name: 'src', values: ['bleepingcomputer', 'krebs', 'hackernews', 'arstechnica'], description: 'Publication' },
    tier: 'timely',
    retention: '30d',
    maxItems: 5_000,
    sources: [
      { id: 'bleepingcomputer', name: 'BleepingComputer', filter: 'bleepingcomputer', format: 'rss', url: 'https://www.bleepingcomputer.com/feed/' },
      { id: 'krebs', name: 'Krebs on Security', filter: 'krebs', format: 'rss', url: 'https://krebsonsecurity.com/feed/' },
      { id: 'thehackernews', name: 'The Hacker News', filter: 'hackernews', format: 'rss', url: 'https://feeds.feedburner.com/TheHackersNews' },
      { id: 'arstechnica-security', name: 'Ars Technica', filter: 'arstechnica', format: 'rss', url: 'https://arstechnica.com/security/feed/' },
    ],
  },
  {
    id: 'court',
    title: 'Federal court opinions',
    description: 'New opinions of the Supreme Court, selected circuits and GovInfo court publications.',
    paid: [paid('/court/opinions', '0.01', 'Latest federal court opinions')],
    preview: preview('/court/preview', 'Free top-3 court opinions'),
    filter: { name: 'type', values: ['scotus', 'ca2', 'ca9', 'cafc', 'govinfo'], description: 'Court' },
    tier: 'sparse',
    retention: '90d',
    maxItems: 5_000,
    sources: [
      { id: 'cl-scotus', name: 'CourtListener', filter: 'scotus', format: 'atom', url: CL('scotus') },
      { id: 'cl-ca2', name: 'CourtListener', filter: 'ca2', format: 'atom', url: CL('ca2') },
      { id: 'cl-ca9', name: 'CourtListener', filter: 'ca9', format: 'atom', url: CL('ca9') },
      { id: 'cl-cafc', name: 'CourtListener', filter: 'cafc', format: 'atom', url: CL('cafc') },
      { id: 'govinfo-uscourts-cadc', name: 'GovInfo', filter: 'govinfo', format: 'rss', url: 'https://www.govinfo.gov/rss/uscourts-cadc.xml' },
    ],
  },
  {
    id: 'bills',
    title: 'Congressional bills and statutes',
    description: 'New congressional bills and public laws from GovInfo.',
    paid: [paid('/bills/latest', '0.01', 'Latest bills and statutes')],
    preview: preview('/bills/preview', 'Free top-3 bills and statutes'),
    filter: { name: 'type', values: ['bills', 'statutes'], description: 'Publication type' },
    tier: 'sparse',
    retention: '90d',
    maxItems: 10_000,
    sources: [
      { id: 'govinfo-bills', name: 'GovInfo', filter: 'bills', format: 'rss', url: 'https://www.govinfo.gov/rss/bills.xml' },
      { id: 'govinfo-plaw', name: 'GovInfo', filter: 'statutes', format: 'rss', url: 'https://www.govinfo.gov/rss/plaw.xml' },
    ],
  },
  {
    id: 'enforcement',
    title: 'Securities and trade enforcement',
    description: 'SEC and FTC enforcement announcements.',
    paid: [paid('/enforcement/latest', '0.01', 'Latest enforcement announcements')],
    preview: preview('/enforcement/preview', 'Free top-3 enforcement announcements'),
    filter: { name: 'agency', values: ['sec', 'ftc'], description: 'Agency' },
    tier: 'breaking',
    retention: '90d',
    maxItems: 5_000,
    sources: [
      { id: 'sec-press', name: 'SEC', filter: 'sec', format: 'rss', url: 'https://www.sec.gov/news/pressreleases.rss' },
      { id: 'sec-litigation', name: 'SEC', filter: 'sec', format: 'rss', url: 'https://www.sec.gov/enforcement-litigation/litigation-releases/rss' },
      { id: 'ftc-press', name: 'FTC', filter: 'ftc', format: 'rss', url: 'https://www.ftc.gov/feeds/press-release.xml' },
    ],
  },
  {
    id: 'recalls',
    title: 'Product-safety recalls',
    description: 'CPSC and FDA recall notices.',
    paid: [paid('/recalls/latest', '0.005', 'Latest product recalls')],
    preview: preview('/recalls/preview', 'Free top-3 product recalls'),
    filter: { name: 'src', values: ['cpsc', 'fda'], description: 'Agency' },
    tier: 'timely',
    retention: '90d',
    maxItems: 5_000,
    sources: [
      { id: 'cpsc-recalls', name: 'CPSC', filter: 'cpsc', format: 'rss', url: 'https://www.cpsc.gov/Newsroom/CPSC-RSS-Feed/Recalls-RSS' },
      { id: 'fda-recalls', name: 'FDA', filter: 'fda', format: 'rss', url: 'https://www.fda.gov/about-fda/contact-fda/stay-informed/rss-feeds/recalls/rss.xml' },
    ],
  },
  {
    id: 'crypto',
    title: 'Crypto news',
    description: 'Crypto market and protocol news.',
    paid: [paid('/crypto/latest', '0.005', 'Latest crypto news')],
    preview: preview('/crypto/preview', 'Free top-3 crypto news'),
    filter: { name: 'src', values: ['coindesk', 'cointelegraph', 'ethereum'], description: 'Publication' },
    tier: 'breaking',
    retention: '7d',
    maxItems: 5_000,
    sources: [
      { id: 'coindesk', name: 'CoinDesk', filter: 'coindesk', format: 'rss', url: 'https://www.coindesk.com/arc/outboundfeeds/rss/' },
      { id: 'cointelegraph', name: 'Cointelegraph', filter: 'cointelegraph', format: 'rss', url: 'https://cointelegraph.com/rss' },
      { id: 'ethereum-blog', name: 'Ethereum Foundation Blog', filter: 'ethereum', format: 'rss', url: 'https://blog.ethereum.org/feed.xml' },
    ],
  },
  {
    id: 'space',
    title: 'Space agency releases',
    description: 'NASA news releases.',
    paid: [paid('/space/latest', '0.005', 'Latest space agency releases')],
    preview: preview('/space/preview', 'Free top-3 space agency releases'),
    filter: { name: 'src', values: ['nasa'], description: 'Agency' },
    tier: 'timely',
    retention: '90d',
    maxItems: 2_000,
    sources: [{ id: 'nasa-releases', name: 'NASA', filter: 'nasa', format: 'rss', url: 'https://www.nasa.gov/news-release/feed/' }],
  },
  {
    id: 'sports',
    title: 'Sports',
    description: 'Sports news from BBC Sport and ESPN.',
    paid: [paid('/sports/latest', '0.005', 'Latest sports news')],
    preview: preview('/sports/preview', 'Free top-3 sports news'),
    filter: { name: 'src', values: ['bbc', 'espn'], description: 'Publisher' },
    tier: 'timely',
    retention: '3d',
    maxItems: 5_000,
    sources: [
      { id: 'bbc-sport', name: 'BBC Sport', filter: 'bbc', format: 'rss', url: 'https://feeds.bbci.co.uk/sport/rss.xml' },
      { id: 'espn', name: 'ESPN', filter: 'espn', format: 'rss', url: 'https://www.espn.com/espn/rss/news' },
    ],
  },
  {
    id: 'contracts',
    title: 'Federal contract awards',
    description: 'New US federal contract awards from USAspending; q is a two-letter state code of the place of performance.',
    paid: [paid('/contracts/latest', '0.01', 'Latest federal contract awards (full result sets)', 'state')],
    preview: preview('/contracts/preview', 'Free top-3 newest contract awards', 'state'),
    filter: { name: 'size', values: ['small-business', 'under-250k', '250k-1m', '1m-10m', 'over-10m'], description: 'Award size bucket' },
    tier: 'sparse',
    retention: '90d',
    maxItems: 20_000,
    sources: ['small-business', 'under-250k', '250k-1m', '1m-10m', 'over-10m'].map((size) => ({
      id: `usaspending-${size}`,
      name: 'USAspending',
      filter: size,
      format: 'json' as const,
      url: 'https://api.usaspending.gov/api/v2/search/spending_by_award/',
    })),
  },
  {
    id: 'jobs',
    title: 'Remote jobs',
    description: 'Remote job postings from public job boards (attribution: links go to the original posting).',
    paid: [paid('/jobs/latest', '0.005', 'Latest remote jobs')],
    preview: preview('/jobs/preview', 'Free top-3 remote jobs'),
    filter: {
      name: 'category',
      values: ['software-dev', 'devops', 'data', 'design', 'product', 'customer-support', 'sales-marketing', 'all-others'],
      description: 'Job category',
    },
    tier: 'sparse',
    retention: '30d',
    maxItems: 10_000,
    sources: [
      { id: 'remotive', name: 'Remotive', filter: 'software-dev', format: 'json', url: 'https://remotive.com/api/remote-jobs?category=software-dev&limit=100', minIntervalSec: 43_200 },
      { id: 'remoteok', name: 'Remote OK', filter: 'software-dev', format: 'json', url: 'https://remoteok.com/api', minIntervalSec: 3_600 },
      { id: 'wwr-devops', name: 'We Work Remotely', filter: 'devops', format: 'rss', url: 'https://weworkremotely.com/categories/remote-devops-sysadmin-jobs.rss' },
      { id: 'remotive-data', name: 'Remotive', filter: 'data', format: 'json', url: 'https://remotive.com/api/remote-jobs?category=data&limit=100', minIntervalSec: 43_200 },
      { id: 'wwr-design', name: 'We Work Remotely', filter: 'design', format: 'rss', url: 'https://weworkremotely.com/categories/remote-design-jobs.rss' },
      { id: 'wwr-product', name: 'We Work Remotely', filter: 'product', format: 'rss', url: 'https://weworkremotely.com/categories/remote-product-jobs.rss' },
      { id: 'wwr-support', name: 'We Work Remotely', filter: 'customer-support', format: 'rss', url: 'https://weworkremotely.com/categories/remote-customer-support-jobs.rss' },
      { id: 'wwr-sales', name: 'We Work Remotely', filter: 'sales-marketing', format: 'rss', url: 'https://weworkremotely.com/categories/remote-sales-and-marketing-jobs.rss' },
      { id: 'wwr-other', name: 'We Work Remotely', filter: 'all-others', format: 'rss', url: 'https://weworkremotely.com/categories/all-other-remote-jobs.rss' },
    ],
  },
];
