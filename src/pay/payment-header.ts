/**
 * Intake of a presented payment: the PAYMENT-SIGNATURE header (x402 v2), or its aliases
 * X-PAYMENT (v1's name) and PAYMENT (the specification's wording). Size-bounded base64 →
 * JSON → a TypeBox-checked PaymentPayload, compiled once.
 *
 * x402 v1 payloads (`{x402Version: 1, scheme, network: "base", payload}`) carry the same
 * EIP-3009 authorization as v2 ones, without the `accepted` requirements: they are
 * translated to v2 with the route's own requirements as `accepted`, so one verification,
 * journal, replay rule and settlement serve both versions. The answer then speaks v1.
 *
 * A header that cannot be read is the client's bug: 400. A readable payment this server
 * does not take (another protocol version, scheme or network) is a payment problem: 402 with
 * the reason and a fresh offer, so the client can pay again correctly.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NETWORK, type PaymentRequirements } from './offer.js';

/** Far above any real payload (about 1 KiB), far below what could hurt. */
export const MAX_PAYMENT_HEADER = 8192;

const Hex = (bytes?: number) => Type.String({ pattern: bytes ? `^0x[0-9a-fA-F]{${bytes * 2}}$` : '^0x[0-9a-fA-F]*$' });
const Address = Hex(20);
const UintString = Type.String({ pattern: '^\\d{1,78}$' });

const Requirements = Type.Object({
  scheme: Type.String(),
  network: Type.String(),
  amount: UintString,
  asset: Type.String(),
  payTo: Type.String(),
  maxTimeoutSeconds: Type.Optional(Type.Integer()),
  extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const PaymentPayloadSchema = Type.Object({
  x402Version: Type.Literal(2),
  resource: Type.Optional(Type.Object({ url: Type.String() })),
  accepted: Requirements,
  payload: Type.Object({
    signature: Hex(),
    authorization: Type.Object({
      from: Address,
      to: Address,
      value: UintString,
      validAfter: UintString,
      validBefore: UintString,
      nonce: Hex(32),
    }),
  }),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export type PaymentPayload = Static<typeof PaymentPayloadSchema>;

/** The x402 protocol version a payment came in, which its answer speaks. */
export type X402Version = 1 | 2;

/** v1's name for Base mainnet. */
export const V1_NETWORK = 'base';

const V1PayloadSchema = Type.Object({
  x402Version: Type.Literal(1),
  scheme: Type.String(),
  network: Type.String(),
  payload: PaymentPayloadSchema.properties.payload,
});

export type PaymentIntake =
  | { kind: 'payload'; payload: PaymentPayload; version: X402Version }
  /** Unreadable: answer 400. */
  | { kind: 'malformed'; message: string }
  /** Readable but not a payment this server takes: answer 402 with this x402 reason. */
  | { kind: 'rejected'; reason: 'invalid_x402_version' | 'invalid_scheme' | 'invalid_network'; message: string; version: X402Version };

const checkPayload = TypeCompiler.Compile(PaymentPayloadSchema);
const checkV1Payload = TypeCompiler.Compile(V1PayloadSchema);
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Reads a payment header; `accepted` is the route's requirements, which a v1 payload takes as its own. */
export function readPaymentHeader(value: string, accepted: PaymentRequirements): PaymentIntake {
  const text = value.trim();
  if (text.length > MAX_PAYMENT_HEADER) return { kind: 'malformed', message: `payment header longer than ${MAX_PAYMENT_HEADER} characters` };
  if (!BASE64.test(text)) return { kind: 'malformed', message: 'payment header is not base64' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return { kind: 'malformed', message: 'payment header does not decode to JSON' };
  }
  return readPaymentPayload(json, accepted, 'payment header');
}

/** Checks a decoded payment (from a header, or MCP's `_meta`). */
export function readPaymentPayload(json: unknown, accepted: PaymentRequirements, where = 'payment'): PaymentIntake {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'malformed', message: `${where} is not a JSON object` };
  const version = (json as { x402Version?: unknown }).x402Version;
  // Without a version it is no x402 payload at all (`{}` included): unreadable, 400.
  if (version === undefined) return { kind: 'malformed', message: `${where} has no x402Version: not an x402 PaymentPayload` };
  if (version === 1) return readV1(json, accepted, where);
  if (version !== 2) {
    return { kind: 'rejected', reason: 'invalid_x402_version', message: `x402Version ${JSON.stringify(version)} is not supported; pay with x402 v2 (or v1)`, version: 2 };
  }
  if (!checkPayload.Check(json)) {
    const first = checkPayload.Errors(json).First();
    return { kind: 'malformed', message: `payment payload invalid at ${first?.path || '/'}: ${first?.message ?? 'unexpected shape'}` };
  }
  if (json.accepted.scheme !== 'exact') return { kind: 'rejected', reason: 'invalid_scheme', message: `scheme ${json.accepted.scheme} is not supported; use exact`, version: 2 };
  if (json.accepted.network !== NETWORK) {
    return { kind: 'rejected', reason: 'invalid_network', message: `network ${json.accepted.network} is not supported; only ${NETWORK} settles`, version: 2 };
  }
  return { kind: 'payload', payload: json, version: 2 };
}

function readV1(json: object, accepted: PaymentRequirements, where: string): PaymentIntake {
  if (!checkV1Payload.Check(json)) {
    const first = checkV1Payload.Errors(json).First();
    return { kind: 'malformed', message: `x402 v1 ${where} invalid at ${first?.path || '/'}: ${first?.message ?? 'unexpected shape'}` };
  }
  if (json.scheme !== 'exact') return { kind: 'rejected', reason: 'invalid_scheme', message: `scheme ${json.scheme} is not supported; use exact`, version: 1 };
  if (json.network !== V1_NETWORK) return { kind: 'rejected', reason: 'invalid_network', message: `network ${json.network} is not supported; only ${V1_NETWORK} settles`, version: 1 };
  return { kind: 'payload', payload: { x402Version: 2, accepted, payload: json.payload }, version: 1 };
}
