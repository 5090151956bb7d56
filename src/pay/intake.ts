/**
 * A presented payment, from its header text to the payment core's outcome: the steps every
 * adapter takes in the same order (a paid call, a stream's upgrade, a stream's in-band
 * payment). Nothing here knows HTTP or WebSockets.
 *
 * 1. A client address over its failed-payment budget is refused before anything is decoded.
 * 2. The payment is read (a header's base64, or MCP's decoded object); an unreadable or
 *    unacceptable one is a failure charged to the address.
 * 3. The payload goes to `Payments.authorize`; a refusal (other than "unavailable") is charged.
 */
import type { PaymentRequirements } from './offer.js';
import { readPaymentHeader, readPaymentPayload, type X402Version } from './payment-header.js';
import type { Outcome, Payments } from './payments.js';
import { steadyNow } from '../clock.js';

export type Intake =
  | { kind: 'throttled'; retryAfterSec: number }
  /** Unreadable: the client's bug (400). */
  | { kind: 'malformed'; message: string }
  /** Readable, but not a payment this server takes (402 with the reason). */
  | { kind: 'rejected'; reason: string; message: string; version: X402Version }
  | { kind: 'authorizing'; version: X402Version; authorization: { id: string; validBefore: number }; outcome: Promise<Outcome> };

export interface Presented {
  /** The payer's network address, for the failure budget ('' when the budget is off). */
  client: string;
  /** A PAYMENT-SIGNATURE / X-PAYMENT value (base64), or a payload already decoded (MCP's `x402/payment`). */
  payment: unknown;
  /** Where the payment came from, for error messages about a decoded payload. */
  where?: string;
  requirements: PaymentRequirements;
  requestKey: string;
  produce: () => Buffer;
}

export function presentPayment(payments: Payments, p: Presented, nowMs = Date.now()): Intake {
  // The budget refills over a duration: steady clock. Validity (nowMs) is wall-clock.
  const wait = payments.failures.retryAfter(p.client, steadyNow());
  if (wait > 0) {
    payments.count('too_many_failed_payments');
    return { kind: 'throttled', retryAfterSec: wait };
  }
  const read = typeof p.payment === 'string' ? readPaymentHeader(p.payment, p.requirements) : readPaymentPayload(p.payment, p.requirements, p.where);
  if (read.kind !== 'payload') {
    payments.failures.charge(p.client, steadyNow());
    payments.count(read.kind === 'malformed' ? 'invalid_payment' : read.reason);
    return read;
  }
  const outcome = payments.authorize({ requestKey: p.requestKey, requirements: p.requirements, payload: read.payload, produce: p.produce }, nowMs).then((o) => {
    if (o.kind === 'refused' && o.status !== 503) payments.failures.charge(p.client, steadyNow());
    return o;
  });
  const auth = read.payload.payload.authorization;
  const authorization = { id: `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`, validBefore: Number(auth.validBefore) };
  return { kind: 'authorizing', version: read.version, authorization, outcome };
}
