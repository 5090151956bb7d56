/**
 * Prints a PAYMENT-SIGNATURE header value for one call of a paid route, for curl:
 *
 *   curl -H "PAYMENT-SIGNATURE: $(node dist/scripts/sign-payment.js URL)" URL
 *
 * It asks URL for its offer (the 402), checks the offer against the service's
 * /.well-known/x402 price list, and signs an EIP-3009 authorization for exactly that price
 * with WALLET_PRIVATE_KEY, or with the first payer of the devnet file (DEVNET_FILE, default
 * ./devnet.json). Each call needs a fresh signature: an authorization buys one request.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { privateKeyToAccount } from 'viem/accounts';

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

function fail(message: string): never {
  process.stderr.write(`sign-payment: ${message}\n`);
  process.exit(1);
}

const url = process.argv[2] ?? fail('usage: sign-payment URL');
const key = (process.env.WALLET_PRIVATE_KEY ||
  (JSON.parse(readFileSync(process.env.DEVNET_FILE || './devnet.json', 'utf8')) as { payers: { privateKey: string }[] }).payers[0]!.privateKey) as `0x${string}`;
const account = privateKeyToAccount(key);

const res = await fetch(url);
if (res.status !== 402) fail(`${url} answered ${res.status}, not 402`);
const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'));
const offer = required.accepts?.[0] ?? fail('the 402 carries no offer');
const prices = (await (await fetch(new URL('/.well-known/x402', url))).json()) as { routes: { path: string; accepts: unknown[] }[] };
const listed = prices.routes.find((r) => r.path === new URL(url).pathname);
if (!listed || JSON.stringify(listed.accepts[0]) !== JSON.stringify(offer)) fail('the offer differs from the published price list; not signing');

const authorization = {
  from: account.address,
  to: offer.payTo,
  value: offer.amount,
  validAfter: '0',
  validBefore: String(Math.floor(Date.now() / 1000) + offer.maxTimeoutSeconds),
  nonce: '0x' + randomBytes(32).toString('hex'),
};
const signature = await account.signTypedData({
  domain: { name: offer.extra.name, version: offer.extra.version, chainId: Number(offer.network.split(':')[1]), verifyingContract: offer.asset },
  types: TYPES,
  primaryType: 'TransferWithAuthorization',
  message: { ...authorization, value: BigInt(authorization.value), validAfter: 0n, validBefore: BigInt(authorization.validBefore), nonce: authorization.nonce as `0x${string}` },
});
const payload = { x402Version: 2, resource: required.resource, accepted: offer, payload: { signature, authorization } };
process.stdout.write(Buffer.from(JSON.stringify(payload)).toString('base64') + '\n');
