/**
 * Background threads (polls, journal syncs) step aside for the serving thread: on Linux a
 * nice value is per thread, and `setPriority(0, …)` applies to the calling thread only, so
 * when cores are short the serving thread runs first and the background work waits instead
 * of requests (bench/ingest-latency and bench/pay-latency measure it). Elsewhere the call
 * would lower the whole process, so it is Linux only.
 */
import { setPriority } from 'node:os';

export const BACKGROUND_NICE = 19;

/** Lowers the calling thread's CPU priority; where that is not permitted it stays as it is. */
export function runInBackground(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, BACKGROUND_NICE);
  } catch {
    /* not permitted here: normal priority */
  }
}
