/**
 * The unit every wire stores: one normalised item from one source.
 *
 * Items arrive already normalised (plain-text title and summary, absolute URL, UTC
 * publication time). Everything a response needs that does not depend on the request
 * is precomputed once, when the item is stored, so serving only concatenates.
 */
export interface Item {
  /** Stable identity within the wire (guid, accession, CVE id, …); a re-sent id replaces the old item. */
  id: string;
  title: string;
  url: string;
  /** Human name of the originating source, e.g. "SEC EDGAR". */
  source: string;
  /** The wire's filter value this item belongs to, e.g. "markets", "8-k", "cisa". */
  filter: string;
  /** Publication time, epoch milliseconds UTC. */
  published: number;
  summary: string;
  /** Two-letter US state code of the place of performance (contract awards only). */
  state?: string;
}

/** A stored item plus its precomputed JSON fragments. */
export interface StoredItem extends Item {
  /** Insertion sequence number inside its wire; larger is newer in the store. */
  seq: number;
  /** `{"title":…,"url":…,"source":…,"category":…,"published":"…"` (no closing brace). */
  jsonHead: string;
  /** `,"summary":"…"` */
  jsonSummary: string;
}

/** One search result: the item and its ranking score. */
export interface Hit {
  item: StoredItem;
  relevance: number;
}

/** What a route asks a wire for. Validation has already happened. */
export interface SearchQuery {
  /** Free-text terms; undefined means "newest first". */
  q?: string;
  /** `q` already tokenized (tokenizeQuery, distinct), when the caller has done it. */
  terms?: readonly string[];
  /** Exact filter value, e.g. "markets". */
  filter?: string;
  /** Exact state code (contract awards); compared upper-case. */
  state?: string;
  /** Only items published at or after this epoch ms. */
  sinceMs: number;
  limit: number;
}

/** Builds the precomputed JSON fragments of an item. */
export function storeItem(item: Item, seq: number): StoredItem {
  // Joined, not concatenated: `+` builds a tree of cons strings, a dozen small objects per item
  // that every young-generation GC copies while the item is new and every full GC marks after.
  // `join` makes one flat string (see bench:ingest's scavenge figures in the README).
  const jsonHead = [
    '{"title":', JSON.stringify(item.title),
    ',"url":', JSON.stringify(item.url),
    ',"source":', JSON.stringify(item.source),
    ',"category":', JSON.stringify(item.filter),
    ',"published":"', new Date(item.published).toISOString(), '"',
  ].join('');
  // Every stored item gets the same fields in the same order: one object shape for the hot path.
  const stored: StoredItem = {
    id: item.id,
    title: item.title,
    url: item.url,
    source: item.source,
    filter: item.filter,
    published: item.published,
    summary: item.summary,
    seq,
    jsonHead,
    jsonSummary: [',"summary":', JSON.stringify(item.summary)].join(''),
  };
  if (item.state !== undefined) stored.state = item.state;
  return stored;
}
