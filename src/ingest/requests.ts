/**
 * Turns a catalogue source into the HTTP request that polls it. Most sources are a plain GET
 * of their URL; the few that need more (a POST body computed from the current date, a
 * required Accept header, a cache-buster) are listed here by source id, as data.
 */
import type { SourceDef } from '../catalog/index.js';
import type { FetchRequest } from './fetch/fetcher.js';
import { AWARD_SIZE_BOUNDS } from './parse/mappings.js';

/** Extra request headers some sources need (SOURCES.md). */
const HEADERS: Readonly<Record<string, Record<string, string>>> = {
  'nws-extreme': { Accept: 'application/geo+json' },
  'nws-severe': { Accept: 'application/geo+json' },
  'nws-immediate': { Accept: 'application/geo+json' },
  msrc: { Accept: 'application/rss+xml' },
};

/** A USAspending source's filter as the API takes it: a kind of recipient, or a size bucket's bounds. */
function awardFilter(filter: string): object {
  if (filter === 'small-business') return { recipient_type_names: ['small_business'] };
  const [low, high] = AWARD_SIZE_BOUNDS[filter] ?? [-Infinity, Infinity];
  return { award_amounts: [{ ...(Number.isFinite(low) ? { lower_bound: low } : {}), ...(Number.isFinite(high) ? { upper_bound: high } : {}) }] };
}

/** Days of award actions asked for: awards land days after signing (DoD about 90). */
const AWARD_WINDOW_DAYS = 30;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function usaspendingBody(filter: string, now: number): string {
  return JSON.stringify({
    filters: {
      award_type_codes: ['A', 'B', 'C', 'D'],
      time_period: [{ start_date: day(now - AWARD_WINDOW_DAYS * 86_400_000), end_date: day(now), date_type: 'action_date' }],
      ...awardFilter(filter),
    },
    fields: [
      'Award ID',
      'Recipient Name',
      'Award Amount',
      'Description',
      'Start Date',
      'Last Modified Date',
      'Base Obligation Date',
      'Place of Performance State Code',
      'Awarding Agency',
      'generated_internal_id',
    ],
    limit: 100,
    page: 1,
    sort: 'Last Modified Date',
    order: 'desc',
  });
}

/** `url` is the source's URL after overrides (WIRES_SOURCES). */
export function buildRequest(source: SourceDef, url: string, now: number): FetchRequest {
  if (source.id.startsWith('usaspending-')) {
    return { url, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: usaspendingBody(source.filter!, now) };
  }
  const req: FetchRequest = { url };
  const headers = HEADERS[source.id];
  if (headers) req.headers = headers;
  // The Federal Register serves from a shared cache even with no-store (an Age over an hour
  // was seen): a cache-buster keeps its documents fresh.
  if (source.id.startsWith('fedreg-')) req.url = `${url}${url.includes('?') ? '&' : '?'}_=${Math.floor(now / 1000)}`;
  return req;
}
