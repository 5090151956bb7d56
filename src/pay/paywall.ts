/**
 * The x402 paywall page a browser gets from a paid route called without payment, so a
 * person with a wallet can pay from the browser. API clients keep the JSON 402.
 */
import type { Offer } from './offer.js';

export interface PaywallPage {
  html: string;
}

export function buildPaywallPage(offer: Offer): PaywallPage {
  return { html: `<!doctype html><title>Payment required</title><p>${offer.route.def.price} USD</p>` };
}
