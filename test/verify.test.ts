/**
 * Local payment verification: the digest and signer recovery agree with viem, and each way a
 * payment can be wrong gives its x402 code. Payloads are signed by real keys with viem.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationDigest, domainSeparator, recoverSigner } from '../src/pay/eip3009.js';
import { Journal, JOURNAL_FILE, readJournal, type AcceptedRecord } from '../src/pay/journal.js';
import { USDC_BASE } from '../src/pay/offer.js';
import { CHAIN_ID, MIN_VALIDITY_SEC, verifyPayment } from '../src/pay/verify.js';
import { offerFor, signPayment, TRANSFER_TYPES, USDC_EIP712_DOMAIN } from './helpers/payments.js';

const now = () => Math.floor(Date.now() / 1000);

describe('EIP-3009 digest and signer', () => {
  test('the digest and the recovered signer match viem for random keys and values', async () => {
    const separator = domainSeparator({ name: 'USD Coin', version: '2', chainId: CHAIN_ID, verifyingContract: USDC_BASE });
    for (let i = 0; i < 25; i++) {
      const account = privateKeyToAccount(generatePrivateKey());
      const message = {
        from: account.address,
        to: privateKeyToAccount(generatePrivateKey()).address,
        value: BigInt('0x' + randomBytes(8).toString('hex')),
        validAfter: BigInt(i),
        validBefore: BigInt(now() + i * 1000),
        nonce: ('0x' + randomBytes(32).toString('hex')) as `0x${string}`,
      };
      const typed = { domain: USDC_EIP712_DOMAIN, types: TRANSFER_TYPES, primaryType: 'TransferWithAuthorization', message } as const;
      const signature = await account.signTypedData(typed);
      const auth = { ...message, value: String(message.value), validAfter: String(message.validAfter), validBefore: String(message.validBefore) };
      const digest = authorizationDigest(separator, auth);
      assert.equal('0x' + Buffer.from(digest).toString('hex'), hashTypedData(typed));
      assert.equal(recoverSigner(digest, signature), (await recoverTypedDataAddress({ ...typed, signature })).toLowerCase());
    }
  });

  test('malformed and malleable signatures recover nobody', async () => {
    const digest = new Uint8Array(32).fill(7);
    assert.equal(recoverSigner(digest, '0x1234'), null);
    assert.equal(recoverSigner(digest, '0x' + '00'.repeat(65)), null);
    assert.equal(recoverSigner(digest, '0x' + 'ff'.repeat(64) + '1b'), null);
    // The same signature with s replaced by n - s (and v flipped) is refused, as USDC refuses it.
    const { payload } = await signPayment({ amount: '5000' });
    const sig = payload.payload.signature;
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt('0x' + sig.slice(66, 130));
    const flipped = sig.slice(0, 66) + (n - s).toString(16).padStart(64, '0') + (sig.endsWith('1b') ? '1c' : '1b');
    const separator = domainSeparator({ name: 'USD Coin', version: '2', chainId: CHAIN_ID, verifyingContract: USDC_BASE });
    const digest2 = authorizationDigest(separator, payload.payload.authorization);
    assert.equal(recoverSigner(digest2, sig), payload.payload.authorization.from.toLowerCase());
    assert.equal(recoverSigner(digest2, flipped), null);
  });
});

describe('verifyPayment', () => {
  const offer = offerFor('5000');

  test('a correct payment from the official client shape verifies and names the payer', async () => {
    const { payload, account } = await signPayment({ amount: '5000' });
    const result = verifyPayment(payload, offer, now());
    assert.deepEqual(result, { ok: true, payer: account.address.toLowerCase() });
  });

  test('each defect gives its x402 code', async () => {
    const other = privateKeyToAccount(generatePrivateKey());
    const cases: [string, Parameters<typeof signPayment>[0], string][] = [
      ['underpayment', { amount: '5000', value: '4999' }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['overpayment', { amount: '5000', value: '10000' }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['wrong recipient', { amount: '5000', to: other.address }, 'invalid_exact_evm_payload_recipient_mismatch'],
      ['accepted for another payTo', { amount: '5000', acceptedPayTo: other.address }, 'invalid_payment_requirements'],
      ['accepted another asset', { amount: '5000', asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }, 'invalid_payment_requirements'],
      ['accepted another price', { amount: '10000' }, 'invalid_payment_requirements'],
      ['expired', { amount: '5000', validBefore: now() - 1 }, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['too little validity left', { amount: '5000', validBefore: now() + MIN_VALIDITY_SEC - 2 }, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['not yet valid', { amount: '5000', validAfter: now() + 120 }, 'invalid_exact_evm_payload_authorization_valid_after'],
      ['signed by another key', { amount: '5000', signer: other }, 'invalid_exact_evm_payload_signature'],
      ['signed for another chain', { amount: '5000', chainId: 84532 }, 'invalid_exact_evm_payload_signature'],
      ['signed for another token name', { amount: '5000', domainName: 'USDC' }, 'invalid_exact_evm_payload_signature'],
    ];
    for (const [name, opts, code] of cases) {
      const { payload } = await signPayment(opts);
      const result = verifyPayment(payload, offer, now());
      assert.equal(result.ok, false, name);
      assert.equal(!result.ok && result.code, code, name);
    }
  });

  test('a field changed after signing breaks the signature', async () => {
    const { payload } = await signPayment({ amount: '5000' });
    payload.payload.authorization.nonce = '0x' + randomBytes(32).toString('hex');
    const result = verifyPayment(payload, offer, now());
    assert.equal(!result.ok && result.code, 'invalid_exact_evm_payload_signature');
  });
});

describe('journal', () => {
  const record = (id: string): AcceptedRecord => ({
    t: 'accepted',
    id,
    at: Date.now(),
    payer: '0x' + '11'.repeat(20),
    amount: '5000',
    requestKey: '/cve/latest []',
    mode: 'sync',
    payload: {} as AcceptedRecord['payload'],
    requirements: offerFor('5000'),
  });

  test('accepted entries without an outcome come back pending, with their last transaction; a torn last line is skipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-journal-'));
    const { journal } = await Journal.open(dir);
    await Promise.all([journal.append(record('a')), journal.append(record('b')), journal.append(record('c'))]);
    await journal.append({ t: 'submitted', id: 'b', at: 1, tx: '0xbb' });
    await journal.append({ t: 'settled', id: 'a', at: 2, tx: '0xaa' });
    await journal.append({ t: 'settled', id: 'a', at: 3, tx: '0xaa' });
    await journal.close();
    appendFileSync(join(dir, JOURNAL_FILE), '{"t":"failed","id":"c","at":4,"rea');

    const state = readJournal(join(dir, JOURNAL_FILE));
    assert.equal(state.settled, 1, 'a duplicate outcome line counts once');
    assert.deepEqual(
      state.pending.map((p) => [p.record.id, p.tx]),
      [
        ['b', '0xbb'],
        ['c', null],
      ],
    );

    // Reopening compacts: totals and pending carried over, the old file archived whole.
    const reopened = await Journal.open(dir);
    assert.equal(reopened.state.settled, 1);
    assert.equal(reopened.state.pending.length, 2);
    await reopened.journal.append({ t: 'failed', id: 'c', at: 5, reason: 'insufficient_funds' });
    await reopened.journal.close();
    const again = readJournal(join(dir, JOURNAL_FILE));
    assert.deepEqual([again.settled, again.failed, again.pending.map((p) => p.tx)], [1, 1, ['0xbb']]);
    const archived = readdirSync(join(dir, 'journal-archive'));
    assert.equal(archived.length, 1);
    assert.match(readFileSync(join(dir, 'journal-archive', archived[0]!), 'utf8'), /"id":"a"/);
  });

  test('a written record is in the file before its sync, as a service restarted after a crash would read it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-journal-'));
    const { journal } = await Journal.open(dir);
    journal.write(record('d'));
    const synced = journal.sync();
    assert.deepEqual(
      readJournal(join(dir, JOURNAL_FILE)).pending.map((p) => p.record.id),
      ['d'],
    );
    await synced;
    journal.note({ t: 'settled', id: 'd', at: 1, tx: '0xdd' });
    assert.equal(readJournal(join(dir, JOURNAL_FILE)).settled, 1, 'notes are written at once too');
    await journal.close();
    assert.throws(() => journal.write(record('e')), /closed/);
    await assert.rejects(journal.append(record('e')), /closed/);
  });
});
