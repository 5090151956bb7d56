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
import { slotsOf } from './bitsets.js';
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

/**
 * A wire's term table as its index holds it (`WireIndex.termTable`): by slot rather than by
 * item, with each slot's position among the items saved with it (-1: a free slot). A snapshot
 * saves it as it is, a copy the serving thread makes quickly; the warm start's worker turns
 * it into the table of the items it keeps (`keptTable`).
 */
export interface SlotTermTable extends TermTable {
  /** Slot → position among the saved items (-1: none); `words` covers every slot. */
  position: Int32Array;
}

/**
 * The table of the saved items a warm restart keeps, `kept` (their saved positions, in the
 * order they are loaded: kept item k is slot k): what `buildTermTable` gives for them, without
 * tokenising. Items past their retention since the save are dropped, and the rest are loaded
 * oldest published first, whatever order the wire stored them in.
 */
export function keptTable(saved: SlotTermTable, kept: Int32Array): TermTable {
  const count = kept.length;
  const words = Math.max(1, Math.ceil(count / 32));
  const { frequentMin } = saved;
  // Slot → its kept item (-1: a free slot, or an item not kept).
  const slotOf = new Int32Array(saved.count).fill(-1);
  kept.forEach((p, k) => (slotOf[p] = k));
  const position = saved.position.map((p) => (p < 0 ? -1 : slotOf[p]!));
  const terms: string[] = [];
  const freq = new Int32Array(saved.terms.length);
  const bits = new Uint32Array((saved.bits.length / Math.max(1, saved.words)) * words);
  let slots = new Int32Array(saved.slots.length + 1024);
  const offsets = new Int32Array(2 * saved.terms.length + 1);
  let nBits = 0;
  let nSlots = 0;
  let nLists = 1;
  /** Appends the kept items of the slots `list[start … end - 1]` (or the kept items, `bySlot` false), ascending; returns how many. */
  const pushList = (list: ArrayLike<number>, start: number, end: number, bySlot = true): number => {
    if (nSlots + end - start > slots.length) {
      const grown = new Int32Array((nSlots + end - start) * 2);
      grown.set(slots.subarray(0, nSlots));
      slots = grown;
    }
    const first = nSlots;
    let sorted = true;
    for (let i = start; i < end; i++) {
      const p = bySlot ? position[list[i]!]! : list[i]!;
      if (p < 0) continue;
      if (nSlots > first && p < slots[nSlots - 1]!) sorted = false;
      slots[nSlots++] = p;
    }
    if (!sorted) slots.subarray(first, nSlots).sort();
    offsets[nLists++] = nSlots;
    return nSlots - first;
  };
  /** Sets in `out` the kept items of the slots set in `src`. */
  const scatter = (src: Uint32Array, out: Uint32Array) => {
    for (let w = 0; w < src.length; w++) {
      for (let word = src[w]!; word !== 0; word &= word - 1) {
        const p = position[w * 32 + 31 - Math.clz32(word & -word)]!;
        if (p >= 0) out[p >>> 5]! |= 1 << (p & 31);
      }
    }
  };
  let frequent = 0;
  let rare = 0;
  for (let id = 0; id < saved.terms.length; id++) {
    let n: number;
    if (saved.freq[id]! >= frequentMin) {
      const at = frequent++ * 2 * saved.words;
      const any = bits.subarray(nBits, nBits + words);
      const title = bits.subarray(nBits + words, nBits + 2 * words);
      scatter(saved.bits.subarray(at, at + saved.words), any);
      scatter(saved.bits.subarray(at + saved.words, at + 2 * saved.words), title);
      n = popcount(any);
      if (n >= frequentMin) nBits += 2 * words;
      else {
        // Below the threshold now: its lists, as a table built from the kept items has them.
        const anyList = slotsOf(any);
        const titleList = slotsOf(title);
        any.fill(0);
        title.fill(0);
        if (n === 0) continue;
        pushList(anyList, 0, anyList.length, false);
        pushList(titleList, 0, titleList.length, false);
      }
    } else {
      const k = rare++ * 2;
      const at = nLists;
      n = pushList(saved.slots, saved.offsets[k]!, saved.offsets[k + 1]!);
      if (n === 0) {
        nLists = at;
        nSlots = offsets[at - 1]!;
        continue;
      }
      pushList(saved.slots, saved.offsets[k + 1]!, saved.offsets[k + 2]!);
    }
    freq[terms.length] = n;
    terms.push(saved.terms[id]!);
  }
  // Copies of their own length: the arrays are transferred to the serving thread and kept there.
  return { count, frequentMin, terms, freq: freq.slice(0, terms.length), words, bits: bits.slice(0, nBits), offsets: offsets.slice(0, nLists), slots: slots.slice(0, nSlots) };
}

function popcount(bits: Uint32Array): number {
  let n = 0;
  for (let w of bits) {
    w -= (w >>> 1) & 0x55555555;
    w = (w & 0x33333333) + ((w >>> 2) & 0x33333333);
    n += Math.imul((w + (w >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return n;
}
