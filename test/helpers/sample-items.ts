/**
 * Items for every filter value of every wire, dated relative to `now` so they fall inside
 * every route's default window. The route tests rely on the exact shape below.
 */
import { filtersOf, WIRES, type WireDef } from '../../src/catalog/index.js';
import type { Item } from '../../src/search/item.js';

export const PER_FILTER = 5;

export function seedItems(wire: WireDef, now: number): Item[] {
  const items: Item[] = [];
  for (const filter of wire.filter.values) {
    for (let i = 0; i < PER_FILTER; i++) {
      const item: Item = {
        id: `${wire.id}-${filter}-${i}`,
        title: `${wire.title} ${filter} item ${i} rate cut outlook`,
        url: `https://example.com/sample/${wire.id}/${filter}/${i}`,
        source: wire.sources.find((s) => filtersOf(s).includes(filter))!.name,
        filter,
        // Newest item is 2 minutes old, the others one hour apart.
        published: now - 2 * 60_000 - i * 3_600_000,
        summary: `Summary of ${filter} item ${i}: Zürich “quoted” <text> & more.`,
      };
      if (wire.id === 'contracts') item.state = i % 2 === 0 ? 'CA' : 'TX';
      items.push(item);
    }
  }
  return items;
}

export function seedAll(now: number): Map<string, Item[]> {
  return new Map(WIRES.map((w) => [w.id, seedItems(w, now)]));
}
