/**
 * The client's signer (over the service's own digest) against viem's: the same address for a key, and the same 65-byte
 * signature for the same authorization, over random keys, amounts, times and nonces and the
 * domains the service offers (Base's USDC and the devnet's). The devnet test (client.test.ts)
 * then has the token contract itself accept these signatures.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { Wallet } from '../src/client/sign.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../src/pay/transfer-types.js';
import { mulberry32 } from './helpers/loopback.js';

const hex = (n: number) => `0x${randomBytes(n).toString('hex')}` as `0x${string}`;

test('address and TransferWithAuthorization signature equal viem’s for 200 random cases', async () => {
  const rnd = mulberry32(26);
  const domains = [
    { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
    { name: 'USDC', version: '2', chainId: 31337, verifyingContract: hex(20) },
    { name: 'Ünïcode Tōken', version: '10', chainId: 84532, verifyingContract: hex(20) },
  ];
  for (let i = 0; i < 200; i++) {
    const key = hex(32);
    const wallet = new Wallet(key);
    const viem = privateKeyToAccount(key);
    assert.equal(wallet.address, viem.address, 'the EIP-55 address');
    const domain = domains[i % domains.length]!;
    const value = BigInt(Math.floor(rnd() * 2 ** 52)) * (i % 7 === 0 ? 10n ** 40n : 1n);
    const validBefore = BigInt(Math.floor(1.7e9 + rnd() * 1e9));
    const message = { from: viem.address, to: hex(20), value: value.toString(), validAfter: '0', validBefore: validBefore.toString(), nonce: hex(32) };
    const expected = await viem.signTypedData({
      domain: { ...domain, verifyingContract: domain.verifyingContract as `0x${string}` },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: { ...message, to: message.to as `0x${string}`, nonce: message.nonce as `0x${string}`, value, validAfter: 0n, validBefore },
    });
    assert.equal(wallet.signTransfer(domain, message), expected);
  }
});

test('malformed keys and fields are refused before anything is signed', () => {
  assert.throws(() => new Wallet('0x1234'), /64 hex digits/);
  assert.throws(() => new Wallet(`0x${'0'.repeat(64)}`), /not a valid secp256k1 key/);
  assert.throws(() => new Wallet(`0x${'f'.repeat(64)}`), /not a valid secp256k1 key/);
  const wallet = new Wallet(hex(32));
  const domain = { name: 'USDC', version: '2', chainId: 1, verifyingContract: hex(20) };
  const ok = { from: wallet.address, to: hex(20), value: '1', validAfter: '0', validBefore: '2', nonce: hex(32) };
  assert.throws(() => wallet.signTransfer(domain, { ...ok, to: '0x12' }), /to must be 0x and 40 hex digits/);
  assert.throws(() => wallet.signTransfer({ ...domain, verifyingContract: 'USDC' }, ok), /verifyingContract must be/);
  assert.throws(() => wallet.signTransfer(domain, { ...ok, value: '1e6' }), /value is not a uint256/);
  assert.throws(() => wallet.signTransfer(domain, { ...ok, nonce: hex(31) }), /nonce must be 0x and 64 hex digits/);
  assert.throws(() => wallet.signTransfer(domain, { ...ok, value: '-1' }), /value is not a uint256/);
  assert.throws(() => wallet.signTransfer(domain, { ...ok, value: (1n << 256n).toString() }), /value is not a uint256/);
  assert.equal(JSON.stringify(wallet).includes('key'), false, 'the key is not an enumerable field');
});
