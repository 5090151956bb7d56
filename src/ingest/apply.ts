/**
 * Swaps finished items into a wire on the serving thread, a slice at a time: each slice runs
 * for at most APPLY_SLICE_MS, then yields to the event loop so waiting requests are answered
 * before the next slice. Each item is applied whole (WireIndex.add replaces by id), so a
 * reader sees an item either before or after its update, never half of it.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Item } from '../search/item.js';
import type { WireIndex } from '../search/wire-index.js';
import type { ParsedItem } from './parse/index.js';

/** Longest the serving thread spends applying items before it answers requests again. */
export const APPLY_SLICE_MS = 0.5;

const decoder = new TextDecoder();

/** What a batch brought: items the wire did not hold and the newest publication time among them; items older than the wire keeps, and the newest time of all. */
export interface Applied {
  added: number;
  newest: number | null;
  tooOld: number;
  newestOfAll: number | null;
  /** The lines (views into the batch) of the items the wire stored: new ones and changed ones. */
  changed: Uint8Array[];
}

/** `lines`: the items as UTF-8 JSON lines, as the worker encodes them (`encodeItems`). */
export async function applyItems(index: WireIndex, lines: Uint8Array, now: number): Promise<Applied> {
  const applied: Applied = { added: 0, newest: null, tooOld: 0, newestOfAll: null, changed: [] };
  const oldest = now - index.maxAgeMs;
  let sliceStart = performance.now();
  const one: Item[] = [];
  for (let start = 0; start < lines.length; ) {
    if (performance.now() - sliceStart > APPLY_SLICE_MS) {
      await yieldToLoop();
      sliceStart = performance.now();
    }
    let end = lines.indexOf(10, start);
    if (end === -1) end = lines.length;
    const line = lines.subarray(start, end);
    const parsed = JSON.parse(decoder.decode(line)) as ParsedItem;
    start = end + 1;
    const { publishedIsFirstSeen, ...item } = parsed;
    // A date-only or undated item is stamped with the time we first saw it; later polls
    // must not move it forward, or it would look fresh forever.
    const known = index.get(item.filter, item.id);
    if (publishedIsFirstSeen && known) item.published = known.published;
    if (applied.newestOfAll === null || item.published > applied.newestOfAll) applied.newestOfAll = item.published;
    if (item.published < oldest) {
      applied.tooOld++;
      continue; // the wire would not keep it
    }
    if (!known) {
      applied.added++;
      if (applied.newest === null || item.published > applied.newest) applied.newest = item.published;
    }
    one[0] = item;
    const version = index.version;
    index.add(one, now);
    if (index.version !== version) applied.changed.push(line);
  }
  index.evict(now);
  return applied;
}
