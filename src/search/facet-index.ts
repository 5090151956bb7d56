/**
 * A wire's exact index of its facets (catalog/facets.ts): for an `any` facet, tag → the slots
 * whose article has that value (`cik:0000320193` → filings of Apple and of its insiders); for
 * a `min` facet, each slot's number. A filter on a rare value then reads its few slots instead
 * of scanning the wire.
 */
import { facetsOf, facetTag, type FacetDef } from '../catalog/facets.js';
import type { ItemData } from './item.js';
import { Postings } from './postings.js';

const EMPTY: readonly string[] = Object.freeze([]);

export class FacetIndex {
  private readonly any: readonly FacetDef[];
  private readonly min: FacetDef | undefined;
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
    const facets = facetsOf(wire);
    this.any = facets.filter((f) => f.kind === 'any');
    this.min = facets.find((f) => f.kind === 'min');
  }

  /** Whether the wire has facets at all (most have none: every call below is then skipped). */
  get active(): boolean {
    return this.any.length > 0 || this.min !== undefined;
  }

  grow(size: number): void {
    if (!this.min || size <= this.numbers.length) return;
    const grown = new Float64Array(size).fill(Number.NaN);
    grown.set(this.numbers);
    this.numbers = grown;
  }

  insert(slot: number, data: ItemData | undefined): void {
    const tags: string[] = [];
    if (data) {
      for (const f of this.any) {
        const values = f.of(data);
        if (!Array.isArray(values)) continue;
        for (const v of values) {
          const tag = facetTag(f, f.normalise(v));
          const held = this.texts.get(tag);
          if (held === undefined) this.texts.set(tag, tag);
          tags.push(held ?? tag);
        }
      }
    }
    for (const t of tags) this.postings.add(t, slot);
    // A copy of its own length: a list grown by `push` keeps room for 16 more, 128 bytes per item.
    this.tags[slot] = tags.length ? tags.slice() : EMPTY;
    if (this.min) {
      this.grow(slot + 1);
      const n = data ? this.min.of(data) : undefined;
      this.numbers[slot] = typeof n === 'number' ? n : Number.NaN;
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
