/**
 * A wire's exact index of its facets (catalog/facets.ts): for an `any` facet, tag → the slots
 * whose article has that value (`cik:0000320193` → filings of Apple and of its insiders); for
 * a `min` facet, each slot's number. A filter on a rare value then reads its few slots instead
 * of scanning the wire.
 */
import { articleFacets, facetsOf, type FacetDef } from '../catalog/facets.js';
import type { ItemData } from './item.js';
import { Postings } from './postings.js';

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * The facet values of a wire's items, worked out where the items were parsed (a warm start's
 * worker), so that the thread that indexes them need not decode their fields: per item its
 * tags (`ids[offsets[i]] … ids[offsets[i + 1] - 1]` into `tags`) and its `min` facet's number.
 */
export interface FacetValues {
  tags: string[];
  offsets: Int32Array;
  ids: Int32Array;
  numbers: Float64Array;
}

/** Item `i`'s tags in `v`. */
export function tagsAt(v: FacetValues, i: number): string[] {
  const out: string[] = [];
  for (let k = v.offsets[i]!; k < v.offsets[i + 1]!; k++) out.push(v.tags[v.ids[k]!]!);
  return out;
}

/** The facet values of `items` of a wire (null: the wire has no facets). */
export function facetValues(wire: string, items: readonly { data?: ItemData }[]): FacetValues | null {
  const facets = facetsOf(wire);
  if (facets.length === 0) return null;
  const steps = collect(items.length, (i) => articleFacets(facets, items[i]!.data));
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value;
}

/** Items `kept` of `v` (their positions in it), in that order. */
export function pickFacets(v: FacetValues, kept: Int32Array): FacetValues {
  const offsets = new Int32Array(kept.length + 1);
  for (let k = 0; k < kept.length; k++) offsets[k + 1] = offsets[k]! + v.offsets[kept[k]! + 1]! - v.offsets[kept[k]!]!;
  const ids = new Int32Array(offsets[kept.length]!);
  kept.forEach((p, k) => ids.set(v.ids.subarray(v.offsets[p]!, v.offsets[p + 1]!), offsets[k]!));
  return { tags: v.tags, offsets, ids, numbers: Float64Array.from(kept, (p) => v.numbers[p]!) };
}

/**
 * The values of `n` items, item `i`'s given by `at(i)`, as `FacetValues` (each tag's text
 * listed once), yielding after every `every` items.
 */
function* collect(n: number, at: (i: number) => { tags: readonly string[]; number: number }, every = Number.POSITIVE_INFINITY): Generator<void, FacetValues> {
  const ids = new Map<string, number>();
  const offsets = new Int32Array(n + 1);
  const list: number[] = [];
  const numbers = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % every === 0) yield;
    const v = at(i);
    for (const tag of v.tags) {
      let id = ids.get(tag);
      if (id === undefined) ids.set(tag, (id = ids.size));
      list.push(id);
    }
    offsets[i + 1] = list.length;
    numbers[i] = v.number;
  }
  return { tags: [...ids.keys()], offsets, ids: Int32Array.from(list), numbers };
}

export class FacetIndex {
  private readonly facets: readonly FacetDef[];
  /** Whether one of them is a `min` facet (its numbers are kept). */
  private readonly min: boolean;
  private readonly postings = new Postings();
  /** Per slot, its tags (kept: removal needs them, and a query checks membership with them). */
  private tags: (readonly string[])[] = [];
  /**
   * Each tag's text, held once: thousands of filings name the same CIK, and a tag built for each
   * would be a string of its own per item. A tag is dropped with its last posting.
   */
  private readonly texts = new Map<string, string>();
  /** Per slot, its `min` facet's number (NaN: none). */
  private numbers = new Float64Array(0);

  constructor(wire: string) {
    this.facets = facetsOf(wire);
    this.min = this.facets.some((f) => f.kind === 'min');
  }

  /** Whether the wire has facets at all (most have none: every call below is then skipped). */
  get active(): boolean {
    return this.facets.length > 0;
  }

  grow(size: number): void {
    if (!this.min || size <= this.numbers.length) return;
    const grown = new Float64Array(size).fill(Number.NaN);
    grown.set(this.numbers);
    this.numbers = grown;
  }

  insert(slot: number, data: ItemData | undefined): void {
    const { tags, number } = articleFacets(this.facets, data);
    this.insertValues(slot, tags, number);
  }

  /** Indexes a slot's tags and number as `insert` works them out (or a worker did: `facetValues`). */
  insertValues(slot: number, tags: readonly string[], number: number): void {
    const held = tags.map((tag) => {
      const text = this.texts.get(tag);
      if (text === undefined) this.texts.set(tag, tag);
      return text ?? tag;
    });
    for (const t of held) this.postings.add(t, slot);
    this.tags[slot] = held.length ? held : EMPTY;
    if (this.min) {
      this.grow(slot + 1);
      this.numbers[slot] = number;
    }
  }

  remove(slot: number): void {
    for (const t of this.tags[slot] ?? EMPTY) {
      this.postings.remove(t, slot);
      if (this.postings.get(t).length === 0) this.texts.delete(t);
    }
    this.tags[slot] = EMPTY;
    if (this.min) this.numbers[slot] = Number.NaN;
  }

  /**
   * The values of `slots`, in that order (a snapshot saves them with the items: null when the
   * wire has no facets), yielding after every `every` slots.
   */
  *valueSteps(slots: readonly number[], every: number): Generator<void, FacetValues | null> {
    if (!this.active) return null;
    return yield* collect(slots.length, (i) => ({ tags: this.tags[slots[i]!] ?? EMPTY, number: this.min ? this.numbers[slots[i]!]! : Number.NaN }), every);
  }

  /** Whether a slot's article passes a query's facet filters (every group: one of its tags; the minimum). */
  passes(slot: number, groups: readonly (readonly string[])[] | undefined, min: number | undefined): boolean {
    if (min !== undefined && !(this.numbers[slot]! >= min)) return false;
    if (groups) {
      const tags = this.tags[slot] ?? EMPTY;
      for (const group of groups) if (!group.some((t) => tags.includes(t))) return false;
    }
    return true;
  }

  /** The slots that have one of the tags of a group, each once. */
  slotsOf(group: readonly string[]): number[] {
    if (group.length === 1) return [...this.postings.get(group[0]!)];
    return [...new Set(group.flatMap((t) => this.postings.get(t)))];
  }
}
