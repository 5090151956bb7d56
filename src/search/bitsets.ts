/**
 * Membership bitsets of the frequent terms of a wire, maintained as items come and go.
 *
 * A term in a large share of the items (the, market, rate…) has a long posting list; asking
 * "does slot s have this term?" through a bit is one memory read instead of a walk over
 * thousands of postings. Only terms that reached a document-frequency threshold get a bitset
 * (one bit per slot: 2.5 KiB for 20,000 items).
 */
export class TermBitsets {
  private readonly bits = new Map<string, Uint32Array>();
  private words = 32;

  has(term: string): boolean {
    return this.bits.has(term);
  }

  get(term: string): Uint32Array | undefined {
    return this.bits.get(term);
  }

  /** Creates the bitset of a term from its current postings. */
  create(term: string, slots: Iterable<number>): void {
    const b = new Uint32Array(this.words);
    for (const s of slots) b[s >>> 5]! |= 1 << (s & 31);
    this.bits.set(term, b);
  }

  /** Sets the bitset of a term from a copy of `bits` (a warm restart's term table). */
  adopt(term: string, bits: Uint32Array): void {
    const b = new Uint32Array(this.words);
    b.set(bits.length > this.words ? bits.subarray(0, this.words) : bits);
    this.bits.set(term, b);
  }

  drop(term: string): void {
    this.bits.delete(term);
  }

  set(term: string, slot: number): void {
    const b = this.bits.get(term);
    if (b) b[slot >>> 5]! |= 1 << (slot & 31);
  }

  clear(term: string, slot: number): void {
    const b = this.bits.get(term);
    if (b) b[slot >>> 5]! &= ~(1 << (slot & 31));
  }

  /** Makes room for slots below `capacity`. */
  grow(capacity: number): void {
    const words = Math.ceil(capacity / 32);
    if (words <= this.words) return;
    this.words = words;
    for (const [term, b] of this.bits) {
      const g = new Uint32Array(words);
      g.set(b);
      this.bits.set(term, g);
    }
  }
}

export function hasBit(bits: Uint32Array, slot: number): boolean {
  return (bits[slot >>> 5]! & (1 << (slot & 31))) !== 0;
}

/** The slots whose bit is set. */
export function slotsOf(bits: Uint32Array): number[] {
  const out: number[] = [];
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const low = word & -word;
      out.push(w * 32 + 31 - Math.clz32(low));
      word ^= low;
    }
  }
  return out;
}
