/**
 * x402 v2 payment offers (DESIGN decisions 2 and 3), precomputed once per paid route at start
 * so a 402 costs no JSON or base64 work on the request path.
 */
import type { Route } from '../catalog/index.js';
import { discoveryExtension } from './discovery.js';

/** USDC on Base mainnet and its EIP-712 domain. */
export const NETWORK = 'eip155:8453';
export const USDC_BASE = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const USDC_DOMAIN = { name: 'USD Coin', version: '2' } as const;

export interface PaymentRequirements {
  scheme: 'exact';
  network: typeof NETWORK;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

export interface PaymentRequired {
  x402Version: 2;
  error?: string;
  resource: { url: string; description: string; mimeType: 'application/json' };
  accepts: PaymentRequirements[];
  extensions?: Record<string, unknown>;
}

/**
 * The x402 `payment-identifier` extension, declared optional: a client that sends an id may
 * resend the same payment after a lost answer and get it again, charged once (payments.ts).
 */
export const PAYMENT_IDENTIFIER_EXTENSION = {
  info: { required: false },
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { required: { type: 'boolean' }, id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' } },
    required: ['required'],
  },
} as const;

/** x402 v1's PaymentRequirements: the same offer, named as v1 clients read it. */
export interface PaymentRequirementsV1 {
  scheme: 'exact';
  network: 'base';
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: 'application/json';
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: { name: string; version: string };
}

/** A paid route's offer in every form the server sends it. */
export interface Offer {
  route: Route;
  /** USD of one purchase: a call, or a stream's block. */
  price: string;
  requirements: PaymentRequirements;
  paymentRequired: PaymentRequired;
  /** v1 clients read these from the 402 body (`accepts`). */
  v1Accepts: PaymentRequirementsV1[];
  /** Value of the PAYMENT-REQUIRED header: base64 of the PaymentRequired JSON. */
  header: string;
  /** The 402 JSON body for a call without payment; encoded once. */
  body: Buffer;
}

/** What an offer sells when it is not one call of its route (a stream's block of minutes). */
export interface OfferTerms {
  path: string;
  amount: string;
  price: string;
  description: string;
  /** The 402's human-readable message. */
  message: string;
}

export function buildOffer(route: Route, payTo: string, publicUrl: string, maxTimeoutSeconds: number, terms?: OfferTerms): Offer {
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: NETWORK,
    amount: terms?.amount ?? route.amount!,
    asset: USDC_BASE,
    payTo,
    maxTimeoutSeconds,
    extra: { ...USDC_DOMAIN },
  };
  const resource = { url: publicUrl + (terms?.path ?? route.path), description: terms?.description ?? route.def.summary, mimeType: 'application/json' } as const;
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    error: 'PAYMENT-SIGNATURE header is required',
    resource,
    accepts: [requirements],
    // Discovery describes a GET resource with query parameters: a stream is not one.
    extensions: { 'payment-identifier': PAYMENT_IDENTIFIER_EXTENSION, ...(terms ? {} : discoveryExtension(route)) },
  };
  const v1Accepts: PaymentRequirementsV1[] = [
    {
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: requirements.amount,
      resource: resource.url,
      description: resource.description,
      mimeType: resource.mimeType,
      payTo,
      maxTimeoutSeconds,
      asset: USDC_BASE,
      extra: { ...USDC_DOMAIN },
    },
  ];
  const price = terms?.price ?? route.def.price!;
  const offer: Offer = { route, price, requirements, paymentRequired, v1Accepts, header: Buffer.from(JSON.stringify(paymentRequired)).toString('base64'), body: Buffer.alloc(0) };
  offer.body = Buffer.from(
    paymentErrorBody(
      offer,
      'payment_required',
      terms?.message ?? `This route costs ${price} USD per call, paid with x402 (v2, or v1 in X-PAYMENT; USDC on Base). The free preview ${route.previewPath} returns the top 3.`,
    ),
  );
  return offer;
}

/**
 * A 402 body. It is read by two kinds of client at once:
 * - x402 v1 clients read `x402Version` and `accepts` (v1 requirements) from it;
 * - people and this API's own clients read `error`: the reason (`code`, `message`) and the
 *   offer in human terms, with the free preview to fall back to.
 * `error` stays this API's error object rather than v1's plain string: every error of this
 * service has that shape, and the v1 clients read only `x402Version` and `accepts`.
 * v2 clients read the PAYMENT-REQUIRED header instead.
 */
export function paymentErrorBody(offer: Offer, code: string, message: string): string {
  return JSON.stringify({
    x402Version: 1,
    accepts: offer.v1Accepts,
    error: {
      code,
      message,
      price: offer.price,
      currency: 'USD',
      asset: 'USDC',
      network: NETWORK,
      payTo: offer.requirements.payTo,
      preview: offer.route.previewPath,
      prices: '/.well-known/x402',
    },
  });
}

/** The PAYMENT-REQUIRED header of a refusal: the offer, with the actual reason in `error`. */
export function refusalHeader(offer: Offer, message: string): string {
  return Buffer.from(JSON.stringify({ ...offer.paymentRequired, error: message })).toString('base64');
}

/** Value of a failed PAYMENT-RESPONSE (v2) or X-PAYMENT-RESPONSE (v1) header: a SettlementResponse. */
export function failedSettlementHeader(reason: string, version: 1 | 2 = 2): string {
  return Buffer.from(JSON.stringify({ success: false, errorReason: reason, transaction: '', network: version === 1 ? 'base' : NETWORK })).toString('base64');
}
