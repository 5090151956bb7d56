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
