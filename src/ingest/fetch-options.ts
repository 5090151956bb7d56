/**
 * The fetcher's limits, in one place. Chosen from the sources' observed behaviour
 * (SOURCES.md): GovInfo answers in 2–8 s and sometimes hangs, so 30 s is the default overall deadline;
 * the largest real document (the whole CISA KEV catalogue, a few MB) fits the body caps with
 * room to spare.
 */
import type { FetcherOptions } from './fetch/fetcher.js';

export function fetcherOptions(userAgent: string, totalTimeoutSec: number, allowPrivateDestinations = false): FetcherOptions {
  const total = totalTimeoutSec * 1000;
  return {
    userAgent,
    connectTimeoutMs: Math.min(5_000, total),
    headersTimeoutMs: Math.min(15_000, total),
    bodyTimeoutMs: Math.min(15_000, total),
    totalTimeoutMs: total,
    maxBodyBytes: 16 * 1024 * 1024,
    maxDecodedBytes: 32 * 1024 * 1024,
    maxRedirects: 5,
    retries: 2,
    retryBaseMs: 500,
    allowPrivateDestinations,
  };
}
