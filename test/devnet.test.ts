/**
 * The devnet against the official x402 client: a payment signed by @x402/evm's ExactEvmScheme
 * for Base USDC verifies and settles through the devnet's facilitator, moves exactly the price
 * on the chain, cannot be settled twice, and an unfunded payer is refused for its balance.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { createPublicClient, defineChain, http, parseAbi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

let devnet: Devnet;

before(async () => {
  devnet = await startDevnet({ payers: 1 });
});
after(() => devnet?.stop());

function requirements(): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '5000',
    asset: devnet.usdc,
    payTo: devnet.payTo,
    maxTimeoutSeconds: 300,
    extra: { name: 'USD Coin', version: '2' },
  };
}

async function pay(privateKey: Hex): Promise<PaymentPayload> {
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(privateKey)));
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/test', description: 'devnet test', mimeType: 'application/json' },
    accepts: [requirements()],
  };
  return client.createPaymentPayload(paymentRequired);
}

async function facilitator(path: '/verify' | '/settle', paymentPayload: PaymentPayload): Promise<Record<string, unknown>> {
  const res = await fetch(devnet.facilitatorUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements() }),
  });
  assert.equal(res.status, 200, `${path} answered ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

function chain() {
  const c = defineChain({
    id: devnet.chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [devnet.rpcUrl] } },
  });
  return createPublicClient({ chain: c, transport: http(devnet.rpcUrl) });
}

test('the devnet is Base: chain 8453, USDC and Multicall3 code in place, payers funded', async () => {
  const client = chain();
  assert.equal(await client.getChainId(), 8453);
  assert.equal(devnet.usdc, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913');
  assert.ok(((await client.getCode({ address: devnet.usdc as Hex })) ?? '0x').length > 2);
  assert.ok(((await client.getCode({ address: '0xcA11bde05977b3631167028862bE2a173976CA11' })) ?? '0x').length > 2);
  const payer = devnet.payers[0]!;
  assert.equal(await client.readContract({ address: devnet.usdc as Hex, abi: ERC20, functionName: 'balanceOf', args: [payer.address] }), 100_000_000n);
  assert.ok((await client.getBalance({ address: devnet.settler.address })) > 0n);
  assert.notEqual(devnet.settler.address, devnet.payTo);

  const supported = (await (await fetch(devnet.facilitatorUrl + '/supported')).json()) as { kinds: { scheme: string; network: string }[] };
  assert.ok(supported.kinds.some((k) => k.scheme === 'exact' && k.network === 'eip155:8453'));
  assert.deepEqual(Object.keys(devnet.info()).sort(), ['chainId', 'facilitatorUrl', 'payTo', 'payers', 'rpcUrl', 'settler', 'usdc']);
});

test('an official x402 payment verifies, settles once, and moves exactly the price', async () => {
  const client = chain();
  const payer = devnet.payers[0]!;
  const balance = (owner: Hex) => client.readContract({ address: devnet.usdc as Hex, abi: ERC20, functionName: 'balanceOf', args: [owner] });
  const [payer0, payTo0] = [await balance(payer.address), await balance(devnet.payTo)];

  const payload = await pay(payer.privateKey);
  const verified = await facilitator('/verify', payload);
  assert.equal(verified.isValid, true, JSON.stringify(verified));
  assert.equal(String(verified.payer).toLowerCase(), payer.address.toLowerCase());

  const settled = await facilitator('/settle', payload);
  assert.equal(settled.success, true, JSON.stringify(settled));
  assert.match(String(settled.transaction), /^0x[0-9a-f]{64}$/);
  const receipt = await client.getTransactionReceipt({ hash: settled.transaction as Hex });
  assert.equal(receipt.status, 'success');

  assert.equal((await balance(payer.address)) - payer0, -5000n);
  assert.equal((await balance(devnet.payTo)) - payTo0, 5000n);

  // The same authorization again: refused for its used nonce (read through Multicall3).
  const again = await facilitator('/settle', payload);
  assert.equal(again.success, false);
  assert.equal(again.errorReason, 'invalid_exact_evm_nonce_already_used', JSON.stringify(again));
  assert.equal((await balance(payer.address)) - payer0, -5000n);
  assert.equal((await balance(devnet.payTo)) - payTo0, 5000n);
});

test('a payer without USDC is refused for its balance', async () => {
  const payload = await pay(generatePrivateKey());
  const verified = await facilitator('/verify', payload);
  assert.equal(verified.isValid, false);
  assert.equal(verified.invalidReason, 'invalid_exact_evm_insufficient_balance', JSON.stringify(verified));
  const settled = await facilitator('/settle', payload);
  assert.equal(settled.success, false);
  assert.equal(settled.errorReason, 'invalid_exact_evm_insufficient_balance', JSON.stringify(settled));
});

test('the facilitator answers bad requests with JSON errors', async () => {
  const bad = await fetch(devnet.facilitatorUrl + '/verify', { method: 'POST', body: '{not json' });
  assert.equal(bad.status, 400);
  assert.ok(((await bad.json()) as { error?: string }).error);

  const big = await fetch(devnet.facilitatorUrl + '/settle', { method: 'POST', body: 'x'.repeat(100 * 1024) });
  assert.equal(big.status, 413);
  assert.ok(((await big.json()) as { error?: string }).error);
});
