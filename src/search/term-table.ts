/**
 * The term structures of a whole wire, built in one pass over its items (a warm restart), as
 * flat arrays: a worker thread can build them while the serving thread parses the same
 * snapshot, and hand them over without copying (typed arrays are transferred).
 *
 * Item i of the input is slot i. Every distinct term gets its document frequency, and then:
 * - a frequent term (in `frequentMin` items or more) its two bitsets, any field and title only;
 * - a rare term its two posting lists, any field and title only, slots ascending.
 *
 * This is what `WireIndex.insert` builds one item at a time, built here without the per-item
 * sets and map updates: each token is looked up once in a term dictionary, and a stamp per term
 * keeps an item from counting a term twice.
 */
import type { Item } from './item.js';
import { tokenize } from './tokenize.js';

export interface TermTable {
  /** Items the table was built from: slots 0 … count-1. */
  count: number;
  /** The threshold it was built with (`frequentMinFor`). */
  frequentMin: number;
  /** Distinct terms, in the order first seen. */
  terms: string[];
  /** Per term, the items holding it. */
  freq: Int32Array;
  /** Length of one bitset in 32-bit words. */
  words: number;
  /** The frequent terms' bitsets, in `terms` order, each as any field then title only. */
  bits: Uint32Array;
  /**
   * The rare terms' posting lists, in `terms` order, each as any field then title only: list k
   * is `slots[offsets[k]] … slots[offsets[k + 1] - 1]`.
   */
  offsets: Int32Array;
  slots: Int32Array;
}

/** Document frequency from which a term of a wire of this capacity gets bitsets. */
export function frequentMinFor(maxItems: number): number {
  return Math.max(64, Math.floor(maxItems / 128));
}

export function buildTermTable(items: readonly Item[], frequentMin: number): TermTable {
  const ids = new Map<string, number>();
  const terms: string[] = [];
  const freq: number[] = [];
  const titleFreq: number[] = [];
  /** Per term: 1 + the last item that counted it. */
  const stamp: number[] = [];
  // Per item, its distinct terms as (term id × 2 + in title), items one after another.
  let occ = new Int32Array(1 << 16);
  let n = 0;
  const itemEnd = new Int32Array(items.length);
  const count = (text: string, item: number, inTitle: number) => {
    for (const t of tokenize(text)) {
      let id = ids.get(t);
      if (id === undefined) {
        ids.set(t, (id = terms.length));
        terms.push(t);
        freq.push(0);
        titleFreq.push(0);
        stamp.push(0);
      }
      if (stamp[id] === item + 1) continue;
      stamp[id] = item + 1;
      freq[id]!++;
      titleFreq[id]! += inTitle;
      if (n === occ.length) {
        const grown = new Int32Array(occ.length * 2);
        grown.set(occ);
        occ = grown;
      }
      occ[n++] = id * 2 + inTitle;
    }
  };
  for (let i = 0; i < items.length; i++) {
    count(items[i]!.title, i, 1); // title first: a term in both is marked as in the title
    count(items[i]!.summary, i, 0);
    itemEnd[i] = n;
  }

  // Where each term's bitsets or lists go.
  const words = Math.max(1, Math.ceil(items.length / 32));
  const at = new Int32Array(terms.length);
  let frequent = 0;
  const offsets: number[] = [0];
  for (let id = 0; id < terms.length; id++) {
    if (freq[id]! >= frequentMin) at[id] = frequent++;
    else {
      at[id] = offsets.length - 1;
      offsets.push(offsets[offsets.length - 1]! + freq[id]!);
      offsets.push(offsets[offsets.length - 1]! + titleFreq[id]!);
    }
  }
  const bits = new Uint32Array(frequent * 2 * words);
  const slots = new Int32Array(offsets[offsets.length - 1]!);
  const fill = Int32Array.from(offsets);
  for (let i = 0, o = 0; i < items.length; i++) {
    const word = i >>> 5;
    const bit = 1 << (i & 31);
    for (; o < itemEnd[i]!; o++) {
      const id = occ[o]! >> 1;
      const inTitle = occ[o]! & 1;
      const k = at[id]!;
      if (freq[id]! >= frequentMin) {
        bits[k * 2 * words + word]! |= bit;
        if (inTitle) bits[(k * 2 + 1) * words + word]! |= bit;
      } else {
        slots[fill[k]!++] = i;
        if (inTitle) slots[fill[k + 1]!++] = i;
      }
    }
  }
  return { count: items.length, frequentMin, terms, freq: Int32Array.from(freq), words, bits, offsets: Int32Array.from(offsets), slots };
}
