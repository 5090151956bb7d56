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
  /** The wire's own fields, as its source states them (the catalogue declares them: `data` of each wire). */
  data?: ItemData;
}

/** An item's structured fields: names and types declared once per wire in the catalogue. */
export type ItemData = Readonly<Record<string, unknown>>;

/**
 * A stored item: its precomputed JSON fragments, and the fields the index reads on every
 * insert, eviction and search. The title and summary are held once, inside the fragments: a
 * wire holds tens of thousands of items, and a second copy of their text doubled what that
 * text costs on the heap and in each young-generation GC's copying while the item is new (see
 * bench:memory's heap and bench:ingest's scavenge time). Reading `title` or `summary` decodes
 * it again, which only eviction (to find the item's terms), a test or a client of the index does.
 */
export interface StoredItem extends Item {
  /** Insertion sequence number inside its wire; larger is newer in the store. */
  readonly seq: number;
  /** `{"title":…,"url":…,"source":…,"category":…,"published":"…"` (no closing brace). */
  readonly jsonHead: string;
  /** `,"summary":"…"` */
  readonly jsonSummary: string;
  /** `,"data":{…}`, or '' when the source states none of the wire's fields. */
  readonly jsonData: string;
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
  /** Filters on structured fields (catalog/facets.ts): each group's tags, any of which matches; every group must match. */
  tags?: readonly (readonly string[])[];
  /** The wire's `min` facet: its field at least this. */
  min?: number;
  /** Only items published at or after this epoch ms. */
  sinceMs: number;
  limit: number;
}

/**
 * The fields of an item as a plain object (a stored item's fragments and sequence left out).
 * Spreading a stored item would not do: its title and summary are read through its class.
 */
export function plainItem(i: Item, id = i.id): Item {
  const plain: Item = { id, title: i.title, url: i.url, source: i.source, filter: i.filter, published: i.published, summary: i.summary };
  if (i.state !== undefined) plain.state = i.state;
  if (i.data !== undefined) plain.data = i.data;
  return plain;
}

/** Where the title's JSON text starts in `jsonHead`, and the summary's in `jsonSummary`. */
const TITLE_AT = '{"title":'.length;
const SUMMARY_AT = ',"summary":'.length;
const DATA_AT = ',"data":'.length;

/**
 * Where the title's JSON string ends in `jsonHead`: at `,"url":`, which cannot occur inside it
 * (a quote in a JSON string is escaped).
 */
const titleEndOf = (jsonHead: string) => jsonHead.indexOf(',"url":', TITLE_AT);

/** An item's title, decoded from its fragments (`titleEnd`: where its JSON string ends, when known). */
export function titleOf(jsonHead: string, titleEnd = titleEndOf(jsonHead)): string {
  return JSON.parse(jsonHead.slice(TITLE_AT, titleEnd)) as string;
}

export function summaryOf(jsonSummary: string): string {
  return JSON.parse(jsonSummary.slice(SUMMARY_AT)) as string;
}

export function dataOf(jsonData: string): ItemData | undefined {
  return jsonData === '' ? undefined : (JSON.parse(jsonData.slice(DATA_AT)) as ItemData);
}

/** An item's request-independent JSON, as a stored item keeps it. */
export type Fragments = Pick<StoredItem, 'jsonHead' | 'jsonSummary' | 'jsonData'>;

/** An item that already holds its fragments (one read back from a snapshot): stored as they are. */
export interface CarriesFragments {
  readonly fragments: Fragments;
}

/** The JSON fragments of an item's own fields, as `storeItem` keeps them (the item's own, when it carries them). */
export function fragmentsOf(item: Item): Fragments {
  if (item instanceof Stored) return item;
  const carried = (item as Partial<CarriesFragments>).fragments;
  if (carried) return carried;
  // Joined, not concatenated: `+` builds a tree of cons strings, a dozen small objects per item
  // that every young-generation GC copies while the item is new and every full GC marks after.
  // `join` makes one flat string (see bench:ingest's scavenge figures in docs/benchmarks.md).
  const jsonHead = [
    '{"title":',
    JSON.stringify(item.title),
    ',"url":',
    JSON.stringify(item.url),
    ',"source":',
    JSON.stringify(item.source),
    ',"category":',
    JSON.stringify(item.filter),
    ',"published":"',
    new Date(item.published).toISOString(),
    '"',
  ].join('');
  const jsonData = item.data === undefined ? '' : [',"data":', JSON.stringify(item.data)].join('');
  return { jsonHead, jsonSummary: [',"summary":', JSON.stringify(item.summary)].join(''), jsonData };
}

class Stored implements StoredItem {
  constructor(
    readonly id: string,
    readonly url: string,
    readonly source: string,
    readonly filter: string,
    readonly published: number,
    readonly seq: number,
    readonly jsonHead: string,
    readonly jsonSummary: string,
    readonly jsonData: string,
    readonly state: string | undefined,
    /** Where the title's JSON string ends in `jsonHead`. */
    private readonly titleEnd: number,
  ) {}

  get title(): string {
    return titleOf(this.jsonHead, this.titleEnd);
  }

  get summary(): string {
    return summaryOf(this.jsonSummary);
  }

  get data(): ItemData | undefined {
    return dataOf(this.jsonData);
  }
}

/** Source names and filter values repeat across thousands of items: each text is held once. */
const names = new Map<string, string>();
function shared(name: string): string {
  const known = names.get(name);
  if (known !== undefined) return known;
  if (names.size < 4096) names.set(name, name); // the catalogue's names are far fewer
  return name;
}

/**
 * Stores an item under its sequence number. `fragments`, when the caller has built them
 * (to compare a re-sent item with the stored one), are not built again.
 */
export function storeItem(item: Item, seq: number, fragments: Fragments = fragmentsOf(item)): StoredItem {
  // Made already under this sequence number (`storedItem`): kept as it is, a stored item never changes.
  if (item instanceof Stored && item.seq === seq) return item;
  const { jsonHead, jsonSummary, jsonData } = fragments;
  // Most feeds' ids are their links: the same text, then held once.
  const id = item.id === item.url ? item.url : item.id;
  // One class: every stored item has one shape for the hot path.
  const titleEnd = titleEndOf(jsonHead);
  return new Stored(id, item.url, shared(item.source), shared(item.filter), item.published, seq, jsonHead, jsonSummary, jsonData, item.state, titleEnd);
}

/**
 * A stored item made straight from its parts, under the sequence number it will be stored with
 * (a warm start's items, in the order `WireIndex.load` stores them: `storeItem` then keeps each
 * as it is, rather than one more object per item made and dropped).
 */
export function storedItem(id: string, url: string, source: string, filter: string, published: number, state: string | undefined, fragments: Fragments, seq: number): StoredItem {
  const { jsonHead, jsonSummary, jsonData } = fragments;
  return new Stored(id === url ? url : id, url, shared(source), shared(filter), published, seq, jsonHead, jsonSummary, jsonData, state, titleEndOf(jsonHead));
}
