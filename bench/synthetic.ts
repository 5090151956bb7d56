/**
 * Synthetic wire items for the search tests and benchmarks: titles and summaries drawn from a
 * Zipf-distributed vocabulary, so a few words are very frequent (as in real headlines) and
 * most are rare. Deterministic for a given seed.
 */
import type { Item } from '../src/search/item.js';

export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 're', 'tu', 'sa', 'ne', 'po', 'di', 'va', 'go', 'ri', 'ze', 'bu', 'fe', 'ha'];

export function vocabulary(size: number, random: () => number): string[] {
  const words = new Set<string>(['the', 'market', 'rate', 'cut', 'bank', 'stocks', 'oil', 'ai', 'fed', 'crypto']);
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Picks word ranks with probability ∝ 1/rank (Zipf, s = 1). */
export function zipfPicker(words: readonly string[], random: () => number): () => string {
  const cdf: number[] = [];
  let total = 0;
  for (let r = 1; r <= words.length; r++) cdf.push((total += 1 / r));
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo]!;
  };
}

export const FILTERS = ['markets', 'crypto', 'tech', 'world', 'business', 'energy'];

export function syntheticItems(count: number, now: number, seed = 1, spanMs = 72 * 3_600_000, filters: readonly string[] = FILTERS): Item[] {
  const random = rng(seed);
  const pick = zipfPicker(vocabulary(3000, random), random);
  const words = (min: number, max: number) => Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, pick).join(' ');
  return Array.from({ length: count }, (_, i) => ({
    id: `item-${seed}-${i}`,
    title: words(6, 14),
    url: `https://example.com/${seed}/${i}`,
    source: 'Synthetic',
    filter: filters[Math.floor(random() * filters.length)]!,
    published: now - Math.floor(random() * spanMs),
    summary: words(20, 40),
  }));
}
