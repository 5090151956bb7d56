/**
 * Every settlement failure the README promises to survive, each against the real devnet
 * (anvil + the real x402 facilitator) and the real service. The only stand-in is a loopback
 * proxy in front of the facilitator that loses or delays its answer to `POST /settle` after
 * the facilitator has settled on chain. Every claim is checked where it lands: balances on
 * chain, transaction receipts, journal lines, `/health`, and what the client receives.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createWalletClient, http, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { baseChain, ChainReader } from '../src/pay/chain.js';
import { USDC_BASE } from '../src/pay/offer.js';
import { MAX_PAYMENT_HEADER } from '../src/pay/payment-header.js';
import { decodeHeader, encodePayment, signPayment } from './helpers/payments.js';
import { startTestService, type TestService } from './helpers/service.js';

/** A paid route without required parameters, and its price in USDC atomic units. */
const PATH = '/cve/latest';
const PRICE = 5000n;

let devnet: Devnet;
let chain: ChainReader;
const cleanups: (() => Promise<unknown>)[] = [];

before(async () => {
  // payers 0–2: one per single-payer test; 3–12: the concurrent wallet test; 13: the header cap; 14: funds others.
  devnet = await startDevnet({ payers: 15 });
  chain = new ChainReader(devnet.rpcUrl, 10_000);
});

after(async () => {
  // Services first (they may still be talking to a proxy), then proxies, then the chain.
  for (const stop of cleanups.reverse()) await stop().catch((err) => console.error('cleanup failed', err));
  await devnet?.stop();
});

// ---------------------------------------------------------------------------------------
// Helpers

async function service(env: Record<string, string>): Promise<{ svc: TestService; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wires-settle-fail-'));
  const svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, DATA_DIR: dataDir, ...env });
  cleanups.push(() => svc.stop());
  return { svc, dataDir };
}

interface Settlement {
  mode: string;
  settler: string;
  pending: number;
  settled: number;
  failed: number;
}

async function settlement(svc: TestService): Promise<Settlement> {
  return ((await (await svc.get('/health')).json()) as any).x402.settlement;
}

/** Polls `fn` every 100 ms until it returns something truthy; fails after `ms`. */
async function until<T>(what: string, fn: () => Promise<T | undefined | false | null>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const balance = (address: string) => chain.balanceOf(address);

interface Paid {
  status: number;
  bytes: Buffer;
  body: any;
  settlement: any;
  res: Response;
}

async function pay(svc: TestService, header: string, path = PATH): Promise<Paid> {
  const res = await svc.get(path, { headers: { 'PAYMENT-SIGNATURE': header } });
  const bytes = Buffer.from(await res.arrayBuffer());
  const response = res.headers.get('payment-response');
  return { status: res.status, bytes, body: JSON.parse(bytes.toString('utf8')), settlement: response ? decodeHeader(response) : null, res };
}

const paymentId = (tag: string) => `${tag}_${randomBytes(12).toString('hex')}`;
const journalId = (from: string, nonce: string) => `${from.toLowerCase()}:${nonce.toLowerCase()}`;

function journalLines(dataDir: string): any[] {
  const file = join(dataDir, 'journal', 'payments.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const MINT_ABI = parseAbi(['function mint(address to, uint256 value)']);

/** DevUSDC's mint is open: the funder account (it has ETH for gas) mints to anyone. */
async function mint(to: `0x${string}`, value: bigint): Promise<void> {
  const funder = devnet.payers[14]!;
  const wallet = createWalletClient({ account: privateKeyToAccount(funder.privateKey), chain: baseChain(devnet.rpcUrl), transport: http(devnet.rpcUrl) });
  const hash = await wallet.writeContract({ address: USDC_BASE, abi: MINT_ABI, functionName: 'mint', args: [to, value] });
  assert.equal((await chain.client.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status, 'success');
}

/**
 * A loopback proxy in front of the facilitator. Everything is forwarded; the first
 * `POST /settle` of each authorization is forwarded too, the facilitator settles, and then its
 * answer is lost (`drop`: the client's socket is destroyed) or held back for `holdMs`
 * (`hold`). Later `/settle` calls for the same authorization (background retries) pass.
 */
interface SettleProxy {
  url: string;
  /** The facilitator's answers that the client never got (in time). */
  intercepted: { nonce: string; status: number; body: any }[];
  /** /settle requests seen, per nonce. */
  settles: Map<string, number>;
  /** Held answers written back after the hold. */
  released: number;
  close(): Promise<void>;
}

async function startSettleProxy(target: string, misbehave: { kind: 'drop' } | { kind: 'hold'; holdMs: number }): Promise<SettleProxy> {
  const upstream = new URL(target);
  const timers = new Set<NodeJS.Timeout>();
  const proxy: SettleProxy = {
    url: '',
    intercepted: [],
    settles: new Map(),
    released: 0,
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const forward = (req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host, connection: 'close' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });

  const server: Server = createServer((req, res) => {
    res.on('error', () => {});
    req.socket.on('error', () => {});
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      let answer: Awaited<ReturnType<typeof forward>>;
      try {
        answer = await forward(req, body);
      } catch {
        res.socket?.destroy();
        return;
      }
      const send = () => {
        if (res.destroyed || res.socket?.destroyed) return;
        const headers = { ...answer.headers };
        delete headers['transfer-encoding'];
        delete headers.connection;
        res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) });
        res.end(answer.body);
      };
      let nonce = '';
      if (req.method === 'POST' && req.url === '/settle') {
        try {
          nonce = String(JSON.parse(body.toString('utf8')).paymentPayload.payload.authorization.nonce).toLowerCase();
        } catch {
          /* not a settle request this proxy understands: forward as is */
        }
      }
      const seen = nonce ? (proxy.settles.get(nonce) ?? 0) : -1;
      if (nonce) proxy.settles.set(nonce, seen + 1);
      if (seen !== 0) return send();
      let parsed: any = null;
      try {
        parsed = JSON.parse(answer.body.toString('utf8'));
      } catch {
        /* recorded as null */
      }
      proxy.intercepted.push({ nonce, status: answer.status, body: parsed });
      if (misbehave.kind === 'drop') {
        // The facilitator has settled; the client never hears of it.
        req.socket.destroy();
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        proxy.released++;
        send();
      }, misbehave.holdMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => proxy.close());
  return proxy;
}

// ---------------------------------------------------------------------------------------
// 1, 2: the facilitator settles but its answer is lost or late (sync mode)

const lostAnswerCases: { name: string; proxy: { kind: 'drop' } | { kind: 'hold'; holdMs: number }; env: Record<string, string>; payer: number }[] = [
  {
    name: "the facilitator's answer to /settle is lost (connection destroyed after it settled)",
    proxy: { kind: 'drop' },
    env: {},
    payer: 0,
  },
  {
    name: "the facilitator's answer to /settle comes after SETTLE_TIMEOUT_SEC (1 s; held 4 s)",
    proxy: { kind: 'hold', holdMs: 4000 },
    env: { SETTLE_TIMEOUT_SEC: '1' },
    payer: 1,
  },
];

describe('sync mode: a settlement whose outcome is unknown releases the data and charges once', () => {
  for (const c of lostAnswerCases) {
    test(c.name, async () => {
      const proxy = await startSettleProxy(devnet.facilitatorUrl, c.proxy);
      const { svc, dataDir } = await service({ FACILITATOR_URL: proxy.url, ...c.env });
      assert.equal((await settlement(svc)).mode, 'sync');
      const payer = devnet.payers[c.payer]!;
      const [payer0, payTo0] = [await balance(payer.address), await balance(devnet.payTo)];
      const h0 = await settlement(svc);

      const { payload } = await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: payer.privateKey, paymentId: paymentId('lost') });
      const header = encodePayment(payload);
      const nonce = payload.payload.authorization.nonce.toLowerCase();

      const first = await pay(svc, header);
      // The client is answered before the held answer is even written back.
      const releasedWhenAnswered = proxy.released;
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.ok(first.body.count > 0 && Array.isArray(first.body.articles), 'the data is released');
      assert.equal(first.res.headers.get('cache-control'), 'private, no-store');
      assert.equal(first.settlement.success, true);
      assert.equal(first.settlement.payer.toLowerCase(), payer.address.toLowerCase());
      assert.equal(first.settlement.extra?.settlement, 'pending', 'the outcome is unknown: released as pending');
      if (c.proxy.kind === 'hold') assert.equal(releasedWhenAnswered, 0, 'the service did not wait for the late answer');

      // The facilitator did settle on chain, and that answer never reached the service.
      assert.equal(proxy.intercepted.length, 1);
      const lost = proxy.intercepted[0]!;
      assert.equal(lost.nonce, nonce);
      assert.equal(lost.status, 200);
      assert.equal(lost.body?.success, true, JSON.stringify(lost.body));
      const receipt = await chain.client.getTransactionReceipt({ hash: lost.body.transaction });
      assert.equal(receipt.status, 'success');

      // The background retry resolves it: settled, nothing pending.
      const h1 = await until('the settlement to be resolved', async () => {
        const h = await settlement(svc);
        return h.pending === 0 && h.settled === h0.settled + 1 && h;
      });
      assert.equal(h1.failed, h0.failed, 'not counted as a failure');
      assert.ok((proxy.settles.get(nonce) ?? 0) >= 2, 'the service asked again');

      // Charged exactly once.
      assert.equal((await balance(payer.address)) - payer0, -PRICE);
      assert.equal((await balance(devnet.payTo)) - payTo0, PRICE);
      assert.equal(await chain.authorizationUsed(payer.address, nonce), true);

      // The journal agrees: accepted once, one outcome, settled.
      const id = journalId(payer.address, nonce);
      const lines = await until('the settled record in the journal', async () => {
        const l = journalLines(dataDir).filter((r) => r.id === id);
        return l.some((r) => r.t === 'settled') && l;
      });
      assert.equal(lines.filter((r) => r.t === 'accepted').length, 1);
      assert.deepEqual(
        lines.filter((r) => r.t === 'settled' || r.t === 'failed').map((r) => r.t),
        ['settled'],
      );

      // The client retries with the same header (same payment-identifier id): the same answer, free.
      const retry = await pay(svc, header);
      assert.equal(retry.status, 200, JSON.stringify(retry.body));
      assert.ok(retry.bytes.equals(first.bytes), 'the same body bytes');
      assert.equal(retry.settlement.success, true);
      assert.equal(retry.settlement.extra, undefined, 'now settled');
      assert.equal((await balance(payer.address)) - payer0, -PRICE, 'the retry charged nothing');
      assert.equal((await balance(devnet.payTo)) - payTo0, PRICE);
      assert.deepEqual(await settlement(svc), h1, 'the retry is no new payment');

      // The settlement published the authorization; a copy without the payer's id gets nothing.
      const { extensions: _id, ...bare } = payload;
      const copy = await pay(svc, encodePayment(bare));
      assert.equal(copy.status, 402, JSON.stringify(copy.body));
      assert.equal(copy.body.error.code, 'replay');
      assert.equal(copy.body.articles, undefined);
      assert.equal((await balance(payer.address)) - payer0, -PRICE);
    });
  }
});

// ---------------------------------------------------------------------------------------
// 3: optimistic mode, a payer without funds

describe('optimistic mode', () => {
  test('a payer without funds gets the data; the settlement fails, is counted, and the journal keeps both records', async () => {
    const { svc, dataDir } = await service({ FACILITATOR_URL: devnet.facilitatorUrl, SETTLEMENT: 'optimistic' });
    const brokeKey = generatePrivateKey();
    const broke = privateKeyToAccount(brokeKey);
    assert.equal(await balance(broke.address), 0n);
    const payTo0 = await balance(devnet.payTo);
    const h0 = await settlement(svc);
    assert.equal(h0.mode, 'optimistic');

    const { payload } = await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: brokeKey });
    const got = await pay(svc, encodePayment(payload));
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.ok(got.body.count > 0 && Array.isArray(got.body.articles), 'the data is delivered');
    assert.deepEqual(got.settlement.extra, { settlement: 'pending', mode: 'optimistic' });

    const h1 = await until('the failed settlement to be counted', async () => {
      const h = await settlement(svc);
      return h.failed === h0.failed + 1 && h.pending === 0 && h;
    });
    assert.equal(h1.settled, h0.settled);

    const id = journalId(broke.address, payload.payload.authorization.nonce);
    const lines = await until('the failure record in the journal', async () => {
      const l = journalLines(dataDir).filter((r) => r.id === id);
      return l.some((r) => r.t === 'failed') && l;
    });
    const accepted = lines.filter((r) => r.t === 'accepted');
    assert.equal(accepted.length, 1, 'the accepted record is kept');
    assert.equal(accepted[0].mode, 'optimistic');
    assert.equal(accepted[0].payer.toLowerCase(), broke.address.toLowerCase());
    assert.equal(accepted[0].payload.payload.authorization.nonce, payload.payload.authorization.nonce, 'the whole authorization is kept');
    assert.equal(accepted[0].payload.payload.signature, payload.payload.signature);
    const outcomes = lines.filter((r) => r.t === 'settled' || r.t === 'failed');
    assert.deepEqual(
      outcomes.map((r) => [r.t, r.reason]),
      [['failed', 'insufficient_funds']],
    );
    assert.ok(lines.indexOf(accepted[0]) < lines.indexOf(outcomes[0]), 'the failure follows the acceptance');

    assert.equal(await balance(broke.address), 0n);
    assert.equal((await balance(devnet.payTo)) - payTo0, 0n, 'nothing was moved');
    assert.equal(await chain.authorizationUsed(broke.address, payload.payload.authorization.nonce), false);
  });

  // -------------------------------------------------------------------------------------
  // 4: optimistic mode with balance checks through BASE_RPC_URL

  test('with BASE_RPC_URL: a funded payer under the cap is released before settlement; a payer whose known balance is short settles first', async () => {
    const { svc } = await service({ FACILITATOR_URL: devnet.facilitatorUrl, SETTLEMENT: 'optimistic', BASE_RPC_URL: devnet.rpcUrl });
    const h0 = await settlement(svc);
    assert.equal(h0.mode, 'optimistic');

    // A funded payer: the first call (balance not yet known) and a second (balance known,
    // 100 USDC) are both released at once, settlement pending.
    const rich = devnet.payers[2]!;
    const [rich0, payTo0] = [await balance(rich.address), await balance(devnet.payTo)];
    for (let i = 0; i < 2; i++) {
      const { payload } = await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: rich.privateKey });
      const got = await pay(svc, encodePayment(payload));
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.ok(got.body.count > 0);
      assert.deepEqual(got.settlement.extra, { settlement: 'pending', mode: 'optimistic' }, `call ${i + 1}`);
      assert.equal(got.settlement.transaction, '');
    }
    await until('both optimistic settlements', async () => {
      const h = await settlement(svc);
      return h.settled === h0.settled + 2 && h.pending === 0;
    });
    assert.equal((await balance(rich.address)) - rich0, -2n * PRICE);
    assert.equal((await balance(devnet.payTo)) - payTo0, 2n * PRICE);

    // A payer holding less than the price (1000 < 5000).
    const poorKey = generatePrivateKey();
    const poor = privateKeyToAccount(poorKey);
    await mint(poor.address, 1000n);
    const payTo1 = await balance(devnet.payTo);
    const h1 = await settlement(svc);

    // First call: the balance is unknown, the cap bounds the risk: released, pending.
    const call1 = (await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: poorKey })).payload;
    const first = await pay(svc, encodePayment(call1));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.settlement.extra, { settlement: 'pending', mode: 'optimistic' });
    // Its background settlement fails for the balance (the operator's bounded risk).
    await until('the first call to fail to settle', async () => {
      const h = await settlement(svc);
      return h.failed === h1.failed + 1 && h.pending === 0;
    });

    // Second call: the balance read at the first call (1000) is known and short: it settles
    // before any data leaves, which here means a 402 and no data.
    const call2 = (await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: poorKey })).payload;
    const second = await pay(svc, encodePayment(call2));
    assert.equal(second.status, 402, JSON.stringify(second.body));
    assert.equal(second.body.error.code, 'insufficient_funds');
    assert.equal(second.body.articles, undefined, 'no data');
    assert.equal(second.settlement.success, false);
    assert.equal(second.settlement.errorReason, 'insufficient_funds');
    assert.equal(second.settlement.extra, undefined, 'not pending: it was settled synchronously');
    assert.equal(await balance(poor.address), 1000n);
    assert.equal((await balance(devnet.payTo)) - payTo1, 0n);

    // Topped up since, but the cached balance (1000) is still short of the price: the next
    // call settles synchronously too, and succeeds: data with a mined transaction, not "pending".
    await mint(poor.address, 20_000n);
    const call3 = (await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: poorKey })).payload;
    const third = await pay(svc, encodePayment(call3));
    assert.equal(third.status, 200, JSON.stringify(third.body));
    assert.ok(third.body.count > 0);
    assert.equal(third.settlement.success, true);
    assert.equal(third.settlement.extra, undefined, 'settled before release');
    assert.match(third.settlement.transaction, /^0x[0-9a-f]{64}$/);
    assert.equal((await chain.client.getTransactionReceipt({ hash: third.settlement.transaction })).status, 'success');
    assert.equal(await balance(poor.address), 21_000n - PRICE);
    assert.equal((await balance(devnet.payTo)) - payTo1, PRICE);
    const h2 = await settlement(svc);
    assert.deepEqual([h2.settled, h2.failed, h2.pending], [h1.settled + 1, h1.failed + 2, 0]);
  });
});

// ---------------------------------------------------------------------------------------
// 5: the wallet settler under concurrency

describe('wallet settler', () => {
  test('ten distinct payments at once: all 200, ten successful transactions from the settler with consecutive nonces, exact balances', async () => {
    const { svc } = await service({ FACILITATOR_URL: '', SETTLER_PRIVATE_KEY: devnet.settler.privateKey, BASE_RPC_URL: devnet.rpcUrl });
    const h0 = await settlement(svc);
    assert.deepEqual([h0.mode, h0.settler], ['sync', 'wallet']);
    const payers = devnet.payers.slice(3, 13);
    assert.equal(payers.length, 10);
    const before = await Promise.all(payers.map((p) => balance(p.address)));
    const payTo0 = await balance(devnet.payTo);

    const headers = await Promise.all(payers.map(async (p) => encodePayment((await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: p.privateKey })).payload)));
    const answers = await Promise.all(headers.map((h) => pay(svc, h)));

    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
      JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body)),
    );
    const txs = answers.map((a) => a.settlement.transaction as `0x${string}`);
    for (const a of answers) {
      assert.equal(a.settlement.success, true);
      assert.equal(a.settlement.extra, undefined, 'sync: settled before release');
      assert.ok(a.body.count > 0);
    }
    assert.equal(new Set(txs).size, 10, 'one transaction per payment');
    const nonces: number[] = [];
    for (const [i, hash] of txs.entries()) {
      const receipt = await chain.client.getTransactionReceipt({ hash });
      assert.equal(receipt.status, 'success', hash);
      assert.equal(receipt.from.toLowerCase(), devnet.settler.address.toLowerCase(), 'sent by the settler wallet');
      assert.equal(receipt.to?.toLowerCase(), USDC_BASE.toLowerCase());
      nonces.push((await chain.client.getTransaction({ hash })).nonce);
      assert.equal(answers[i]!.settlement.payer.toLowerCase(), payers[i]!.address.toLowerCase());
    }
    // One transaction at a time: account nonces neither collide nor leave gaps.
    nonces.sort((a, b) => a - b);
    assert.deepEqual(
      nonces,
      nonces.map((_, i) => nonces[0]! + i),
    );

    const afterBalances = await Promise.all(payers.map((p) => balance(p.address)));
    afterBalances.forEach((b, i) => assert.equal(b - before[i]!, -PRICE, payers[i]!.address));
    assert.equal((await balance(devnet.payTo)) - payTo0, 10n * PRICE);
    const h1 = await settlement(svc);
    assert.deepEqual([h1.settled, h1.failed, h1.pending], [h0.settled + 10, h0.failed, 0]);
  });
});

// ---------------------------------------------------------------------------------------
// 6: MCP protocol negotiation

describe('MCP initialize negotiates the protocol version', () => {
  let svc: TestService;
  before(async () => {
    svc = (await service({ FACILITATOR_URL: devnet.facilitatorUrl })).svc;
  });

  async function rpc(body: unknown): Promise<{ status: number; json: any; res: Response }> {
    const res = await fetch(`${svc.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null, res };
  }

  const initialize = (id: number, protocolVersion: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-test', version: '0.0.0' } },
  });

  for (const version of ['2025-06-18', '2025-03-26', '2024-11-05']) {
    test(`${version} is answered with ${version}`, async () => {
      const { status, json, res } = await rpc(initialize(7, version));
      assert.equal(status, 200);
      assert.equal(json.jsonrpc, '2.0');
      assert.equal(json.id, 7);
      assert.equal(json.error, undefined);
      assert.equal(json.result.protocolVersion, version);
      assert.equal(json.result.serverInfo.name, 'wires');
      assert.deepEqual(json.result.capabilities.tools, { listChanged: false });
      assert.equal(res.headers.get('mcp-session-id'), null, 'stateless: no session');
    });
  }

  test('an unknown version is answered with the latest supported one (2025-06-18)', async () => {
    // MCP lifecycle: a server that does not support the requested version responds with
    // another one it supports, which SHOULD be its latest.
    for (const version of ['2099-01-01', '2024-01-01', 'not-a-version']) {
      const { status, json } = await rpc(initialize(8, version));
      assert.equal(status, 200);
      assert.equal(json.result.protocolVersion, '2025-06-18', version);
    }
  });
});

// ---------------------------------------------------------------------------------------
// 7: the 8 KiB cap on the payment header

describe('the payment header cap', () => {
  let svc: TestService;
  before(async () => {
    svc = (await service({ FACILITATOR_URL: devnet.facilitatorUrl })).svc;
  });

  /** A valid payment with an extra extension padded so that its header is exactly `length` characters. */
  async function padded(length: number, payload?: any): Promise<{ header: string; payload: any }> {
    const payer = devnet.payers[13]!;
    payload ??= (await signPayment({ amount: String(PRICE), payTo: devnet.payTo, privateKey: payer.privateKey })).payload;
    const withPad = (n: number) => ({ ...payload, extensions: { ...(payload.extensions ?? {}), padding: { info: 'x'.repeat(n) } } });
    const base = Buffer.byteLength(JSON.stringify(withPad(0)));
    // Base64 turns each 3 bytes into 4 characters: a multiple of 4 characters is 3/4 as many bytes.
    assert.equal(length % 4, 0);
    const bytes = (length / 4) * 3;
    const header = encodePayment(withPad(bytes - base));
    assert.equal(header.length, length, `padded header is ${header.length} characters, wanted ${length}`);
    return { header, payload };
  }

  test(`a valid payment whose header is exactly ${MAX_PAYMENT_HEADER} characters is accepted and paid`, async () => {
    assert.equal(MAX_PAYMENT_HEADER, 8192);
    const payer = devnet.payers[13]!;
    const [payer0, payTo0] = [await balance(payer.address), await balance(devnet.payTo)];
    const { header } = await padded(MAX_PAYMENT_HEADER);
    const got = await pay(svc, header);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.ok(got.body.count > 0);
    assert.equal(got.settlement.success, true);
    assert.equal((await chain.client.getTransactionReceipt({ hash: got.settlement.transaction })).status, 'success');
    assert.equal((await balance(payer.address)) - payer0, -PRICE);
    assert.equal((await balance(devnet.payTo)) - payTo0, PRICE);
  });

  test('just under the cap is accepted too', async () => {
    const { header } = await padded(MAX_PAYMENT_HEADER - 4);
    const got = await pay(svc, header);
    assert.equal(got.status, 200, JSON.stringify(got.body));
  });

  test('the same valid payment just over the cap is 400 invalid_payment naming the cap; without the padding it pays', async () => {
    const payer = devnet.payers[13]!;
    const [payer0, payTo0] = [await balance(payer.address), await balance(devnet.payTo)];
    const h0 = await settlement(svc);
    const { header, payload } = await padded(MAX_PAYMENT_HEADER + 4);
    const over = await pay(svc, header);
    assert.equal(over.status, 400, JSON.stringify(over.body));
    assert.equal(over.body.error.code, 'invalid_payment');
    assert.match(over.body.error.message, new RegExp(String(MAX_PAYMENT_HEADER)));
    assert.equal(over.body.articles, undefined);
    assert.deepEqual(await settlement(svc), h0, 'nothing was accepted');
    assert.equal((await balance(payer.address)) - payer0, 0n);
    assert.equal(await chain.authorizationUsed(payer.address, payload.payload.authorization.nonce), false);

    // The refusal was for the size alone: the same authorization at the cap pays.
    const { header: atCap } = await padded(MAX_PAYMENT_HEADER, payload);
    const ok = await pay(svc, atCap);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await balance(payer.address)) - payer0, -PRICE);
    assert.equal((await balance(devnet.payTo)) - payTo0, PRICE);
  });
});
