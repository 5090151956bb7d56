/**
 * A host's request budget: at most `perSecond` requests started in any window of one second,
 * granted in the order they were asked for. A sliding window, not a token bucket: a bucket
 * refilled at N/s lets 2N through across a window that straddles a full bucket, and SEC's
 * limit is counted per second.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class RequestBudget {
  /** Start times of the last `perSecond` requests, oldest first. */
  private readonly starts: number[] = [];
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly key: string,
    readonly perSecond: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** Resolves when one more request may start; it counts as started then. */
  take(): Promise<void> {
    const turn = this.queue.then(() => this.wait());
    this.queue = turn;
    return turn;
  }

  /** Requests waiting for their turn are not counted: this is what has started. */
  private async wait(): Promise<void> {
    for (;;) {
      const now = this.clock();
      if (this.starts.length < this.perSecond || now - this.starts[0]! >= 1000) {
        if (this.starts.length >= this.perSecond) this.starts.shift();
        this.starts.push(now);
        return;
      }
      await sleep(Math.ceil(1000 - (now - this.starts[0]!)));
    }
  }
}
