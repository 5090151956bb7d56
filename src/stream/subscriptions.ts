/**
 * Push subscriptions, indexed for the moment an item is stored.
 *
 * A subscription is a wire, optionally one filter value, and optionally search terms (or a
 * state code on contract awards). Subscribers with the same parameters share one entry: its
 * `key` (`news?category=markets&q=fed`) is both what clients see as `sub` and the uWS topic
 * its items are published under, so one item costs one match per distinct subscription and
 * the fan-out to its subscribers runs natively.
 *
 * Matching an item looks only at the entries of its wire and its filter value (and those
 * without a filter), and checks each entry's terms against the item's term set: no search
 * is re-run.
 */
import type { StoredItem } from '../search/item.js';

export interface SubscriptionParams {
  filter?: string;
  /** Distinct search terms, every one must be in the item (as in a search). */
  terms?: readonly string[];
  /** Two-letter state code (contract awards). */
  state?: string;
  /** Filters on structured fields, as a search takes them (catalog/facets.ts). */
  tags?: readonly (readonly string[])[];
  min?: number;
}

export interface Subscription extends SubscriptionParams {
  wire: string;
  key: string;
  /** Connections subscribed; the entry goes when it reaches 0. */
  holders: number;
}

interface WireSubscriptions {
  /** Entries without a filter: every item of the wire is a candidate. */
  any: Map<string, Subscription>;
  byFilter: Map<string, Map<string, Subscription>>;
}

export class SubscriptionIndex {
  private readonly wires = new Map<string, WireSubscriptions>();
  private count = 0;

  /** Distinct subscriptions held. */
  get size(): number {
    return this.count;
  }

  /** Takes one hold on the entry for these parameters, creating it if needed. */
  hold(wire: string, key: string, params: SubscriptionParams): Subscription {
    let w = this.wires.get(wire);
    if (!w) this.wires.set(wire, (w = { any: new Map(), byFilter: new Map() }));
    let bucket = w.any;
    if (params.filter !== undefined) {
      bucket = w.byFilter.get(params.filter) ?? new Map();
      w.byFilter.set(params.filter, bucket);
    }
    let sub = bucket.get(key);
    if (!sub) {
      sub = { wire, key, holders: 0, ...params };
      bucket.set(key, sub);
      this.count++;
    }
    sub.holders++;
    return sub;
  }

  /** Gives back one hold; the entry is dropped with its last holder. */
  release(sub: Subscription): void {
    if (--sub.holders > 0) return;
    const w = this.wires.get(sub.wire);
    const bucket = sub.filter === undefined ? w?.any : w?.byFilter.get(sub.filter);
    if (bucket?.delete(sub.key)) this.count--;
    if (sub.filter !== undefined && bucket?.size === 0) w!.byFilter.delete(sub.filter);
  }

  /** Calls `push` for each subscription the item matches; `facets` tells whether it passes a subscription's field filters. */
  match(wire: string, item: StoredItem, terms: ReadonlySet<string>, facets: (sub: Subscription) => boolean, push: (sub: Subscription) => void): void {
    const w = this.wires.get(wire);
    if (!w) return;
    for (const sub of w.any.values()) if (matches(sub, item, terms, facets)) push(sub);
    const filtered = w.byFilter.get(item.filter);
    if (filtered) for (const sub of filtered.values()) if (matches(sub, item, terms, facets)) push(sub);
  }
}

function matches(sub: Subscription, item: StoredItem, terms: ReadonlySet<string>, facets: (sub: Subscription) => boolean): boolean {
  if (sub.state !== undefined && item.state !== sub.state) return false;
  if (sub.terms) for (const t of sub.terms) if (!terms.has(t)) return false;
  return (sub.tags === undefined && sub.min === undefined) || facets(sub);
}
