/**
 * Paid calls end to end on a local chain: anvil (chain id 8453) with an EIP-3009 USDC at the
 * Base address, a real x402 facilitator built from @x402/core + @x402/evm, and the official
 * client (@x402/fetch + ExactEvmScheme) paying. Every claim is checked on the chain itself:
 * transactions exist, balances move by exactly the price, attacks move nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { decodeFunctionData, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PAID_ROUTES } from '../src/catalog/index.js';
import { ChainReader } from '../src/pay/chain.js';
import { LocalStore } from '../src/pay/local-store.js';
import { Payments, type Outcome } from '../src/pay/payments.js';
import type { PaymentPayload } from '../src/pay/payment-header.js';
import type { Settler } from '../src/pay/settler.js';
import { FacilitatorSettler } from '../src/pay/settlers/facilitator.js';
import { WalletSettler } from '../src/pay/settlers/wallet.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { decodeHeader, encodePayment, offerFor, signPayment } from './helpers/payments.js';
import { until } from './helpers/until.js';
import { startTestService, type TestService } from './helpers/service.js';

const TRANSFER_ABI = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
]);

let devnet: Devnet;
let chain: ChainReader;
const services: Record<string, TestService> = {};

const balance = (address: string) => chain.balanceOf(address);

function officialFetch(privateKey: `0x${string}`) {
  const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(privateKey)));
  return wrapFetchWithPayment(fetch, client);
}

async function health(svc: TestService): Promise<{ pending: number; settled: number; failed: number }> {
  return ((await (await svc.get('/health')).json()) as any).x402.settlement;
}

/** The payer and payee balances around `fn`. */
async function deltas(payer: string, fn: () => Promise<void>): Promise<{ payer: bigint; payTo: bigint }> {
  const [p0, t0] = [await balance(payer), await balance(devnet.payTo)];
  await fn();
  return { payer: (await balance(payer)) - p0, payTo: (await balance(devnet.payTo)) - t0 };
}

before(async () => {
  devnet = await startDevnet({ payers: 6 });
  chain = new ChainReader(devnet.rpcUrl, 10_000);
  const facilitator = { PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl };
  const wallet = { PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: '', SETTLER_PRIVATE_KEY: devnet.settler.privateKey, BASE_RPC_URL: devnet.rpcUrl };
  services['facilitator/sync'] = await startTestService(facilitator);
  services['facilitator/optimistic'] = await startTestService({ ...facilitator, SETTLEMENT: 'optimistic' });
  services['wallet/sync'] = await startTestService(wallet);
  services['wallet/optimistic'] = await startTestService({ ...wallet, SETTLEMENT: 'optimistic' });
});

after(async () => {
  for (const svc of Object.values(services)) await svc.stop();
  await devnet?.stop();
});

describe('the official x402 client pays', () => {
  const modes = ['facilitator/sync', 'facilitator/optimistic', 'wallet/sync', 'wallet/optimistic'];
  modes.forEach((mode, i) => {
    test(`${mode}: 200 with the envelope; the payer pays exactly the price, once, on chain`, async () => {
      const svc = services[mode]!;
      const payer = devnet.payers[i]!;
      const pay = officialFetch(payer.privateKey);
      const before = await health(svc);
      let res!: Response;
      let body: any;
      const moved = await deltas(payer.address, async () => {
        res = await pay(`${svc.base}/edgar/filings?form=8-k`);
        body = await res.json();
        // Optimistic: the data came first; wait for the background settlement to land.
        await until('settlement', async () => (await health(svc)).settled > before.settled);
      });
      assert.equal(res.status, 200);
      assert.ok(body.count > 0 && Array.isArray(body.articles));
      assert.equal(res.headers.get('cache-control'), 'private, no-store');
      const settlement = decodeHeader(res.headers.get('payment-response'));
      assert.equal(settlement.success, true);
      assert.equal(settlement.network, 'eip155:8453');
      assert.equal(settlement.payer.toLowerCase(), payer.address.toLowerCase());
      if (mode.endsWith('sync')) {
        const receipt = await chain.client.getTransactionReceipt({ hash: settlement.transaction });
        assert.equal(receipt.status, 'success');
      } else {
        assert.equal(settlement.extra.settlement, 'pending');
      }
      assert.deepEqual(moved, { payer: -10_000n, payTo: 10_000n });
      assert.deepEqual(await health(svc), { ...before, settled: before.settled + 1 });
    });
  });
});

describe('attacks release no data and move no money', () => {
  let svc: TestService;
  let payer: { address: string; privateKey: `0x${string}` };
  before(() => {
    svc = services['facilitator/sync']!;
    payer = devnet.payers[4]!;
  });

  async function attempt(header: string | null, path = '/cve/latest') {
    const res = await svc.get(path, header === null ? {} : { headers: { 'PAYMENT-SIGNATURE': header } });
    return { status: res.status, body: (await res.json()) as any, res };
  }

  test('each defective payment is refused with its reason; balances do not move', async () => {
    const now = Math.floor(Date.now() / 1000);
    const other = privateKeyToAccount(generatePrivateKey());
    const signed = async (o: Partial<Parameters<typeof signPayment>[0]> = {}) =>
      encodePayment((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, ...o })).payload);
    const good = (await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })).payload;
    const cases: [string, string | null, number, string][] = [
      ['no header', null, 402, 'payment_required'],
      ['garbage header', '%%%garbage%%%', 400, 'invalid_payment'],
      ['wrong version', encodePayment({ ...good, x402Version: 3 } as unknown as PaymentPayload), 402, 'invalid_x402_version'],
      ['wrong network', encodePayment({ ...good, accepted: { ...good.accepted, network: 'eip155:84532' } }), 402, 'invalid_network'],
      ['wrong asset', await signed({ asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }), 402, 'invalid_payment_requirements'],
      ['wrong payTo', await signed({ to: other.address }), 402, 'invalid_exact_evm_payload_recipient_mismatch'],
      ['underpayment', await signed({ value: '4999' }), 402, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['overpayment', await signed({ value: '5001' }), 402, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['expired', await signed({ validBefore: now - 5 }), 402, 'invalid_exact_evm_payload_authorization_valid_before'],
      ['not yet valid', await signed({ validAfter: now + 600 }), 402, 'invalid_exact_evm_payload_authorization_valid_after'],
      ['bad signature', encodePayment({ ...good, payload: { ...good.payload, signature: '0x' + 'ab'.repeat(65) } }), 402, 'invalid_exact_evm_payload_signature'],
      ['signature by another key', await signed({ signer: other }), 402, 'invalid_exact_evm_payload_signature'],
    ];
    const before = await health(svc);
    const moved = await deltas(payer.address, async () => {
      for (const [name, header, status, code] of cases) {
        const { status: got, body, res } = await attempt(header);
        assert.equal(got, status, name);
        assert.equal(body.error.code, code, name);
        assert.equal(body.articles, undefined, name);
        if (status === 402) {
          assert.ok(res.headers.get('payment-required'), name);
          assert.equal(res.headers.get('cache-control'), 'no-store', name);
        }
      }
    });
    assert.deepEqual(moved, { payer: 0n, payTo: 0n });
    assert.deepEqual(await health(svc), before, 'nothing was accepted');
  });

  for (const mode of ['facilitator/sync', 'wallet/sync']) {
    test(`${mode}: a payer without funds gets 402 insufficient_funds and no data`, async () => {
      const s = services[mode]!;
      const broke = generatePrivateKey();
      const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: broke });
      const moved = await deltas(privateKeyToAccount(broke).address, async () => {
        const res = await s.get('/cve/latest', { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
        const body = (await res.json()) as any;
        assert.equal(res.status, 402);
        assert.equal(body.error.code, 'insufficient_funds');
        assert.equal(body.articles, undefined);
        assert.equal(decodeHeader(res.headers.get('payment-response')).errorReason, 'insufficient_funds');
      });
      assert.deepEqual(moved, { payer: 0n, payTo: 0n });
    });
  }

  test("an authorization buys one request: the payer's retry (same payment-identifier) gets the same answer free, another route or query is a replay", async () => {
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: 'retry_' + 'a'.repeat(20) });
    const header = encodePayment(payload);
    const other = PAID_ROUTES.find((r) => r.def.price === '0.005' && r.path !== '/cve/latest' && !r.def.qRequired)!;
    const moved = await deltas(payer.address, async () => {
      const first = await attempt(header);
      assert.equal(first.status, 200);
      const retry = await attempt(header);
      assert.equal(retry.status, 200);
      assert.deepEqual(retry.body, first.body, 'the same response again');
      assert.equal(decodeHeader(retry.res.headers.get('payment-response')).transaction, decodeHeader(first.res.headers.get('payment-response')).transaction);
      for (const path of ['/cve/latest?limit=3', other.path]) {
        const replay = await attempt(header, path);
        assert.equal(replay.status, 402, path);
        assert.equal(replay.body.error.code, 'replay', path);
        assert.equal(replay.body.articles, undefined);
      }
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
  });

  test("a chain observer cannot get paid data: the authorization rebuilt from the settlement transaction is refused, the payer's retry is not", async () => {
    const paymentId = 'observer_' + 'b'.repeat(20);
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId });
    const paid = await attempt(encodePayment(payload));
    assert.equal(paid.status, 200);
    const hash = decodeHeader(paid.res.headers.get('payment-response')).transaction as `0x${string}`;
    // Everything the chain publishes: the transaction's calldata.
    const tx = await chain.client.getTransaction({ hash });
    const call = decodeFunctionData({ abi: TRANSFER_ABI, data: tx.input });
    const [from, to, value, validAfter, validBefore, nonce, ...sig] = call.args as unknown as [string, string, bigint, bigint, bigint, string, ...unknown[]];
    // Either overload: one signature, or its v, r and s.
    const signature = sig.length === 1 ? (sig[0] as string) : `${sig[1]}${(sig[2] as string).slice(2)}${(sig[0] as number).toString(16).padStart(2, '0')}`;
    // The public offer (the 402's PAYMENT-REQUIRED) supplies the rest of a v2 payload.
    const offer = decodeHeader((await svc.get('/cve/latest')).headers.get('payment-required'));
    const authorization = { from, to, value: String(value), validAfter: String(validAfter), validBefore: String(validBefore), nonce };
    const rebuilt = { x402Version: 2, resource: offer.resource, accepted: offer.accepts[0], payload: { signature, authorization } };
    const variants: [string, object][] = [
      ['as published', rebuilt],
      ['another resource url', { ...rebuilt, resource: { url: 'https://elsewhere.example/cve/latest' } }],
      ['from in lower case', { ...rebuilt, payload: { signature, authorization: { ...authorization, from: from.toLowerCase() } } }],
      ['with a made-up payment-identifier', { ...rebuilt, extensions: { 'payment-identifier': { info: { required: false, id: 'guess_' + 'c'.repeat(20) } } } }],
    ];
    const moved = await deltas(payer.address, async () => {
      for (const [name, forged] of variants) {
        const r = await attempt(encodePayment(forged as PaymentPayload));
        assert.equal(r.status, 402, name);
        assert.equal(r.body.error.code, 'replay', name);
        assert.equal(r.body.articles, undefined, name);
      }
      const retry = await attempt(encodePayment(payload));
      assert.equal(retry.status, 200, 'the payer, with its payment-identifier, still gets its answer');
      assert.deepEqual(retry.body, paid.body);
    });
    assert.deepEqual(moved, { payer: 0n, payTo: 0n });
  });

  test('without a payment-identifier, a repeat after the settlement was submitted is a replay', async () => {
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey });
    const header = encodePayment(payload);
    const moved = await deltas(payer.address, async () => {
      assert.equal((await attempt(header)).status, 200);
      const again = await attempt(header);
      assert.equal(again.status, 402);
      assert.equal(again.body.error.code, 'replay');
      assert.match(again.body.error.message, /payment-identifier/);
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
  });

  test('50 concurrent copies of one authorization with its payment-identifier: one settlement, the same data for all', async () => {
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: 'copies_' + 'd'.repeat(20) });
    const header = encodePayment(payload);
    const before = await health(svc);
    let answers: Awaited<ReturnType<typeof attempt>>[] = [];
    const moved = await deltas(payer.address, async () => {
      answers = await Promise.all(Array.from({ length: 50 }, () => attempt(header)));
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(50).fill(200),
    );
    const txs = new Set(answers.map((a) => decodeHeader(a.res.headers.get('payment-response')).transaction));
    assert.equal(txs.size, 1);
    const bodies = new Set(answers.map((a) => JSON.stringify(a.body)));
    assert.equal(bodies.size, 1, 'computed once');
    assert.deepEqual(await health(svc), { ...before, settled: before.settled + 1 });
  });

  test('50 concurrent copies without a payment-identifier: one settlement; copies that arrive after it was submitted are replays', async () => {
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey });
    const header = encodePayment(payload);
    let answers: Awaited<ReturnType<typeof attempt>>[] = [];
    const moved = await deltas(payer.address, async () => {
      answers = await Promise.all(Array.from({ length: 50 }, () => attempt(header)));
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
    const ok = answers.filter((a) => a.status === 200);
    assert.ok(ok.length >= 1, 'the first copy is answered');
    for (const a of answers) if (a.status !== 200) assert.deepEqual([a.status, a.body.error.code], [402, 'replay']);
    assert.equal(new Set(ok.map((a) => JSON.stringify(a.body))).size, 1, 'computed once');
  });

  test('payment-identifier: the same id with another payment is a 409; with the same payment, the cached answer', async () => {
    const id = 'pay_' + 'c'.repeat(24);
    const a = encodePayment((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: id })).payload);
    const b = encodePayment((await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: id })).payload);
    const moved = await deltas(payer.address, async () => {
      assert.equal((await attempt(a)).status, 200);
      const conflict = await attempt(b);
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.error.code, 'payment_identifier_conflict');
      assert.equal((await attempt(a)).status, 200);
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
  });
});

describe('both settlers keep the same contract', () => {
  const settlers: [string, () => Settler][] = [
    ['facilitator', () => new FacilitatorSettler(devnet.facilitatorUrl, 10_000, null)],
    ['wallet', () => new WalletSettler(devnet.settler.privateKey, devnet.rpcUrl, 10_000, chain)],
  ];
  for (const [name, make] of settlers) {
    test(`${name}: settles once, reports a used nonce after, and refuses what cannot settle`, async () => {
      const settler = make();
      const payer = devnet.payers[5]!;
      const opts = { signal: AbortSignal.timeout(10_000), uncertain: false };
      const pay = async (o: Partial<Parameters<typeof signPayment>[0]> = {}) => ({
        payload: (await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, ...o })).payload as PaymentPayload,
        requirements: offerFor('5000', devnet.payTo),
      });
      try {
        assert.equal(await settler.check(), null);
        const p = await pay();
        const first = await settler.settle(p, opts);
        assert.equal(first.kind, 'settled');
        assert.equal((await chain.client.getTransactionReceipt({ hash: (first as { tx: `0x${string}` }).tx })).status, 'success');
        assert.equal((await settler.settle(p, opts)).kind, 'used');
        const broke = await settler.settle(await pay({ privateKey: generatePrivateKey() }), opts);
        assert.deepEqual([broke.kind, broke.kind === 'failed' && broke.reason], ['failed', 'insufficient_funds']);
      } finally {
        await settler.close();
      }
    });
  }
});

describe('optimistic mode: when the data leaves, and the cap', () => {
  for (const release of ['written', 'synced'] as const) {
    test(`OPTIMISTIC_RELEASE=${release}: the first call within the cap goes ${release === 'written' ? 'before' : 'after'} the disk sync; the one beyond the cap settles first`, async () => {
      const store = await LocalStore.open(mkdtempSync(join(tmpdir(), 'wires-release-')));
      const { journal } = store;
      // A slow disk: no sync completes until the gate opens.
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const sync = journal.sync.bind(journal);
      journal.sync = () => gate.then(sync);
      const settler = new FacilitatorSettler(devnet.facilitatorUrl, 10_000, null);
      const payments = new Payments({ store, settler, mode: 'optimistic', optimisticMaxUnsettled: 5000n, optimisticRelease: release, settleTimeoutMs: 10_000 });
      const payer = devnet.payers[5]!;
      const signed = await Promise.all([1, 2].map(() => signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })));
      const answered: Outcome[] = [];
      const [first, second] = signed.map(({ payload }, i) =>
        payments
          .authorize({ requestKey: `/cve/latest [${i + 1}]`, requirements: offerFor('5000', devnet.payTo), payload: payload as PaymentPayload, produce: () => Buffer.from(`data ${i + 1}`) })
          .then((o) => (answered.push(o), o)),
      );
      try {
        await new Promise((r) => setTimeout(r, 300));
        if (release === 'written') {
          assert.equal(answered.length, 1, 'only the call within the cap is answered before the sync');
          assert.equal(answered[0]!.kind === 'paid' && answered[0]!.body.toString(), 'data 1');
        } else {
          assert.equal(answered.length, 0, 'nothing leaves before the sync');
        }
        open();
        const [a, b] = [await first!, await second!];
        assert.ok(a.kind === 'paid' && b.kind === 'paid');
        assert.deepEqual((a.settlement as any).extra, { settlement: 'pending', mode: 'optimistic' });
        // The second call found the first one's value unsettled: over the cap, it settled before its data left.
        assert.match((b.settlement as any).transaction, /^0x[0-9a-f]{64}$/);
        assert.equal((b.settlement as any).extra, undefined);
        await until('background settlement', async () => payments.health().settled === 2);
      } finally {
        open();
        await payments.stop();
      }
    });
  }
});

describe('a restart does not make a spent authorization new again', () => {
  test("settled before the restart: the published authorization is a replay, the payer's retry is answered, nothing is charged twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-restart-'));
    const payer = devnet.payers[5]!;
    const paymentId = 'restart_' + 'e'.repeat(20);
    const { payload } = await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId });
    const { extensions: _, ...published } = payload;
    const open = async () => {
      const store = await LocalStore.open(dir);
      const state = store.journalState();
      const payments = new Payments({ store, settler: new FacilitatorSettler(devnet.facilitatorUrl, 10_000, null), mode: 'sync', optimisticMaxUnsettled: 0n, settleTimeoutMs: 10_000 });
      return { payments, state };
    };
    const call = (payments: Payments, p: PaymentPayload, data: string) =>
      payments.authorize({ requestKey: '/cve/latest []', requirements: offerFor('5000', devnet.payTo), payload: p, produce: () => Buffer.from(data) });

    const moved = await deltas(payer.address, async () => {
      const first = await open();
      const paid = await call(first.payments, payload, 'first');
      assert.equal(paid.kind, 'paid');
      await first.payments.stop();

      const second = await open();
      assert.equal(second.state.spent.length, 1);
      const forged = await call(second.payments, published as PaymentPayload, 'forged');
      assert.deepEqual(forged.kind === 'refused' && [forged.status, forged.code], [402, 'replay']);
      const retry = await call(second.payments, payload, 'again');
      assert.equal(retry.kind === 'paid' && retry.body.toString(), 'again', 'the payer gets the data again, computed anew after the restart');
      await second.payments.stop();

      const third = await open();
      assert.equal(third.state.spent.length, 1, 'carried through a second compaction');
      assert.equal(third.state.settled, 1, 'and counted once');
      await third.payments.stop();
    });
    assert.deepEqual(moved, { payer: -5000n, payTo: 5000n });
  });

  test('rotated while serving: the live journal shrinks to what is still valid, and a published authorization stays spent after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wires-rotate-'));
    const payer = devnet.payers[4]!;
    const retention = { rotateBytes: 4096, archiveDays: 90, archiveBytes: 0 };
    const open = async () => {
      const store = await LocalStore.open(dir, retention);
      const state = store.journalState();
      const payments = new Payments({ store, settler: new FacilitatorSettler(devnet.facilitatorUrl, 10_000, null), mode: 'sync', optimisticMaxUnsettled: 0n, settleTimeoutMs: 10_000 });
      return { payments, journal: store.journal, state };
    };
    // Five short-lived authorizations and one valid for five minutes.
    const now = Math.floor(Date.now() / 1000);
    const signed = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, validBefore: now + (i === 1 ? 300 : 20), paymentId: `rotate_${i}_${'r'.repeat(16)}` }),
      ),
    );
    const call = (payments: Payments, p: PaymentPayload, i: number) =>
      payments.authorize({ requestKey: `/cve/latest [${i}]`, requirements: offerFor('5000', devnet.payTo), payload: p, produce: () => Buffer.from(`data ${i}`) });

    const moved = await deltas(payer.address, async () => {
      const first = await open();
      for (const [i, { payload }] of signed.entries()) assert.equal((await call(first.payments, payload as PaymentPayload, i)).kind, 'paid');
      // Memory pressure drops the answers kept for retries: the payer's retry recomputes its data, charged once.
      assert.ok(first.payments.dropRetryBodies() > 0);
      const retry = await call(first.payments, signed[2]!.payload as PaymentPayload, 2);
      assert.equal(retry.kind === 'paid' && retry.body.toString(), 'data 2');
      const grown = first.journal.size();
      assert.ok(grown > retention.rotateBytes, `${grown} bytes`);
      // Half a minute on: the short ones have expired, so only the long one stays in the live file.
      (first.payments as unknown as { sweep(now: number): void }).sweep(Date.now() + 30_000);
      assert.ok(first.journal.size() < grown / 3, `compacted from ${grown} to ${first.journal.size()} bytes`);
      assert.equal(readdirSync(join(dir, 'journal-archive')).length, 1);
      await first.payments.stop();

      const second = await open();
      assert.deepEqual([second.state.settled, second.state.spent.length, second.state.pending.length], [6, 1, 0]);
      const { extensions: _, ...published } = signed[0]!.payload;
      const replay = await call(second.payments, published as PaymentPayload, 0);
      assert.deepEqual(replay.kind === 'refused' && [replay.status, replay.code], [402, 'replay']);
      await second.payments.stop();
    });
    assert.deepEqual(moved, { payer: -30_000n, payTo: 30_000n }, 'six calls, each charged once');
  });
});
