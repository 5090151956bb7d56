/**
 * A claim as the Redis store keeps it: the accepted authorization in a few hundred bytes.
 *
 * Every byte of a claim is read, copied, appended to the AOF and stored by Redis on the paid
 * path, so the claim holds only what is not known elsewhere. What every claim of a route
 * shares, its payment requirements, is stored once under their digest (`requirementsOf`); the
 * payer and nonce are the key; the payload's copy of the requirements (`accepted`) is left
 * out when it is the same JSON; the payment-identifier id is read from the payload's
 * extensions, as the payment core reads it. The value reads back into the same `AcceptedRecord` (its
 * `mode` apart, which the store keeps with the claim's state), so a replica that takes over a
 * settlement settles exactly what was signed.
 *
 * Layout: `<token>\n<JSON array>`. The token names this attempt: a claim withdrawn and made
 * again by a retry has another one, so a late hand-over of the first cannot take the second.
 */
import { createHash } from 'node:crypto';
import type { AcceptedRecord } from './journal.js';
import type { PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';
import { fingerprintOf, readPaymentId } from './store.js';

/** Requirements as stored once: their JSON, and the digest claims name them by. */
export interface StoredRequirements {
  digest: string;
  json: string;
}

const stored = new WeakMap<PaymentRequirements, StoredRequirements>();

/** The stored form of a route's requirements (worked out once per requirements object). */
export function requirementsOf(requirements: PaymentRequirements): StoredRequirements {
  let s = stored.get(requirements);
  if (!s) {
    const json = JSON.stringify(requirements);
    s = { digest: createHash('sha256').update(json).digest('base64url').slice(0, 16), json };
    stored.set(requirements, s);
  }
  return s;
}

type Fields = [
  at: number,
  requestKey: string,
  requirements: string,
  payer: string,
  from: string,
  to: string,
  value: string,
  validAfter: string,
  validBefore: string,
  nonce: string,
  signature: string,
  rest: Omit<PaymentPayload, 'payload' | 'accepted'> & { accepted?: PaymentPayload['accepted'] },
];

/** The claim's value for an accepted record. */
export function encodeClaim(token: string, record: AcceptedRecord): string {
  const { payload: signed, accepted, ...rest } = record.payload;
  const req = requirementsOf(record.requirements);
  const a = signed.authorization;
  const keyNonce = record.id.slice(record.id.indexOf(':') + 1);
  const fields: Fields = [
    record.at,
    record.requestKey,
    req.digest,
    record.payer === a.from ? '' : record.payer,
    a.from,
    a.to,
    a.value,
    a.validAfter,
    a.validBefore,
    a.nonce === keyNonce ? '' : a.nonce,
    signed.signature,
    JSON.stringify(accepted) === req.json ? rest : { ...rest, accepted },
  ];
  return `${token}\n${JSON.stringify(fields)}`;
}

/** What a claim's value says, enough to judge a repeat; `record` rebuilds the accepted record. */
export interface ClaimRead {
  token: string;
  requestKey: string;
  paymentId: string | null;
  fingerprint: string;
  /** The digest of the requirements the record names. */
  requirements: string;
  record(id: string, requirements: PaymentRequirements, mode: AcceptedRecord['mode']): AcceptedRecord;
}

/** Reads a claim's value; throws on one this code did not write. */
export function decodeClaim(value: string): ClaimRead {
  const cut = value.indexOf('\n');
  if (cut < 0) throw new Error('not a claim value');
  const [at, requestKey, digest, payer, from, to, amount, validAfter, validBefore, nonce, signature, rest] = JSON.parse(value.slice(cut + 1)) as Fields;
  const signed = { signature, authorization: { from, to, value: amount, validAfter, validBefore, nonce } };
  const payload = (accepted: PaymentPayload['accepted'], keyNonce: string): PaymentPayload => ({
    ...rest,
    accepted: rest.accepted ?? accepted,
    payload: { ...signed, authorization: { ...signed.authorization, nonce: nonce || keyNonce } },
  });
  return {
    token: value.slice(0, cut),
    requestKey,
    // Both leave out the nonce and the payer: the same with or without them.
    paymentId: readPaymentId(rest as PaymentPayload) || null,
    fingerprint: fingerprintOf({ ...rest, accepted: rest.accepted!, payload: signed } as PaymentPayload),
    requirements: digest,
    record: (id, requirements, mode) => ({
      t: 'accepted',
      id,
      at,
      payer: payer || from,
      amount,
      requestKey,
      mode,
      payload: payload(requirements, id.slice(id.indexOf(':') + 1)),
      requirements,
    }),
  };
}
