/**
 * Sheds optional memory before the heap runs out. Every second it reads V8's heap
 * statistics (a few microseconds); once the used heap passes MEMORY_SHED_AT percent of its
 * limit it drops what can be rebuilt: the preview answers (recomputed on the next request)
 * and the paid answers kept for retries (a retry recomputes its data, still charged once).
 * What a payment or an item depends on is never dropped. Each shed is logged and counted
 * (`wires_memory_sheds_total`).
 */
import { getHeapStatistics } from 'node:v8';
import { log } from './log.js';

export class MemoryGuard {
  sheds = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    /** Share of the heap limit (0–1) above which optional memory is dropped. */
    private readonly threshold: number,
    private readonly optional: readonly { name: string; drop: () => number }[],
  ) {
    this.timer = setInterval(() => this.check(), 1000);
    this.timer.unref();
  }

  /** Drops the optional memory when the heap is past the threshold; returns whether it did. */
  check(): boolean {
    const { used_heap_size: used, heap_size_limit: limit } = getHeapStatistics();
    if (used < this.threshold * limit) return false;
    const dropped = Object.fromEntries(this.optional.map((o) => [o.name, o.drop()]));
    this.sheds++;
    log.warn('heap near its limit: optional memory dropped', { used_mb: Math.round(used / 1048576), limit_mb: Math.round(limit / 1048576), ...dropped });
    return true;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
