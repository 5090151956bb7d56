// Generated from src/catalog/wires.ts by `npm run build:client-types`. Do not edit.

/** Each wire and its filter parameter with the values it takes. */
export interface WireFilters {
  "news": { "category"?: "markets" | "crypto" | "tech" | "world" | "business" | "energy" };
  "edgar": { "form"?: "8-k" | "10-q" | "10-k" | "form-4" | "s-1" | "13f" | "6-k" | "13d" };
  "cve": { "src"?: "cisa" | "ubuntu" | "msrc" | "debian" | "zdi" };
  "reg": { "type"?: "rule" | "proposed-rule" | "notice" | "presidential" };
  "weather": { "severity"?: "extreme" | "severe" | "immediate" };
  "quake": { "mag"?: "significant" | "m4.5" | "m2.5" };
  "arxiv": { "cat"?: "ai" | "ml" | "nlp" | "security" };
  "fed": { "src"?: "fed" | "fomc" | "ecb" };
  "hn": { "feed"?: "frontpage" | "show" | "rising" };
  "status": { "provider"?: "aws" | "github" | "cloudflare" | "openai" | "anthropic" | "azure" | "gcp" };
  "ailab": { "lab"?: "openai" | "deepmind" | "google" | "huggingface" | "aws" };
  "security": { "src"?: "bleepingcomputer" | "krebs" | "hackernews" | "arstechnica" };
  "court": { "type"?: "scotus" | "ca2" | "ca9" | "cafc" | "govinfo" };
  "bills": { "type"?: "bills" | "statutes" };
  "enforcement": { "agency"?: "sec" | "ftc" };
  "recalls": { "src"?: "cpsc" | "fda" };
  "crypto": { "src"?: "coindesk" | "cointelegraph" | "ethereum" };
  "space": { "src"?: "nasa" };
  "sports": { "src"?: "bbc" | "espn" };
  "contracts": { "size"?: "small-business" | "under-250k" | "250k-1m" | "1m-10m" | "over-10m" };
  "jobs": { "category"?: "software-dev" | "devops" | "data" | "design" | "product" | "customer-support" | "sales-marketing" | "all-others" };
}

export type WireId = keyof WireFilters;

/** Each wire's filters on structured fields (comma-separated values where a list is taken). */
export interface WireFacets {
  "news": { "ticker"?: string; };
  "edgar": { "ticker"?: string; "cik"?: string; "item"?: string; };
  "cve": { };
  "reg": { };
  "weather": { };
  "quake": { "min_mag"?: string; };
  "arxiv": { };
  "fed": { };
  "hn": { };
  "status": { };
  "ailab": { };
  "security": { "ticker"?: string; };
  "court": { };
  "bills": { };
  "enforcement": { "ticker"?: string; };
  "recalls": { "ticker"?: string; };
  "crypto": { "ticker"?: string; };
  "space": { };
  "sports": { };
  "contracts": { };
  "jobs": { };
}

/** Each wire's `data`: the fields its articles carry where the source states them. */
export interface WireData {
  "news": { "tickers"?: string[]; };
  "edgar": { "cik"?: string; "company"?: string; "ticker"?: string; "tickers"?: string[]; "form"?: string; "accession"?: string; "filed"?: string; "items"?: string[]; "parties"?: { "role"?: string; "cik"?: string; "name"?: string; }[]; };
  "cve": { "cves"?: string[]; "advisory"?: string; "cvss_score"?: number; "packages"?: string[]; "vendor"?: string; "product"?: string; "kev"?: { "date_added"?: string; "due_date"?: string; "known_ransomware_use"?: string; }; "cwes"?: string[]; };
  "reg": { "document_number"?: string; "type"?: string; "agencies"?: string[]; "citation"?: string; "effective_on"?: string; "comments_close_on"?: string; };
  "weather": { "event"?: string; "severity"?: string; "urgency"?: string; "certainty"?: string; "areas"?: string; "onset"?: string; "expires"?: string; "sender"?: string; "message_type"?: string; };
  "quake": { "mag"?: number; "mag_type"?: string; "place"?: string; "lat"?: number; "lon"?: number; "depth_km"?: number; "tsunami"?: boolean; "alert"?: string; "felt"?: number; "sig"?: number; "status"?: string; "event_id"?: string; };
  "arxiv": { "arxiv_id"?: string; "authors"?: string[]; "categories"?: string[]; "announce_type"?: string; "doi"?: string; "journal_ref"?: string; };
  "fed": { "categories"?: string[]; };
  "hn": { "hn_id"?: number; "author"?: string; "points"?: number; "comments"?: number; };
  "status": { "severity"?: string; "status_impact"?: string; "status"?: string; "affected_products"?: string[]; "begin"?: string; "end"?: string; };
  "ailab": { "authors"?: string[]; "categories"?: string[]; };
  "security": { "authors"?: string[]; "categories"?: string[]; "tickers"?: string[]; };
  "court": { "package_id"?: string; "court"?: string; "docket"?: string; };
  "bills": { "package_id"?: string; "congress"?: number; "bill_type"?: string; "bill_number"?: number; "version"?: string; "law_type"?: string; "law_number"?: number; };
  "enforcement": { "release_number"?: string; "tickers"?: string[]; };
  "recalls": { "tickers"?: string[]; };
  "crypto": { "authors"?: string[]; "categories"?: string[]; "tickers"?: string[]; };
  "space": { "authors"?: string[]; "categories"?: string[]; };
  "sports": { "authors"?: string[]; };
  "contracts": { "award_id"?: string; "recipient"?: string; "amount_usd"?: number; "agency"?: string; "sub_agency"?: string; "state"?: string; "award_type"?: string; "start"?: string; "end"?: string; };
  "jobs": { "company"?: string; "category"?: string; "tags"?: string[]; "job_type"?: string; "location"?: string; "salary"?: string; "salary_min"?: number; "salary_max"?: number; };
}
