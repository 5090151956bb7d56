/**
 * Local verification of an x402 `exact` EVM payment against a route's offer: no network, no
 * disk, about 0.1 ms. Each failure carries the x402 error code a client can act on.
 */
import { authorizationDigest, domainSeparator, recoverSigner } from './eip3009.js';
import { USDC_BASE, USDC_DOMAIN, type PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';

/** Base mainnet. The devnet runs the same chain id so signatures are interchangeable. */
export const CHAIN_ID = 8453;

/** How far the payer's clock may run ahead of ours when it sets validAfter. */
export const CLOCK_SKEW_SEC = 5;
/**
 * An authorization must stay valid at least this long after it reaches us, so settlement can
 * still land on chain. The reference verifier asks for 6 s; retries of an uncertain
 * settlement need more room, so we ask for 10.
 */
export const MIN_VALIDITY_SEC = 10;
/**
 * How far past the offer's `maxTimeoutSeconds` an authorization may stay valid (the payer's
 * clock may run ahead). Every accepted authorization is remembered until it expires, so a
 * validity of years would let each one hold memory for years: the payment core's tables are
 * bounded by the payments of the last `maxTimeoutSeconds` plus this.
 */
export const MAX_VALIDITY_SLACK_SEC = 60;

export type VerifyCode =
  | 'invalid_payment_requirements'
  | 'invalid_exact_evm_payload_recipient_mismatch'
  | 'invalid_exact_evm_payload_authorization_value_mismatch'
  | 'invalid_exact_evm_payload_authorization_valid_after'
  | 'invalid_exact_evm_payload_authorization_valid_before'
  | 'invalid_exact_evm_payload_signature';

export type VerifyResult = { ok: true; payer: string } | { ok: false; code: VerifyCode; message: string };

const separator = domainSeparator({ ...USDC_DOMAIN, chainId: CHAIN_ID, verifyingContract: USDC_BASE });

const fail = (code: VerifyCode, message: string): VerifyResult => ({ ok: false, code, message });
const sameAddress = (a: string, b: string) => a.length === b.length && a.toLowerCase() === b.toLowerCase();

/**
 * Checks, in order: the accepted requirements are this route's offer, the authorization pays
 * the offer's recipient exactly the price, it is valid now for long enough, and it was signed
 * by the address it claims to come from.
 */
export function verifyPayment(payload: PaymentPayload, offer: PaymentRequirements, nowSec: number): VerifyResult {
  const accepted = payload.accepted;
  if (!sameAddress(accepted.asset, offer.asset)) {
    return fail('invalid_payment_requirements', `asset ${accepted.asset} is not ${offer.asset} (USDC on Base)`);
  }
  if (!sameAddress(accepted.payTo, offer.payTo)) {
    return fail('invalid_payment_requirements', `accepted payTo ${accepted.payTo} is not this route's ${offer.payTo}`);
  }
  if (accepted.amount !== offer.amount) {
    return fail('invalid_payment_requirements', `accepted amount ${accepted.amount} is not this route's price ${offer.amount}`);
  }
  const extra = accepted.extra;
  if (extra && ((extra.name !== undefined && extra.name !== offer.extra.name) || (extra.version !== undefined && extra.version !== offer.extra.version))) {
    return fail('invalid_payment_requirements', `EIP-712 domain must be ${offer.extra.name} version ${offer.extra.version}`);
  }

  const auth = payload.payload.authorization;
  if (!sameAddress(auth.to, offer.payTo)) {
    return fail('invalid_exact_evm_payload_recipient_mismatch', `authorization pays ${auth.to}, not ${offer.payTo}`);
  }
  if (auth.value !== offer.amount && BigInt(auth.value) !== BigInt(offer.amount)) {
    return fail('invalid_exact_evm_payload_authorization_value_mismatch', `authorization value ${auth.value} must equal the price ${offer.amount}`);
  }
  if (Number(auth.validAfter) > nowSec + CLOCK_SKEW_SEC) {
    return fail('invalid_exact_evm_payload_authorization_valid_after', `authorization is not valid before ${auth.validAfter} (now ${nowSec}, Unix seconds)`);
  }
  if (Number(auth.validBefore) < nowSec + MIN_VALIDITY_SEC) {
    return fail(
      'invalid_exact_evm_payload_authorization_valid_before',
      `authorization expires at ${auth.validBefore}; it must stay valid at least ${MIN_VALIDITY_SEC} s after now (${nowSec}, Unix seconds)`,
    );
  }
  if (Number(auth.validBefore) > nowSec + offer.maxTimeoutSeconds + MAX_VALIDITY_SLACK_SEC) {
    return fail(
      'invalid_exact_evm_payload_authorization_valid_before',
      `authorization is valid until ${auth.validBefore}; at most ${offer.maxTimeoutSeconds + MAX_VALIDITY_SLACK_SEC} s after now (${nowSec}, Unix seconds): the offer's maxTimeoutSeconds plus ${MAX_VALIDITY_SLACK_SEC} s`,
    );
  }
  const signer = recoverSigner(authorizationDigest(separator, auth), payload.payload.signature);
  if (signer === null || !sameAddress(signer, auth.from)) {
    return fail('invalid_exact_evm_payload_signature', `signature is not ${auth.from}'s EIP-712 TransferWithAuthorization for USD Coin on chain ${CHAIN_ID}`);
  }
  return { ok: true, payer: signer };
}
