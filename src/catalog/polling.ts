/**
 * How often each source is polled and how many requests each host may get: data, with the
 * reason for every number. The scheduler (src/ingest/scheduler.ts) and docs/sources.md's polling
 * table are derived from it.
 *
 * A source's interval adapts between its tier's floor and ceiling: the floor when a poll
 * brings new items, else half the time since the source last brought something new (a quiet
 * spell predicts the next one: a feed that published 20 s ago is polled every 10 s, one quiet
 * for an hour at the ceiling); never sooner than the host's `Cache-Control: max-age` allows,
 * and never more often than its request budget.
 */
import type { SourceDef, Tier, WireDef } from './wires.js';

export interface TierPolling {
  /** Shortest interval, for a source that changes on every poll. */
  floorSec: number;
  /** Longest interval, for a source that has not changed for a while. */
  ceilingSec: number;
  why: string;
}

/**
 * The breaking tier's range is configurable (POLL_FLOOR_SEC, POLL_INTERVAL_SEC); these are
 * its defaults. The timely and sparse ceilings are the specification's (section 1).
 */
export const TIER_POLLING: Readonly<Record<Tier, TierPolling>> = {
  breaking: {
    floorSec: 10,
    ceilingSec: 60,
    why: 'a breaking source that publishes often stays under 10 s behind; with conditional GET an unchanged poll costs its host a 304',
  },
  timely: { floorSec: 60, ceilingSec: 300, why: 'these wires change a few times a day; the ceiling is the specification’s 5 minutes' },
  sparse: { floorSec: 300, ceilingSec: 900, why: 'daily or batch publishers; the ceiling is the specification’s 15 minutes' },
};

/** After a poll that found nothing new, the interval is this share of the time since the last new item. */
export const QUIET_SHARE = 0.5;

export interface RequestBudget {
  /** Most requests started in any one-second window, paging included. */
  perSecond: number;
  /** Retries inside one fetch are off: each retry would be a request outside the budget, and the next poll comes soon anyway. */
  noRetries?: boolean;
  why: string;
}

/**
 * Request budgets, by the host's registrable domain. A source draws from the budget of its
 * catalogue URL's host, so the budget still holds when WIRES_SOURCES points it at a mirror or
 * a proxy. Every other host gets DEFAULT_BUDGET.
 */
export const HOST_BUDGETS: Readonly<Record<string, RequestBudget>> = {
  'sec.gov': {
    perSecond: 5,
    noRetries: true,
    why: 'SEC fair access: at most 10 requests/s per organisation, across all its machines; half of it leaves room for the operator’s other SEC traffic',
  },
};

export const DEFAULT_BUDGET: RequestBudget = {
  perSecond: 1,
  why: 'no other source documents a limit: at most one request a second to any one host (CNBC’s six feeds, the BBC’s four, …)',
};

/** The budget a source draws from: its name and limits. */
export function budgetOf(source: Pick<SourceDef, 'url'>): { key: string; budget: RequestBudget } {
  const host = new URL(source.url).hostname;
  for (const [domain, budget] of Object.entries(HOST_BUDGETS)) {
    if (host === domain || host.endsWith(`.${domain}`)) return { key: domain, budget };
  }
  return { key: host, budget: DEFAULT_BUDGET };
}

/** A source's interval range in seconds, given the breaking tier's configured range. */
export function intervalRange(source: SourceDef & { wire: { tier: Tier } }, breaking: { floorSec: number; ceilingSec: number }): { floorSec: number; ceilingSec: number } {
  if (source.interval !== undefined) return { floorSec: source.interval.sec, ceilingSec: source.interval.sec };
  const tier = source.wire.tier === 'breaking' ? breaking : TIER_POLLING[source.wire.tier];
  const polite = source.minIntervalSec ?? 0;
  const ceilingSec = Math.max(tier.ceilingSec, polite);
  return { floorSec: Math.min(ceilingSec, Math.max(tier.floorSec, polite)), ceilingSec };
}

/**
 * A wire's poll schedule: the shortest floor and the longest ceiling among its sources' ranges,
 * so one source on a fixed interval (EDGAR's 2 s) is shown as it is polled, not as its tier.
 */
export function wireSchedule(wire: WireDef, breaking: { floorSec: number; ceilingSec: number }): { floorSec: number; ceilingSec: number } {
  const ranges = wire.sources.map((s) => intervalRange({ ...s, wire }, breaking));
  return { floorSec: Math.min(...ranges.map((r) => r.floorSec)), ceilingSec: Math.max(...ranges.map((r) => r.ceilingSec)) };
}

/** "every 2 s", "every 10 s–1 min": a schedule as the page and the docs word it. */
export function scheduleText({ floorSec, ceilingSec }: { floorSec: number; ceilingSec: number }): string {
  const t = (sec: number) => (sec < 60 || sec % 60 !== 0 ? `${sec} s` : `${sec / 60} min`);
  return floorSec === ceilingSec ? `every ${t(floorSec)}` : `every ${t(floorSec)}–${t(ceilingSec)}`;
}
