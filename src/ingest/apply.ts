/**
 * Swaps finished items into a wire on the serving thread, in chunks, yielding to the event
 * loop between them so a burst of ingestion never holds a request up for long. Each item is
 * applied whole (WireIndex.add replaces by id), so a reader sees an item either before or
 * after its update, never half of it.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Item } from '../search/item.js';
import type { WireIndex } from '../search/wire-index.js';
import type { ParsedItem } from './parse/index.js';

/** Items per synchronous step; small enough to keep one step well under a millisecond or so. */
export const APPLY_CHUNK = 256;

export async function applyItems(index: WireIndex, items: readonly ParsedItem[], now: number): Promise<void> {
  for (let i = 0; i < items.length; i += APPLY_CHUNK) {
    if (i > 0) await yieldToLoop();
    const chunk: Item[] = [];
    for (const parsed of items.slice(i, i + APPLY_CHUNK)) {
      const { publishedIsFirstSeen, ...item } = parsed;
      // A date-only or undated item is stamped with the time we first saw it; later polls
      // must not move it forward, or it would look fresh forever.
      if (publishedIsFirstSeen) {
        const known = index.get(item.id);
        if (known) item.published = known.published;
      }
      chunk.push(item);
    }
    index.add(chunk, now);
  }
  index.evict(now);
}
