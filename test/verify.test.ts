/**
 * Local payment verification: the digest and signer recovery agree with viem, and each way a
 * payment can be wrong gives its x402 code. Payloads are signed by real keys with viem.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { hashTypedData, recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { authorizationDigest, domainSeparator, recoverSigner } from '../src/pay/eip3009.js';
import { ARCHIVE_DIR, Journal, JOURNAL_FILE, pruneArchives, readJournal, type AcceptedRecord } from '../src/pay/journal.js';
import { USDC_BASE } from '../src/pay/offer.js';
import { CHAIN_ID, MAX_VALIDITY_SLACK_SEC, MIN_VALIDITY_SEC, verifyPayment } from '../src/pay/verify.js';
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
      // Remembered until it expires, so a validity of years would hold memory for years.
      ['valid far beyond the offer', { amount: '5000', validBefore: now() + 300 + MAX_VALIDITY_SLACK_SEC + 5 }, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['valid until the year 2100', { amount: '5000', validBefore: 4_102_444_800 }, 'invalid_exact_evm_payload_authorization_valid_before'],
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
    payload: { payload: { authorization: { validBefore: String(Math.floor(Date.now() / 1000) + 300) } } } as AcceptedRecord['payload'],
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

  /** Every accepted id in the live file and the archives: who paid, rebuilt from what is kept. */
  const everyAccepted = (dir: string) => {
    const files = [join(dir, JOURNAL_FILE), ...readdirSync(join(dir, ARCHIVE_DIR)).map((f) => join(dir, ARCHIVE_DIR, f))];
    const ids = new Set<string>();
    for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(/"t":"accepted","id":"([^"]+)"/g)) ids.add(m[1]!);
    return [...ids].sort();
  };

  test('rotation while serving: the live file keeps only what is pending or still valid, the archive keeps everything, syncs on both sides complete', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-journal-'));
    const { journal } = await Journal.open(dir, { rotateBytes: 2048, archiveDays: 90, archiveBytes: 0 });
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const id of ids) journal.write(record(id));
    for (const id of ids.slice(0, 10)) journal.write({ t: 'settled', id, at: 1, tx: `0x${id}` });
    const before = journal.sync();
    assert.equal(journal.rotationDue, true, `${journal.size()} bytes`);

    // The payment core's state: two pending, one settled still valid; the other settled ones expired.
    const state = readJournal(join(dir, JOURNAL_FILE));
    state.spent = state.spent.slice(0, 1);
    assert.equal(journal.rotate(state), true);
    const afterRotate = journal.append(record('late'));
    await Promise.all([before, afterRotate]);
    assert.equal(journal.rotationDue, false);
    assert.ok(journal.size() < 2048, `the live file is small again: ${journal.size()} bytes`);
    journal.note({ t: 'settled', id: 'p10', at: 2, tx: '0xp10' });
    await journal.close();

    const live = readJournal(join(dir, JOURNAL_FILE));
    assert.deepEqual(live.pending.map((p) => p.record.id).sort(), ['late', 'p11']);
    assert.deepEqual([live.settled, live.spent.length], [11, 2], 'totals carried, one spent carried and one settled since');
    assert.deepEqual(everyAccepted(dir), [...ids, 'late'].sort(), 'nothing accepted is missing from the journal and its archive');
    const reopened = await Journal.open(dir);
    assert.deepEqual(reopened.state.pending.map((p) => p.record.id).sort(), ['late', 'p11']);
    await reopened.journal.close();
  });

  test('a rotation cut short between its renames is completed at the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-journal-'));
    const { journal } = await Journal.open(dir);
    await journal.append(record('kept'));
    await journal.close();
    // The live file moved to the archive, the compacted one still under its temporary name.
    mkdirSync(join(dir, ARCHIVE_DIR), { recursive: true });
    writeFileSync(join(dir, `${JOURNAL_FILE}.next`), readFileSync(join(dir, JOURNAL_FILE)));
    renameSync(join(dir, JOURNAL_FILE), join(dir, ARCHIVE_DIR, 'payments-cut.jsonl'));
    const reopened = await Journal.open(dir);
    assert.deepEqual(
      reopened.state.pending.map((p) => p.record.id),
      ['kept'],
    );
    assert.equal(existsSync(join(dir, `${JOURNAL_FILE}.next`)), false);
    await reopened.journal.close();
  });

  test('archives past their days, then the oldest beyond the total size, are deleted; the newest stay', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-journal-'));
    mkdirSync(join(dir, ARCHIVE_DIR));
    const now = Date.now();
    const ages = [0, 1, 2, 3, 40, 100]; // days
    for (const days of ages) {
      const f = join(dir, ARCHIVE_DIR, `payments-${days}d.jsonl`);
      writeFileSync(f, 'x'.repeat(1000));
      utimesSync(f, (now - days * 86_400_000) / 1000, (now - days * 86_400_000) / 1000);
    }
    writeFileSync(join(dir, ARCHIVE_DIR, 'notes.txt'), 'not an archive');
    pruneArchives(dir, { rotateBytes: 1, archiveDays: 90, archiveBytes: 3500 }, now);
    assert.deepEqual(readdirSync(join(dir, ARCHIVE_DIR)).sort(), ['notes.txt', 'payments-0d.jsonl', 'payments-1d.jsonl', 'payments-2d.jsonl']);
    pruneArchives(dir, { rotateBytes: 1, archiveDays: 0, archiveBytes: 0 }, now + 1e12);
    assert.equal(readdirSync(join(dir, ARCHIVE_DIR)).length, 4, '0 and 0 keep them all');
  });
});
