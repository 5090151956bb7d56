/**
 * Posting lists of a wire's rare terms: term → the slots holding it, oldest insertion first.
 *
 * A term lives here only while it is rare (fewer than the wire's frequent threshold of items):
 * once frequent it moves to bitsets (`TermBitsets`) and its list is dropped, so every list stays
 * short and removing a slot from one is a short scan and splice.
 *
 * This is all the text index a wire needs, because queries intersect in typed arrays (see
 * `WireIndex`). It replaced a FlexSearch index that held the same lists: appending a posting
 * here costs a Map lookup and a push, where FlexSearch's `add` cost about 0.8 µs per term
 * (most of a warm restart), and a FlexSearch index with `fastupdate` (needed for removals)
 * cannot be rebuilt from lists built elsewhere, as a warm restart's worker builds them.
 */
const EMPTY: readonly number[] = Object.freeze([]);
/** Lists up to this long are kept at their exact length. */
const SHORT = 8;

export class Postings {
  private readonly lists = new Map<string, number[]>();

  /** The slots holding `term`, oldest insertion first. A view: callers never change it. */
  get(term: string): readonly number[] {
    return this.lists.get(term) ?? EMPTY;
  }

  add(term: string, slot: number): void {
    const list = this.lists.get(term);
    if (!list) this.lists.set(term, [slot]);
    // Most lists stay short. `push` reserves room for 16 more slots (about 130 bytes a list, on
    // the bulk of a wire's lists); `concat` makes a list of exactly its length.
    else if (list.length < SHORT) this.lists.set(term, list.concat(slot));
    else list.push(slot);
  }

  remove(term: string, slot: number): void {
    const list = this.lists.get(term);
    if (!list) return;
    // Eviction removes the oldest items, which are at the front of their lists; a new
    // version of an item is usually among the newest, at the back.
    const i = list[0] === slot ? 0 : list.lastIndexOf(slot);
    if (i < 0) return;
    if (list.length === 1) this.lists.delete(term);
    else list.splice(i, 1);
  }

  drop(term: string): void {
    this.lists.delete(term);
  }

  /** Sets a whole list, slots ascending (a warm restart's term table). */
  set(term: string, slots: number[]): void {
    this.lists.set(term, slots);
  }
}
