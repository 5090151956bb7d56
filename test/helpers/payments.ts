/**
 * Payments signed the way the official x402 client signs them (validAfter 0, validBefore
 * now + maxTimeoutSeconds, a random nonce), with knobs to make each defect an attacker or a
 * buggy client would send.
 */
import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { NETWORK, USDC_BASE, USDC_DOMAIN, type PaymentRequirements } from '../../src/pay/offer.js';
import { CHAIN_ID } from '../../src/pay/verify.js';
import type { PaymentPayload } from '../../src/pay/payment-header.js';
import type { AcceptedRecord } from '../../src/pay/journal.js';
import { fingerprintOf, type NewClaim } from '../../src/pay/store.js';
import { PAY_TO } from './service.js';

export const USDC_EIP712_DOMAIN = { ...USDC_DOMAIN, chainId: CHAIN_ID, verifyingContract: USDC_BASE } as const;
export { TRANSFER_WITH_AUTHORIZATION_TYPES as TRANSFER_TYPES } from '../../src/pay/eip3009.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES as TRANSFER_TYPES } from '../../src/pay/eip3009.js';

export function offerFor(amount: string, payTo: string = PAY_TO): PaymentRequirements {
  return { scheme: 'exact', network: NETWORK, amount, asset: USDC_BASE, payTo, maxTimeoutSeconds: 300, extra: { ...USDC_DOMAIN } };
}

export interface SignOptions {
  /** The route's price, as the offer states it. */
  amount: string;
  payTo?: string;
  privateKey?: `0x${string}`;
  /** Signs with this key while claiming `from` = the payer's address. */
  signer?: PrivateKeyAccount;
  value?: string;
  to?: string;
  acceptedPayTo?: string;
  asset?: string;
  validAfter?: number;
  validBefore?: number;
  nonce?: `0x${string}`;
  chainId?: number;
  domainName?: string;
  paymentId?: string;
}

export async function signPayment(o: SignOptions): Promise<{ payload: PaymentPayload; account: PrivateKeyAccount }> {
  const account = privateKeyToAccount(o.privateKey ?? generatePrivateKey());
  const payTo = o.payTo ?? PAY_TO;
  const message = {
    from: account.address,
    to: (o.to ?? payTo) as `0x${string}`,
    value: BigInt(o.value ?? o.amount),
    validAfter: BigInt(o.validAfter ?? 0),
    validBefore: BigInt(o.validBefore ?? Math.floor(Date.now() / 1000) + 300),
    nonce: o.nonce ?? (('0x' + randomBytes(32).toString('hex')) as `0x${string}`),
  };
  const signature = await (o.signer ?? account).signTypedData({
    domain: { ...USDC_EIP712_DOMAIN, chainId: o.chainId ?? CHAIN_ID, name: o.domainName ?? USDC_DOMAIN.name },
    types: TRANSFER_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const accepted = { ...offerFor(o.amount, o.acceptedPayTo ?? payTo), ...(o.asset ? { asset: o.asset } : {}) };
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted,
    payload: {
      signature,
      authorization: {
        from: account.address,
        to: message.to,
        value: String(message.value),
        validAfter: String(message.validAfter),
        validBefore: String(message.validBefore),
        nonce: message.nonce,
      },
    },
    ...(o.paymentId ? { extensions: { 'payment-identifier': { info: { required: false, id: o.paymentId } } } } : {}),
  };
  return { payload, account };
}

export const encodePayment = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64');
export const decodeHeader = (value: string | null) => JSON.parse(Buffer.from(value ?? '', 'base64').toString('utf8'));

/** The claim the payment core makes of a signed payment for a preview-priced call (as payments.ts builds it). */
export function claimOf(payload: PaymentPayload, opts: { paymentId?: string | null; limit?: bigint | null } = {}): NewClaim {
  const a = payload.payload.authorization;
  const record: AcceptedRecord = {
    t: 'accepted',
    id: `${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`,
    at: Date.now(),
    payer: a.from,
    amount: a.value,
    requestKey: '/cve/latest []',
    mode: 'optimistic',
    payload,
    requirements: offerFor(a.value),
  };
  return {
    record,
    fingerprint: fingerprintOf(payload),
    paymentId: opts.paymentId ?? null,
    expiresAt: Number(a.validBefore) * 1000 + 60_000,
    limit: opts.limit === undefined ? 1_000_000n : opts.limit,
  };
}
