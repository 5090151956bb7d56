/**
 * The stream hub: connects stored items to subscribers, and paid time to payments.
 *
 * Each wire index tells the hub of every item it stores (`WireIndex.onStored`). The hub finds
 * the distinct subscriptions it matches (subscriptions.ts) and publishes one message per
 * match under the subscription's key; the transport (uWS topics) fans it out to every
 * connection holding it. The item's JSON is the envelope's, built once per item.
 *
 * Paid time is kept per authorization, not per connection: presenting the same payment again
 * (a reconnect after a dropped connection, or the same renewal sent twice) gives the same
 * `paid_until`, never a second block.
 */
import type { StoredItem } from '../search/item.js';
import type { WireIndex } from '../search/wire-index.js';
import { articleJson } from '../http/envelope.js';
import { STREAM_TIMING } from './protocol.js';
import { SubscriptionIndex, type Subscription } from './subscriptions.js';

/** Sends one text message to every connection subscribed to `topic`. */
export type Publish = (topic: string, message: string) => void;

interface Grant {
  /** End of the paid time, on the steady clock. */
  until: number;
  /** Wall-clock ms after which the payment core no longer recognises the authorization. */
  validUntil: number;
}

/** Grants are kept past the authorization's validity plus the payment core's grace period. */
const GRANT_KEPT_AFTER_VALIDITY_MS = 120_000;

export class StreamHub {
  readonly subscriptions = new SubscriptionIndex();
  private readonly grants = new Map<string, Grant>();
  /** Items pushed (one per matching distinct subscription), for /metrics. */
  pushed = 0;

  constructor(
    wires: ReadonlyMap<string, WireIndex>,
    private readonly publish: Publish,
    private readonly blockMs = STREAM_TIMING.blockMs,
  ) {
    for (const [id, index] of wires) index.onStored = (item, terms, update, slot) => this.stored(id, index, item, terms, update, slot);
  }

  private stored(wire: string, index: WireIndex, item: StoredItem, terms: ReadonlySet<string>, update: boolean, slot: number): void {
    let body: string | null = null;
    // Field filters read the wire's facet index, which holds the item's values since its insert.
    const facets = (sub: Subscription) => index.facetPasses(slot, sub);
    this.subscriptions.match(wire, item, terms, facets, (sub: Subscription) => {
      // Built on the first match only: most items match no subscription.
      body ??= `,"update":${update},"item":${articleJson(item, Date.now(), true, 1)}}`;
      this.publish(sub.key, `{"type":"item","sub":${JSON.stringify(sub.key)}${body}`);
      this.pushed++;
    });
  }

  /**
   * The paid time after an accepted authorization (`authId`, valid until `validBeforeSec`)
   * is applied to a connection paid until `currentUntil`: a new block starts where the paid
   * time ends (or now), and an authorization already applied gives its own end again.
   */
  grant(authId: string, validBeforeSec: number, currentUntil: number, now: number, bought?: number): number {
    const known = this.grants.get(authId);
    if (known) return Math.max(currentUntil, known.until);
    // `bought`: the block's end as the payment's answer recorded it (the same on every replica).
    const until = bought ?? Math.max(now, currentUntil) + this.blockMs;
    this.grants.set(authId, { until, validUntil: validBeforeSec * 1000 + GRANT_KEPT_AFTER_VALIDITY_MS });
    return Math.max(currentUntil, until);
  }

  /**
   * Forgets grants whose paid time is over (steady clock, `now`) and whose authorization can
   * no longer be presented (wall clock, `wallNow`): until both, a repeat gets its own end again.
   */
  sweep(now: number, wallNow = Date.now()): void {
    for (const [id, g] of this.grants) if (g.until < now && g.validUntil < wallNow) this.grants.delete(id);
  }

  /** Authorizations applied to connections and still remembered (for /metrics). */
  get grantCount(): number {
    return this.grants.size;
  }
}
