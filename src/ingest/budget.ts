/**
 * Request budgets per host, enforced where a request leaves: at most `perSecond` requests
 * started in any window of one second. A sliding window, not a token bucket: a bucket
 * refilled at N/s lets 2N through across a window that straddles a full bucket, and SEC's
 * limit is counted per second.
 *
 * The window is taken in the worker thread right before the request is sent, not when the
 * poll is scheduled: a task handed to a worker that is busy parsing starts late, and a budget
 * granted on the serving thread would then let it leave right behind the next one. Every
 * worker shares one window per host through a SharedArrayBuffer (the start times of the last
 * `perSecond` requests, claimed with compare-and-swap), so a budget holds however many
 * threads poll. The hosts and their limits come from the catalogue (`budgetOf`), so every
 * thread derives the same layout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { budgetOf, SOURCES } from '../catalog/index.js';

/** Microseconds on a clock every thread of the process reads alike (absolute, monotonic per thread). */
const nowUs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
const WINDOW_US = 1_000_000n;

interface Slots {
  offset: number;
  perSecond: number;
}

export class HostBudgets {
  readonly buffer: SharedArrayBuffer;
  private readonly starts: BigInt64Array;
  private readonly hosts = new Map<string, Slots>();

  /** A new set of windows, or (in a worker) the one the serving thread created. */
  constructor(buffer?: SharedArrayBuffer) {
    let offset = 0;
    for (const s of SOURCES) {
      const { key, budget } = budgetOf(s);
      if (this.hosts.has(key)) continue;
      this.hosts.set(key, { offset, perSecond: budget.perSecond });
      offset += budget.perSecond;
    }
    this.buffer = buffer ?? new SharedArrayBuffer(offset * BigInt64Array.BYTES_PER_ELEMENT);
    this.starts = new BigInt64Array(this.buffer);
  }

  /** Resolves when one more request to `host` (a budget key) may start; it counts as started then. */
  async take(host: string): Promise<void> {
    const slots = this.hosts.get(host);
    if (!slots) return;
    for (;;) {
      let oldestAt = slots.offset;
      let oldest = Atomics.load(this.starts, oldestAt);
      for (let i = slots.offset + 1; i < slots.offset + slots.perSecond; i++) {
        const t = Atomics.load(this.starts, i);
        if (t < oldest) [oldest, oldestAt] = [t, i];
      }
      const now = nowUs();
      const waitUs = oldest + WINDOW_US - now;
      if (waitUs <= 0n) {
        // Claimed unless another thread took this slot first; then look again.
        if (Atomics.compareExchange(this.starts, oldestAt, oldest, now) === oldest) return;
        continue;
      }
      await sleep(Math.ceil(Number(waitUs) / 1000));
    }
  }
}
