/**
 * One wire's items: a store bounded by age and count, and a text index over title and summary.
 *
 * Query plan. Intersecting the posting lists of frequent terms costs milliseconds, and so does
 * touching 20,000 JavaScript objects. So a term is held in one of two forms: a short posting
 * list while it is rare (`Postings`), a bitset once it is frequent (`TermBitsets`), and the
 * matching runs over typed arrays indexed by slot (an item's place in the store):
 *
 * - Rare path (the rarest query term is in fewer than `frequentMin` items): the rarest
 *   term's postings are the candidates; each other term is checked through its bitset if it
 *   is frequent, or through stamps marked from its (short) postings if not.
 *
 * A term's posting list is dropped when it gets its bitsets: removing a slot from a list costs
 * a scan and a splice of that list, so keeping every list short (under `frequentMin` long)
 * keeps eviction and replacement cheap. A term keeps its bitsets until no item holds it.
 * - Frequent path (every term is frequent): matches are dense, so the items are walked newest
 *   first, every term checked through its bitset, and the walk stops as soon as even a
 *   perfect title match that old could no longer enter the top k.
 *
 * In both, a match enters the top k only if its publication time beats the threshold that its
 * text level needs to outscore the current k-th hit; the thresholds are recomputed only when
 * the top k changes, so most matches cost a comparison and no `Math.pow`.
 *
 * Ranking (see `score`): text relevance times a recency decay.
 */
import { FacetIndex, tagsAt, type FacetValues } from './facet-index.js';
import { fragmentsOf, plainItem, storeItem, type Fragments, type Hit, type Item, type SearchQuery, type StoredItem } from './item.js';
import { hasBit, slotsOf, TermBitsets } from './bitsets.js';
import { Postings } from './postings.js';
import { buildTermTable, frequentMinFor, type SlotTermTable, type TermTable } from './term-table.js';
import { MAX_QUERY_TERMS, tokenize, tokenizeQuery } from './tokenize.js';

/** What a snapshot saves of a wire's index with its items (`WireIndex.savedIndex`). */
export interface SavedIndex {
  table: SlotTermTable;
  /** The items' facet values, in their order (null: the wire has none). */
  facets: FacetValues | null;
}

export interface WireIndexOptions {
  maxAgeMs: number;
  maxItems: number;
  /** Recency half-life of the ranking; a match loses half its weight per half-life of age. */
  halfLifeMs?: number;
  /** The catalogue wire it holds: its facets (catalog/facets.ts) are indexed. */
  wire?: string;
}

/** Most terms of a query that take part in matching; the rest are ignored. */
const DEFAULT_HALF_LIFE_MS = 24 * 3_600_000;
/** Evicted entries at the front of `order` are cut off in one splice once this many. */
const COMPACT_AFTER = 1024;
/** Words and slots `savedSteps` copies between two steps (about a megabyte, 1-3 ms). */
const STEP_WORK = 256 * 1024;
/** Items whose facet values `savedSteps` collects between two steps (an 8-K has about seven: 1-3 ms). */
const FACET_STEP = 2000;
export const sourceKey = (name: string, filter: string) => `${name}\u0000${filter}`;

/**
 * Told of every item stored, new or replacing an older version (`update`), with its distinct
 * terms (title and summary), as soon as it is in the index: what push subscribers match on.
 */
/** Told of each item stored: the item, its terms, whether it replaced one, and its slot (for `facetPasses`). */
export type StoredListener = (item: StoredItem, terms: ReadonlySet<string>, update: boolean, slot: number) => void;

export class WireIndex {
  /** Slot → stored item. */
  private slots: (StoredItem | undefined)[] = [];
  private published = new Float64Array(1024);
  private filterOf = new Int32Array(1024);
  /** Exact index of the wire's facets (cik, 8-K item, magnitude). */
  private readonly facets: FacetIndex;
  private readonly freeSlots: number[] = [];
  /**
   * Identity is (filter value, id): a story that two feeds of different filter values carry
   * (CNBC's finance and economy feeds share articles) belongs to both, and must neither
   * vanish from one nor flip between them on every poll. Unfiltered queries show it once.
   */
  private readonly byKey = new ByFilter<number>();
  /** (filter value, canonical URL) → id, so one story from two sources of a filter is stored once. */
  private readonly byUrl = new ByFilter<string>();
  /** Per slot: 1 when the same URL is also stored under another filter value. */
  private shared = new Uint8Array(1024);
  /** URL → how many filter values hold it: `shared` needs recounting only for a URL held more than once. */
  private readonly copies = new Map<string, number>();
  private readonly filterIds = new Map<string, number>();
  private readonly docFreq = new Map<string, number>();
  /** Bitsets of the frequent terms: any field, and title only. */
  private readonly anyBits = new TermBitsets();
  private readonly titleBits = new TermBitsets();
  /** Document frequency from which a term gets bitsets (and queries take the frequent path). */
  private readonly frequentMin: number;
  /** Posting lists of the rare terms: any field, and title only (keyed by the same term string, whose hash V8 keeps). */
  private readonly rare = new Postings();
  private readonly rareTitle = new Postings();
  /** Per-query scratch: slot → generation stamp and term counts. */
  private stamp = new Uint32Array(1024);
  private count = new Uint8Array(1024);
  private titleStamp = new Uint32Array(1024);
  private titleCount = new Uint8Array(1024);
  private generation = 0;
  private changes = 0;
  /**
   * Slots oldest first by publication time (then insertion). Kept sorted on every change:
   * new items are usually the newest, so they land at the end and the splice is short.
   * Eviction only advances `head` (entries before it are gone) and cuts the front off in one
   * splice now and then. Readers walk it backwards, newest first, down to `head`.
   */
  private readonly order: number[] = [];
  private head = 0;
  private seq = 0;
  private readonly halfLifeMs: number;
  /** Set by the stream hub; null while nobody listens. */
  onStored: StoredListener | null = null;

  /** Items older than this are not kept. */
  get maxAgeMs(): number {
    return this.opts.maxAgeMs;
  }

  constructor(private readonly opts: WireIndexOptions) {
    this.halfLifeMs = opts.halfLifeMs ?? DEFAULT_HALF_LIFE_MS;
    this.frequentMin = frequentMinFor(opts.maxItems);
    this.facets = new FacetIndex(opts.wire ?? '');
  }

  get options(): Readonly<WireIndexOptions> {
    return this.opts;
  }

  /** Every stored slot is in `order` from `head` on, once. */
  get size(): number {
    return this.order.length - this.head;
  }

  get(filter: string, id: string): StoredItem | undefined {
    const slot = this.byKey.get(filter, id);
    return slot === undefined ? undefined : this.slots[slot];
  }

  /**
   * Adds a batch. An item whose id (or canonical URL) is already stored replaces it, keeping
   * the stored id; items older than the retention are not stored. Each item is swapped in
   * whole, so a reader sees it before or after an update, never half-updated.
   */
  add(items: readonly Item[], now: number = Date.now()): void {
    const oldest = now - this.opts.maxAgeMs;
    for (const item of items) {
      if (!(item.published >= oldest)) continue;
      const knownId = this.byKey.has(item.filter, item.id) ? item.id : this.byUrl.get(item.filter, item.url);
      const fragments = fragmentsOf(item);
      if (knownId === undefined) {
        this.insert(item, false, fragments);
        continue;
      }
      const slot = this.byKey.get(item.filter, knownId)!;
      // Feeds re-send their latest items on every poll: an unchanged item changes nothing.
      if (sameContent(this.slots[slot]!, item, fragments)) continue;
      this.removeSlot(slot);
      this.insert(knownId === item.id ? item : plainItem(item, knownId), true, fragments);
    }
    if (this.size > this.opts.maxItems) this.evict(now);
  }

  /**
   * Fills an empty index with a whole wire at once (a warm restart): what `add` would build,
   * built the fast way. Sorted oldest first (`keptForLoad`), items append to `order` without
   * splicing, and the term structures come whole from a `TermTable`, built here or, given the
   * same `now`, by a worker thread from the same items. Nobody is told (`onStored`): these
   * items are not new. Input that `add` would have to reconcile (a repeated id or URL under one
   * filter value), or an index that is not empty, goes through `add`. `facets`: the kept items'
   * facet values (`facetValues`), worked out with the table.
   */
  load(items: readonly Item[], now: number = Date.now(), table?: TermTable, facets?: FacetValues | null): void {
    // A table is built from the kept items (here, or by the worker from the same bytes), which
    // passed the check for repeats where it was built.
    const kept = keptForLoad(items, now, this.opts, table !== undefined);
    if (!kept || this.slots.length > 0) return this.add(items, now);
    if (!table || table.count !== kept.length || table.frequentMin !== this.frequentMin) table = buildTermTable(kept, this.frequentMin);
    // Facet values worked out by the worker from the same kept items, when it did.
    const values = this.facets.active && facets?.numbers.length === kept.length ? facets : undefined;
    this.grow(kept.length);
    for (let slot = 0; slot < kept.length; slot++) {
      // The indexes hold the stored item's strings (their only copy: see `storeItem`).
      const item = (this.slots[slot] = storeItem(kept[slot]!, ++this.seq));
      this.published[slot] = item.published;
      let filterId = this.filterIds.get(item.filter);
      if (filterId === undefined) this.filterIds.set(item.filter, (filterId = this.filterIds.size));
      this.filterOf[slot] = filterId;
      this.byKey.set(item.filter, item.id, slot);
      this.byUrl.set(item.filter, item.url, item.id);
      this.copies.set(item.url, (this.copies.get(item.url) ?? 0) + 1);
      if (values) this.facets.insertValues(slot, tagsAt(values, slot), values.numbers[slot]!);
      else if (this.facets.active) this.facets.insert(slot, kept[slot]!.data);
      this.order.push(slot);
    }
    for (let slot = 0; slot < kept.length; slot++) if (this.copies.get(kept[slot]!.url)! > 1) this.shared[slot] = 1;
    this.restoreTerms(table);
    this.changes += kept.length;
  }

  private restoreTerms({ terms, freq, words, bits, offsets, slots }: TermTable): void {
    let frequent = 0;
    let rare = 0;
    for (let id = 0; id < terms.length; id++) {
      const term = terms[id]!;
      this.docFreq.set(term, freq[id]!);
      if (freq[id]! >= this.frequentMin) {
        const at = frequent++ * 2 * words;
        this.anyBits.adopt(term, bits.subarray(at, at + words));
        this.titleBits.adopt(term, bits.subarray(at + words, at + 2 * words));
        continue;
      }
      const k = rare++ * 2;
      this.rare.set(term, listOf(slots, offsets[k]!, offsets[k + 1]!));
      if (offsets[k + 2]! > offsets[k + 1]!) this.rareTitle.set(term, listOf(slots, offsets[k + 1]!, offsets[k + 2]!));
    }
  }

  /** Drops items older than the retention, then the oldest beyond the count bound. */
  evict(now: number): number {
    const order = this.order;
    const oldest = now - this.opts.maxAgeMs;
    let n = 0;
    while (this.head < order.length && (this.size > this.opts.maxItems || this.published[order[this.head]!]! < oldest)) {
      this.release(order[this.head]!);
      this.head++;
      n++;
    }
    if (this.head >= COMPACT_AFTER || this.head * 2 > order.length) {
      order.splice(0, this.head);
      this.head = 0;
    }
    return n;
  }

  search(q: SearchQuery, now: number): Hit[] {
    return q.q === undefined ? this.newestFirst(q) : this.ranked(q, now);
  }

  newest(filter?: string): StoredItem | undefined {
    for (let i = this.order.length - 1; i >= this.head; i--) {
      const item = this.slots[this.order[i]!]!;
      if (filter === undefined || item.filter === filter) return item;
    }
    return undefined;
  }

  countByFilter(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const item of this.items()) {
      const f = item.filter;
      counts[f] = (counts[f] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * Items held per publisher and filter value, keyed `sourceKey(name, filter)` (an item two
   * sources carry counts once, for the one that stored it).
   */
  countBySource(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const item of this.items()) {
      const key = sourceKey(item.source, item.filter);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  }

  /** Oldest first, as `order` holds them: a snapshot loads back in the same order. */
  items(): StoredItem[] {
    const out: StoredItem[] = [];
    for (let i = this.head; i < this.order.length; i++) out.push(this.slots[this.order[i]!]!);
    return out;
  }

  /**
   * What a snapshot saves of this index with `items()` (`SavedIndex`): the term table as this
   * index holds it, by slot, with each slot's position among the items (`SlotTermTable`: copies
   * of its bitsets and lists, quick enough to take on the serving thread at each snapshot), and
   * the items' facet values. A warm restart restores the text index from the table
   * (`keptTable`) instead of tokenising every item again.
   */
  savedIndex(): SavedIndex {
    const steps = this.savedSteps();
    for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value!;
  }

  /**
   * `savedIndex()` in steps of about a megabyte copied (or FACET_STEP items' facet values), so
   * that a save can let requests in between (see snapshot.ts `saveIndex`): null when the index
   * changed between two steps.
   */
  *savedSteps(): Generator<void, SavedIndex | null> {
    const version = this.changes;
    let work = 0;
    const position = new Int32Array(this.slots.length).fill(-1);
    for (let i = this.head; i < this.order.length; i++) position[this.order[i]!] = i - this.head;
    const words = Math.max(1, Math.ceil(position.length / 32));
    const terms: string[] = [];
    const freq = new Int32Array(this.docFreq.size);
    let frequent = 0;
    for (const [term, f] of this.docFreq) if (f >= this.frequentMin && this.anyBits.has(term)) frequent++;
    const bits = new Uint32Array(frequent * 2 * words);
    const offsets = new Int32Array(2 * this.docFreq.size + 1);
    let slots = new Int32Array(1024);
    let nBits = 0;
    let nLists = 1;
    let n = 0;
    const pushList = (list: ArrayLike<number>) => {
      if (n + list.length > slots.length) {
        const grown = new Int32Array(Math.max(slots.length * 2, n + list.length));
        grown.set(slots.subarray(0, n));
        slots = grown;
      }
      for (let i = 0; i < list.length; i++) slots[n++] = list[i]!;
      offsets[nLists++] = n;
      work += list.length;
    };
    for (const [term, f] of this.docFreq) {
      if (work > STEP_WORK) {
        yield;
        if (this.changes !== version) return null;
        work = 0;
      }
      const any = this.anyBits.get(term);
      const title = this.titleBits.get(term);
      work += 2 * words;
      if (any && title && f >= this.frequentMin) {
        bits.set(any.subarray(0, words), nBits);
        bits.set(title.subarray(0, words), nBits + words);
        nBits += 2 * words;
      } else if (any && title) {
        // A term keeps its bitsets after falling below the threshold (see `release`); a built
        // table holds it as lists.
        pushList(slotsOf(any));
        pushList(slotsOf(title));
      } else {
        pushList(this.rare.get(term));
        pushList(this.rareTitle.get(term));
      }
      freq[terms.length] = f;
      terms.push(term);
    }
    const count = this.order.length - this.head;
    const table: SlotTermTable = { count, frequentMin: this.frequentMin, terms, freq, words, bits, offsets: offsets.slice(0, nLists), slots: slots.slice(0, n), position };
    const facetSteps = this.facets.valueSteps(this.order.slice(this.head), FACET_STEP);
    for (let step = facetSteps.next(); ; step = facetSteps.next()) {
      if (step.done) return { table, facets: step.value };
      yield;
      if (this.changes !== version) return null;
    }
  }

  /**
   * No `q`: newest first, relevance 1. The order is by publication time, so `since` ends the
   * scan. With facet tags, the candidates are the smallest tag group's slots, sorted newest
   * first, instead of the whole wire.
   */
  private newestFirst(q: SearchQuery): Hit[] {
    const hits: Hit[] = [];
    // Without a filter, a story stored under two filter values is shown once.
    const seen = q.filter === undefined ? new Set<string>() : undefined;
    if (q.tags) {
      for (const slot of this.taggedNewestFirst(q.tags)) if (!this.takeNewest(q, slot, hits, seen)) break;
    } else {
      for (let i = this.order.length - 1; i >= this.head; i--) if (!this.takeNewest(q, this.order[i]!, hits, seen)) break;
    }
    return hits;
  }

  /** Adds a slot to a newest-first answer if it matches; false once the answer is complete (or `since` is passed). */
  private takeNewest(q: SearchQuery, slot: number, hits: Hit[], seen: Set<string> | undefined): boolean {
    if (this.published[slot]! < q.sinceMs) return false;
    const item = this.slots[slot]!;
    if ((q.filter !== undefined && item.filter !== q.filter) || (q.state !== undefined && item.state !== q.state)) return true;
    if (!this.facetPasses(slot, q)) return true;
    if (seen && this.shared[slot] === 1) {
      if (seen.has(item.url)) return true;
      seen.add(item.url);
    }
    hits.push({ item, relevance: 1 });
    return hits.length < q.limit;
  }

  /** The slots of the smallest tag group, newest first. */
  private taggedNewestFirst(groups: readonly (readonly string[])[]): number[] {
    let candidates: number[] | null = null;
    for (const g of groups) {
      const slots = this.facets.slotsOf(g);
      if (candidates === null || slots.length < candidates.length) candidates = slots;
    }
    const slots = this.slots;
    return candidates!.sort((a, b) => this.published[b]! - this.published[a]! || slots[b]!.seq - slots[a]!.seq);
  }

  /** Whether a slot's item passes facet filters: a query's, or a stream subscription's. */
  facetPasses(slot: number, q: Pick<SearchQuery, 'tags' | 'min'>): boolean {
    return (q.tags === undefined && q.min === undefined) || this.facets.passes(slot, q.tags, q.min);
  }

  private ranked(q: SearchQuery, now: number): Hit[] {
    // At most MAX_QUERY_TERMS: the parameter check refuses longer queries before they get here.
    const terms = (q.terms ?? [...new Set(tokenizeQuery(q.q!))]).slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0) return [];
    let rarest = 0;
    let rarestFreq = Number.POSITIVE_INFINITY;
    for (let i = 0; i < terms.length; i++) {
      const f = this.docFreq.get(terms[i]!) ?? 0;
      if (f === 0) return []; // every term must match, and nothing has this one
      if (f < rarestFreq) {
        rarest = i;
        rarestFreq = f;
      }
    }
    const filterId = q.filter === undefined ? -1 : (this.filterIds.get(q.filter) ?? -2);
    if (filterId === -2) return [];
    const ctx = new TopK(this, terms.length, q, filterId, now);
    if (rarestFreq >= this.frequentMin) this.walkNewestFirst(terms, ctx);
    else this.walkPostings(terms, rarest, ctx);
    return ctx.top;
  }

  /** Frequent path: every term has bitsets. */
  private walkNewestFirst(terms: readonly string[], ctx: TopK): void {
    const any = terms.map((t) => this.anyBits.get(t)!);
    const title = terms.map((t) => this.titleBits.get(t)!);
    const published = this.published;
    const bestLevel = terms.length;
    const order = this.order;
    outer: for (let i = order.length - 1; i >= this.head; i--) {
      const slot = order[i]!;
      const pub = published[slot]!;
      if (pub < ctx.sinceMs || pub < ctx.minPublished[bestLevel]!) break; // nothing older can enter
      if (!ctx.passesFilter(slot)) continue;
      let inTitle = 0;
      for (let i = 0; i < any.length; i++) {
        if (!hasBit(any[i]!, slot)) continue outer;
        if (hasBit(title[i]!, slot)) inTitle++;
      }
      ctx.consider(slot, pub, inTitle);
    }
  }

  /** Rare path: candidates are the rarest term's postings, newest insertions first. */
  private walkPostings(terms: readonly string[], rarest: number, ctx: TopK): void {
    const gen = this.nextGeneration();
    const { stamp, count, titleStamp, titleCount } = this;
    // Terms without bitsets (rare ones) are checked through stamps marked from their postings.
    let marked = 0;
    const bitChecks: Uint32Array[] = [];
    const titleBitChecks: Uint32Array[] = [];
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!;
      const tb = this.titleBits.get(term);
      if (tb) titleBitChecks.push(tb);
      else {
        for (const slot of this.rareTitle.get(term)) {
          if (titleStamp[slot] !== gen) {
            titleStamp[slot] = gen;
            titleCount[slot] = 0;
          }
          titleCount[slot]!++;
        }
      }
      if (i === rarest) continue;
      const ab = this.anyBits.get(term);
      if (ab) {
        bitChecks.push(ab);
        continue;
      }
      for (const slot of this.rare.get(term)) {
        if (stamp[slot] !== gen) {
          stamp[slot] = gen;
          count[slot] = 0;
        }
        if (count[slot] === marked) count[slot] = marked + 1;
      }
      marked++;
    }
    const published = this.published;
    // The rarest term's slots: its bitset if it has one (a term that was frequent), else its
    // posting list.
    const rarestBits = this.anyBits.get(terms[rarest]!);
    const candidates = rarestBits ? slotsOf(rarestBits) : this.rare.get(terms[rarest]!);
    outer: for (let c = candidates.length - 1; c >= 0; c--) {
      const slot = candidates[c]!;
      if (marked > 0 && (stamp[slot] !== gen || count[slot] !== marked)) continue;
      const pub = published[slot]!;
      if (pub < ctx.sinceMs || pub < ctx.minPublished[terms.length]! || !ctx.passesFilter(slot)) continue;
      for (const b of bitChecks) if (!hasBit(b, slot)) continue outer;
      let inTitle = titleStamp[slot] === gen ? titleCount[slot]! : 0;
      for (const b of titleBitChecks) if (hasBit(b, slot)) inTitle++;
      ctx.consider(slot, pub, inTitle);
    }
  }

  /** @internal used by queries: whether another filter value also holds this slot's URL. */
  isShared(slot: number): boolean {
    return this.shared[slot] === 1;
  }

  /**
   * Marks the slots of a URL held under several filter values. Only those are checked for
   * twins at query time, so unfiltered queries pay nothing when a URL is stored once. Called
   * only for a URL stored more than once, or whose copies fell to one (rare: most are stored once).
   */
  private recountCopies(url: string): void {
    const slots: number[] = [];
    for (const f of this.filterIds.keys()) {
      const id = this.byUrl.get(f, url);
      const slot = id === undefined ? undefined : this.byKey.get(f, id);
      if (slot !== undefined) slots.push(slot);
    }
    for (const slot of slots) this.shared[slot] = slots.length > 1 ? 1 : 0;
  }

  /** @internal used by TopK */
  itemAt(slot: number): StoredItem {
    return this.slots[slot]!;
  }

  /** @internal used by TopK */
  filterAt(slot: number): number {
    return this.filterOf[slot]!;
  }

  /**
   * Text relevance in [0.5, 1]: 0.5 when every term matches only in the summary, 1 when every
   * term is in the title. The score is that times a recency decay of one half per half-life of
   * age (24 h by default). So at equal age a title match beats a summary-only match, among
   * equal text matches the newer wins, and a title match loses to a fresh summary-only match
   * once it is more than one half-life older.
   */
  score(text: number, published: number, now: number): number {
    return text * 2 ** (-Math.max(0, now - published) / this.halfLifeMs);
  }

  /** The publication time at which a match of this text level scores exactly `target`. */
  publishedToScore(text: number, target: number, now: number): number {
    // 1 ms of slack so floating-point rounding never excludes a match that ties the k-th hit.
    return target <= 0 ? Number.NEGATIVE_INFINITY : now + this.halfLifeMs * Math.log2(target / text) - 1;
  }

  private nextGeneration(): number {
    this.generation = (this.generation + 1) >>> 0;
    if (this.generation === 0) {
      // Wrapped after 2^32 queries: reset the stamps so no old stamp can match.
      this.stamp.fill(0);
      this.titleStamp.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }

  /** Changes with every item stored or dropped: an answer computed at one version holds until the next. */
  get version(): number {
    return this.changes;
  }

  private insert(item: Item, update: boolean, fragments: Fragments): void {
    this.changes++;
    const slot = this.freeSlots.pop() ?? this.slots.length;
    if (slot >= this.published.length) this.grow(slot + 1);
    const stored = storeItem(item, ++this.seq, fragments);
    this.slots[slot] = stored;
    this.published[slot] = item.published;
    let filterId = this.filterIds.get(item.filter);
    if (filterId === undefined) this.filterIds.set(item.filter, (filterId = this.filterIds.size));
    this.filterOf[slot] = filterId;
    this.shared[slot] = 0;
    if (this.facets.active) this.facets.insert(slot, item.data);
    const { title, all } = termsOf(item); // the item's own text: the stored one holds it only as JSON
    for (const t of all) {
      const f = (this.docFreq.get(t) ?? 0) + 1;
      this.docFreq.set(t, f);
      if (this.anyBits.has(t)) {
        this.anyBits.set(t, slot);
        if (title.has(t)) this.titleBits.set(t, slot);
        continue;
      }
      this.rare.add(t, slot);
      if (title.has(t)) this.rareTitle.add(t, slot);
      if (f < this.frequentMin) continue;
      // Just became frequent: every item holding it is in its posting lists (it was rare when
      // each was added), so its bitsets start complete and the lists can go.
      this.anyBits.create(t, this.rare.get(t));
      this.titleBits.create(t, this.rareTitle.get(t));
      this.rare.drop(t);
      this.rareTitle.drop(t);
    }
    // The indexes hold the stored item's strings (their only copy: see `storeItem`).
    this.byKey.set(stored.filter, stored.id, slot);
    this.byUrl.set(stored.filter, stored.url, stored.id);
    const copies = (this.copies.get(item.url) ?? 0) + 1;
    this.copies.set(stored.url, copies);
    if (copies > 1) this.recountCopies(item.url);
    this.order.splice(this.orderPosition(item.published, stored.seq), 0, slot);
    this.onStored?.(stored, all, update, slot);
  }

  /** Index in `order` of the first entry after (published, seq): binary search. */
  private orderPosition(published: number, seq: number): number {
    let lo = this.head;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.order[mid]!;
      const p = this.published[s]!;
      if (p < published || (p === published && this.slots[s]!.seq <= seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Removes a stored item: from `order` and from every index. */
  private removeSlot(slot: number): void {
    const item = this.slots[slot]!;
    this.order.splice(this.orderPosition(item.published, item.seq) - 1, 1);
    this.release(slot);
  }

  /** Takes a slot's item out of the indexes and frees the slot (the caller handles `order`). */
  private release(slot: number): void {
    this.changes++;
    const item = this.slots[slot]!;
    this.slots[slot] = undefined;
    if (this.facets.active) this.facets.remove(slot);
    this.byKey.delete(item.filter, item.id);
    if (this.byUrl.get(item.filter, item.url) === item.id) this.byUrl.delete(item.filter, item.url);
    const copies = this.copies.get(item.url)! - 1;
    if (copies === 0) this.copies.delete(item.url);
    else {
      this.copies.set(item.url, copies);
      if (copies === 1) this.recountCopies(item.url);
    }
    // Terms are recomputed rather than kept per item: removals are rare next to the memory
    // forty strings per item would cost.
    for (const t of termsOf(item).all) {
      const f = (this.docFreq.get(t) ?? 1) - 1;
      if (f > 0) this.docFreq.set(t, f);
      else this.docFreq.delete(t);
      if (!this.anyBits.has(t)) {
        this.rare.remove(t, slot);
        this.rareTitle.remove(t, slot);
      } else if (f === 0) {
        // A frequent term keeps its bitsets until no item holds it any more: its posting lists
        // were dropped when it became frequent, so they cannot take over again.
        this.anyBits.drop(t);
        this.titleBits.drop(t);
      } else {
        this.anyBits.clear(t, slot);
        this.titleBits.clear(t, slot);
      }
    }
    this.freeSlots.push(slot);
  }

  private grow(min: number): void {
    const size = Math.max(min, this.published.length * 2);
    const grown = <T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(size);
      b.set(a);
      return b;
    };
    this.published = grown(this.published);
    this.filterOf = grown(this.filterOf);
    this.stamp = grown(this.stamp);
    this.count = grown(this.count);
    this.titleStamp = grown(this.titleStamp);
    this.titleCount = grown(this.titleCount);
    this.shared = grown(this.shared);
    this.anyBits.grow(size);
    this.titleBits.grow(size);
  }
}

/** `slots[from … to - 1]` as a list of its own length (`Array.from` on a view goes through the iterator). */
function listOf(slots: Int32Array, from: number, to: number): number[] {
  const list = new Array<number>(to - from);
  for (let i = from; i < to; i++) list[i - from] = slots[i]!;
  return list;
}

/**
 * What `WireIndex.load` stores of a wire's items, oldest first (slot order): those within the
 * retention, the newest up to the cap. Undefined when an id or a URL repeats under one filter
 * value, which only `add` reconciles; `checked`: these items were already found free of repeats.
 */
export function keptForLoad(items: readonly Item[], now: number, opts: WireIndexOptions, checked = false): Item[] | undefined {
  const positions = keptPositions(
    Float64Array.from(items, (i) => i.published),
    now,
    opts,
  );
  // Most often every item, in order (a warm start's worker kept them with the same clock).
  const kept = positions.length === items.length && positions.every((p, k) => p === k) ? [...items] : Array.from(positions, (p) => items[p]!);
  if (checked) return kept;
  const keys = new Set<string>();
  for (const i of kept) keys.add(key(i.filter, i.id)).add(key(i.filter, i.url) + '\n');
  return keys.size === kept.length * 2 ? kept : undefined;
}

/**
 * The positions in `published` (items' publication times) of the items `keptForLoad` keeps,
 * in the order it keeps them: published within the retention, oldest first (of two published
 * at once, the earlier position first), the newest up to the cap.
 */
export function keptPositions(published: Float64Array, now: number, opts: WireIndexOptions): Int32Array {
  const oldest = now - opts.maxAgeMs;
  const kept: number[] = [];
  let sorted = true;
  for (let p = 0; p < published.length; p++) {
    if (!(published[p]! >= oldest)) continue;
    if (kept.length > 0 && published[p]! < published[kept[kept.length - 1]!]!) sorted = false;
    kept.push(p);
  }
  // A stable sort, skipped when a wire saved its items in publication order (most do).
  if (!sorted) kept.sort((a, b) => published[a]! - published[b]!);
  return Int32Array.from(kept.length > opts.maxItems ? kept.slice(kept.length - opts.maxItems) : kept);
}

function key(filter: string, idOrUrl: string): string {
  return filter + '\n' + idOrUrl;
}

/**
 * Values under (filter value, id or URL). Two levels of maps rather than one keyed by the
 * joined text: the maps hold the item's own strings, where a joined key was one more copy of
 * its id or URL per index for as long as the item is stored, and one more string per lookup.
 */
class ByFilter<V> {
  private readonly maps = new Map<string, Map<string, V>>();

  get(filter: string, k: string): V | undefined {
    return this.maps.get(filter)?.get(k);
  }

  has(filter: string, k: string): boolean {
    return this.maps.get(filter)?.has(k) ?? false;
  }

  set(filter: string, k: string, v: V): void {
    let m = this.maps.get(filter);
    if (!m) this.maps.set(filter, (m = new Map()));
    m.set(k, v);
  }

  delete(filter: string, k: string): void {
    this.maps.get(filter)?.delete(k);
  }
}

/** The distinct terms of an item: title, and title with summary. */
function termsOf(item: Item): { title: Set<string>; all: Set<string> } {
  const title = new Set(tokenize(item.title));
  const all = new Set(title);
  for (const t of tokenize(item.summary)) all.add(t);
  return { title, all };
}

/** The top k of one query and the per-level publication thresholds that guard it. */
class TopK {
  readonly top: Hit[] = [];
  /** Per text level (terms in the title), the publication time a match needs to enter. */
  readonly minPublished: Float64Array;
  readonly sinceMs: number;

  constructor(
    private readonly index: WireIndex,
    private readonly terms: number,
    private readonly q: SearchQuery,
    private readonly filterId: number,
    private readonly now: number,
  ) {
    this.minPublished = new Float64Array(terms + 1).fill(Number.NEGATIVE_INFINITY);
    this.sinceMs = q.sinceMs;
  }

  passesFilter(slot: number): boolean {
    if (this.filterId >= 0 && this.index.filterAt(slot) !== this.filterId) return false;
    if (this.q.state !== undefined && this.index.itemAt(slot).state !== this.q.state) return false;
    return this.index.facetPasses(slot, this.q);
  }

  consider(slot: number, pub: number, inTitle: number): void {
    if (pub < this.minPublished[inTitle]!) return;
    const item = this.index.itemAt(slot);
    const relevance = this.index.score(textLevel(inTitle, this.terms), pub, this.now);
    if (this.filterId < 0 && this.index.isShared(slot)) {
      // Without a filter, a story stored under two filter values is shown once: the better copy.
      const twin = this.top.findIndex((h) => h.item.url === item.url);
      if (twin >= 0) {
        if (relevance <= this.top[twin]!.relevance) return;
        this.top.splice(twin, 1);
      }
    }
    if (insertTop(this.top, { item, relevance }, this.q.limit) && this.top.length === this.q.limit) {
      const kth = this.top[this.top.length - 1]!.relevance;
      for (let l = 0; l <= this.terms; l++) this.minPublished[l] = this.index.publishedToScore(textLevel(l, this.terms), kth, this.now);
    }
  }
}

/** Whether `b`, whose fragments are given, would be stored as `a` is (title and summary compared as JSON). */
function sameContent(a: StoredItem, b: Item, fragments: Fragments): boolean {
  return a.published === b.published && a.url === b.url && a.state === b.state && a.jsonHead === fragments.jsonHead && a.jsonSummary === fragments.jsonSummary && a.jsonData === fragments.jsonData;
}

function textLevel(inTitle: number, terms: number): number {
  return 0.5 + (0.5 * inTitle) / terms;
}

/** Keeps `top` sorted by relevance (then newer first), at most `limit` long; true if `hit` entered. */
function insertTop(top: Hit[], hit: Hit, limit: number): boolean {
  const better = (a: Hit, b: Hit) => a.relevance > b.relevance || (a.relevance === b.relevance && a.item.published > b.item.published);
  if (top.length === limit && !better(hit, top[top.length - 1]!)) return false;
  let i = top.length;
  while (i > 0 && better(hit, top[i - 1]!)) i--;
  top.splice(i, 0, hit);
  if (top.length > limit) top.pop();
  return true;
}
