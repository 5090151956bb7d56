/**
 * The retry policy (what is worth another attempt, how long to wait, how to
 * read a server's Retry-After) is a handful of small decisions that the scheduler and tests
 * also need to reason about, so they live apart from the request machinery.
 */

/** Longest Retry-After believed: a garbage date must not silence a source for years. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** Longest backoff step between two attempts of one fetch (the deadline usually binds first). */
export const MAX_BACKOFF_STEP_MS = 30_000;

/**
 * Statuses worth another attempt within the same fetch: 429 (rate limited) and every 5xx.
 * Other 4xx (403 blocked, 404 gone, 410) do not change by asking again a second later.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * Retry-After as delta-seconds or an HTTP date (RFC 9110 §10.2.3), in ms from `now`;
 * undefined when absent or unreadable, 0 for a date in the past, capped at a day.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.round(ms)));
}

/**
 * "Full jitter" exponential backoff: a uniform wait in [0, base·2^(n-1)], so many sources
 * failing together (one host down) do not retry in lockstep. `failedAttempts` counts from 1.
 */
export function backoffMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const step = Math.min(MAX_BACKOFF_STEP_MS, baseMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.floor(random() * step);
}
