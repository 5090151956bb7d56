/**
 * `/.well-known/x402`: the price discovery document (spec 5.8). A client compares an offer it
 * received with this list before signing; every entry is the exact offer the route sends.
 */
import { PAID_ROUTES } from '../catalog/index.js';
import { NETWORK, USDC_BASE, type Offer } from '../pay/offer.js';
import { BLOCK_MINUTES } from '../stream/protocol.js';

/** `offers`: paid route path → offer; `streams`: wire id → its stream block's offer. */
export function buildPriceList(offers: ReadonlyMap<string, Offer>, payTo: string | null, streams: ReadonlyMap<string, Offer> = new Map()): object {
  return {
    x402Version: 2,
    network: NETWORK,
    asset: USDC_BASE,
    currency: 'USD',
    payTo,
    routes: PAID_ROUTES.map((r) => ({
      path: r.path,
      method: 'GET',
      wire: r.wire.id,
      price: r.def.price,
      amount: r.amount,
      preview: r.previewPath,
      accepts: offers.has(r.path) ? [offers.get(r.path)!.requirements] : [],
      // The same discovery extension (x402 Bazaar) the route's offer carries.
      extensions: offers.get(r.path)?.paymentRequired.extensions ?? {},
    })),
    // WebSocket push (/stream), sold in blocks of minutes: `amount` buys `block_minutes`.
    streams: [...streams].map(([wire, o]) => ({
      path: `/stream?wire=${wire}`,
      wire,
      price: o.price,
      amount: o.requirements.amount,
      block_minutes: BLOCK_MINUTES,
      accepts: [o.requirements],
    })),
  };
}
