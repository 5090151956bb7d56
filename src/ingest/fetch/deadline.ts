/**
 * One fetch (every attempt, redirect hop and backoff sleep) must stop at its
 * overall deadline or as soon as the caller aborts, and afterwards must say which of the two
 * stopped it (`timeout` vs `aborted`). undici's own timeouts are per phase (connect, headers,
 * gaps in the body); a server trickling one byte a second defeats them all, so this is the
 * bound that always holds.
 *
 * Built on one AbortController, a timer and one listener on the caller's signal, all released
 * by `dispose()`: a long-lived caller signal (a shutdown signal shared by every poll) must not
 * collect a listener per fetch.
 */

export type StopReason = 'timeout' | 'aborted';

/** The abort reason this scope uses, so undici's rejection carries a recognisable value. */
export class Stopped extends Error {
  override readonly name = 'Stopped';
  constructor(readonly reason: StopReason) {
    super(reason === 'timeout' ? 'deadline reached' : 'aborted by the caller');
  }
}

export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();
  private stopReason: StopReason | undefined;
  private readonly onCallerAbort = () => this.stop('aborted');

  constructor(
    readonly totalMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.timer = setTimeout(() => this.stop('timeout'), totalMs);
    if (caller?.aborted) this.stop('aborted');
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** Aborts every request and sleep of this fetch when the deadline passes or the caller aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the fetch was stopped, or undefined while it may go on. */
  get stopped(): StopReason | undefined {
    return this.stopReason;
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  remainingMs(): number {
    return Math.max(0, this.totalMs - this.elapsedMs());
  }

  /** Stops the fetch; the first reason wins. `close()` of the fetcher uses 'aborted'. */
  stop(reason: StopReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.controller.abort(new Stopped(reason));
  }

  /** Resolves true after `ms`, or false as soon as the fetch is stopped. */
  sleep(ms: number): Promise<boolean> {
    const signal = this.controller.signal;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}
