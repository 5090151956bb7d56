/**
 * x402 v2 payment offers (DESIGN decisions 2 and 3), precomputed once per paid route at start
 * so a 402 costs no JSON or base64 work on the request path.
 */
import type { Route } from '../catalog/index.js';

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

/** A paid route's offer in every form the server sends it. */
export interface Offer {
  requirements: PaymentRequirements;
  paymentRequired: PaymentRequired;
  /** Value of the PAYMENT-REQUIRED header: base64 of the PaymentRequired JSON. */
  header: string;
  /** The 402 JSON body, in human terms, pointing at the free preview; encoded once. */
  body: Buffer;
}

export function buildOffer(route: Route, payTo: string, publicUrl: string, maxTimeoutSeconds: number): Offer {
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network: NETWORK,
    amount: route.amount!,
    asset: USDC_BASE,
    payTo,
    maxTimeoutSeconds,
    extra: { ...USDC_DOMAIN },
  };
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    error: 'PAYMENT-SIGNATURE header is required',
    resource: { url: publicUrl + route.path, description: route.def.summary, mimeType: 'application/json' },
    accepts: [requirements],
    extensions: { 'payment-identifier': PAYMENT_IDENTIFIER_EXTENSION },
  };
  const body = Buffer.from(
    paymentErrorBody(
      route,
      payTo,
      'payment_required',
      `This route costs ${route.def.price} USD per call, paid with x402 v2 (USDC on Base). The free preview ${route.previewPath} returns the top 3.`,
    ),
  );
  return {
    requirements,
    paymentRequired,
    header: Buffer.from(JSON.stringify(paymentRequired)).toString('base64'),
    body,
  };
}

/** A 402 body: the reason, and the offer in human terms with the free preview to fall back to. */
export function paymentErrorBody(route: Route, payTo: string, code: string, message: string): string {
  return JSON.stringify({
    error: {
      code,
      message,
      price: route.def.price,
      currency: 'USD',
      asset: 'USDC',
      network: NETWORK,
      payTo,
      preview: route.previewPath,
      prices: '/.well-known/x402',
    },
  });
}

/** Value of a failed PAYMENT-RESPONSE header (x402 v2 SettlementResponse). */
export function failedSettlementHeader(reason: string): string {
  return Buffer.from(JSON.stringify({ success: false, errorReason: reason, transaction: '', network: NETWORK })).toString('base64');
}
