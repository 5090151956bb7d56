/**
 * Every x402 client people install pays this service unchanged, on the local Base (anvil, chain
 * id 8453, the real x402 facilitator), each driven the way its README shows and each with its
 * own payer: x402 v1 (x402-fetch, x402-axios, x402-mcp), x402 v2 (@x402/fetch, @x402/axios,
 * @faremeter/fetch, the official MCP SDK client with @x402/core). What a user notices is checked:
 * 200 with the envelope, a settlement response naming a transaction that succeeded on chain, and
 * the payer down by exactly the price, payTo up by exactly the price.
 *
 * Then the versions are crossed: one authorization is one payment, whichever version carries
 * it. A settled authorization re-sent in the other version's wrapping is a replay (it carries no
 * payment-identifier), and moves no money.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { wrapAxiosWithPayment, wrapAxiosWithPaymentFromConfig, x402Client as AxiosX402Client, decodePaymentResponseHeader as decodeAxiosV2 } from '@x402/axios';
import type { ClientExtension } from '@x402/core/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { wrapFetchWithPayment as wrapFetchV2, decodePaymentResponseHeader } from '@x402/fetch';
import { wrap as faremeterWrap } from '@faremeter/fetch';
import { exact as faremeterExact } from '@faremeter/payment-evm';
import { createLocalWallet } from '@faremeter/wallet-evm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import axios from 'axios';
import { createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { base } from 'viem/chains';
import { withPaymentInterceptor, decodeXPaymentResponse as decodeAxiosV1 } from 'x402-axios';
import { wrapFetchWithPayment as wrapFetchV1, decodeXPaymentResponse } from 'x402-fetch';
import { withPayment } from 'x402-mcp';
import { startDevnet, type Account, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { experimental_createMCPClient as createMCPClient } from '@ai-sdk/mcp';
import { decodeHeader, encodePayment, signPayment } from './helpers/payments.js';
import { startTestService, type TestService } from './helpers/service.js';

/** Bound on any one network wait (a call, a payment round trip, a chain read). */
const WAIT_MS = 20_000;
const TEST = { timeout: 60_000 };
const CVE = '/cve/latest?src=cisa';
const CVE_PRICE = 5_000n;
const EDGAR = '/edgar/filings?form=8-k';
const EDGAR_PRICE = 10_000n;

let devnet: Devnet;
let svc: TestService;
let chain: ChainReader;

before(
  async () => {
    devnet = await startDevnet({ payers: 8 });
    chain = new ChainReader(devnet.rpcUrl, 10_000);
    // Sync settlement through the devnet's facilitator (the default mode).
    svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
  },
  { timeout: 60_000 },
);

after(async () => {
  await svc?.stop();
  await devnet?.stop();
});

const payer = (i: number): Account => devnet.payers[i]!;
const balance = (a: string) => chain.balanceOf(a);
const signal = () => AbortSignal.timeout(WAIT_MS);

/**
 * A viem wallet client on "Base" (chain id 8453) whose transport is the devnet, as the v1
 * READMEs build it. (Their TypeScript signature wants a wallet extended with publicActions,
 * x402's `SignerWallet`; the README's plain wallet client works at run time, hence the casts.)
 */
function walletFor(p: Account) {
  return createWalletClient({ account: privateKeyToAccount(p.privateKey), transport: http(devnet.rpcUrl, { timeout: WAIT_MS }), chain: base });
}

interface Seen {
  status: number;
  body: any;
  /** The decoded settlement response (header, or MCP `_meta`). */
  settlement: any;
}

/** Runs a paid call and checks what the user notices, on the chain included. */
async function paysOnce(t: TestContext, p: Account, price: bigint, call: () => Promise<Seen>): Promise<Seen> {
  const [p0, t0] = [await balance(p.address), await balance(devnet.payTo)];
  const started = performance.now();
  const seen = await call();
  t.diagnostic(`paid call ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(seen.status, 200, JSON.stringify(seen.body));
  assert.ok(Array.isArray(seen.body.articles), 'the JSON envelope with `articles`');
  assert.equal(seen.settlement.success, true, JSON.stringify(seen.settlement));
  assert.match(seen.settlement.transaction, /^0x[0-9a-fA-F]{64}$/);
  if (seen.settlement.payer) assert.equal(seen.settlement.payer.toLowerCase(), p.address.toLowerCase());
  const receipt = await chain.client.getTransactionReceipt({ hash: seen.settlement.transaction });
  assert.equal(receipt.status, 'success');
  assert.equal((await balance(p.address)) - p0, -price, 'the payer paid exactly the price');
  assert.equal((await balance(devnet.payTo)) - t0, price, 'payTo received exactly the price');
  return seen;
}

describe('x402 v1 clients', () => {
  test('x402-fetch 1.x: wrapFetchWithPayment(fetch, walletClient); answer in X-PAYMENT-RESPONSE', TEST, async (t) => {
    const p = payer(0);
    const pay = wrapFetchV1(fetch, walletFor(p) as never);
    const seen = await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await pay(svc.base + CVE, { signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodeXPaymentResponse(res.headers.get('x-payment-response')!) };
    });
    assert.equal(seen.settlement.network, 'base');
  });

  test('x402-axios 0.7: withPaymentInterceptor(axios.create({ baseURL }), walletClient)', TEST, async (t) => {
    const p = payer(1);
    const api = withPaymentInterceptor(axios.create({ baseURL: svc.base, timeout: WAIT_MS }), walletFor(p) as never);
    const seen = await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await api.get(CVE);
      return { status: res.status, body: res.data, settlement: decodeAxiosV1(res.headers['x-payment-response']) };
    });
    assert.equal(seen.settlement.network, 'base');
  });

  test('x402-mcp 0.0.5: withPayment(AI SDK MCP client over Streamable HTTP), the agent pays with generatePaymentAuthorization', TEST, async (t) => {
    const p = payer(5);
    // The AI SDK's MCP client (in `ai` 5 it was `experimental_createMCPClient` of `ai`; in 6, of @ai-sdk/mcp).
    const mcp = await createMCPClient({ transport: new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`)), name: 'x402-mcp-test' });
    try {
      const client = await withPayment(mcp as never, { account: privateKeyToAccount(p.privateKey), network: 'base' });
      const tools = (await (client as any).tools()) as Record<string, { execute: (args: any, options?: any) => Promise<any> }>;
      const cve = tools.cve_latest!;
      const args = { src: 'cisa' };
      const options = { toolCallId: 'call-1', messages: [], abortSignal: signal() };
      // The agent calls the tool, learns it costs money, and reads the requirements.
      const p0 = await balance(p.address);
      const unpaid = await cve.execute(args, options);
      assert.equal(unpaid.isError, true);
      const v1 = (unpaid.content as { type: string; text: string }[])
        .filter((c) => c.type === 'text')
        .map((c) => {
          try {
            return JSON.parse(c.text);
          } catch {
            return null;
          }
        })
        .find((j) => j?.accepts?.[0]?.maxAmountRequired);
      assert.ok(v1, 'a text with v1 accepts[].maxAmountRequired');
      const paymentRequirements = v1.accepts[0];
      assert.equal(paymentRequirements.network, 'base');
      assert.equal(paymentRequirements.maxAmountRequired, String(CVE_PRICE));
      assert.equal(await balance(p.address), p0, 'asking costs nothing');
      // It has the wallet tool sign, and calls again with the authorization.
      const { paymentAuthorization } = await tools.generatePaymentAuthorization!.execute({ paymentRequirements }, options);
      assert.equal(typeof paymentAuthorization, 'string');
      const seen = await paysOnce(t, p, CVE_PRICE, async () => {
        const paid = await cve.execute({ ...args, paymentAuthorization }, { ...options, toolCallId: 'call-2' });
        const body = paid.isError ? paid : JSON.parse(paid.content[0].text);
        return { status: paid.isError ? 402 : 200, body, settlement: paid._meta?.['x402.payment-response'] };
      });
      assert.equal(seen.settlement.network, 'base');
    } finally {
      await mcp.close();
    }
  });
});

describe('x402 v2 clients', () => {
  test('@x402/fetch: wrapFetchWithPayment(fetch, x402Client + ExactEvmScheme); answer in PAYMENT-RESPONSE', TEST, async (t) => {
    const p = payer(2);
    const client = new x402Client().register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(p.privateKey)));
    const pay = wrapFetchV2(fetch, client);
    const seen = await paysOnce(t, p, EDGAR_PRICE, async () => {
      const res = await pay(svc.base + EDGAR, { signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodePaymentResponseHeader(res.headers.get('payment-response')!) };
    });
    assert.equal(seen.settlement.network, 'eip155:8453');
  });

  test('@x402/axios 2.x: wrapAxiosWithPaymentFromConfig(axios.create(), { schemes: [ExactEvmScheme] })', TEST, async (t) => {
    const p = payer(3);
    const api = wrapAxiosWithPaymentFromConfig(axios.create({ timeout: WAIT_MS }), {
      schemes: [{ network: 'eip155:*', client: new ExactEvmScheme(privateKeyToAccount(p.privateKey)) }],
    });
    const seen = await paysOnce(t, p, EDGAR_PRICE, async () => {
      const res = await api.get(svc.base + EDGAR);
      return { status: res.status, body: res.data, settlement: decodeAxiosV2(res.headers['payment-response']) };
    });
    assert.equal(seen.settlement.network, 'eip155:8453');
  });

  test('@faremeter/fetch 0.22: wrap(fetch, { handlers: [exact.createPaymentHandler(createLocalWallet(base, key))] })', TEST, async (t) => {
    const p = payer(4);
    // The wallet's chain is what faremeter matches offers with: id 8453 → eip155:8453 and Base's USDC.
    const wallet = await createLocalWallet(base, p.privateKey);
    const pay = faremeterWrap(fetch, { handlers: [faremeterExact.createPaymentHandler(wallet)], retryCount: 0 });
    const seen = await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await pay(svc.base + CVE, { signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodeHeader(res.headers.get('payment-response')) };
    });
    assert.equal(seen.settlement.network, 'eip155:8453');
  });

  test('the official MCP SDK client + @x402/core: PaymentRequired from structuredContent, payment in _meta["x402/payment"]', TEST, async (t) => {
    const p = payer(6);
    const client = new Client({ name: 'x402-core-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`)), { timeout: WAIT_MS });
    try {
      const x402 = new x402Client().register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(p.privateKey)));
      const args = { form: '8-k' };
      const unpaid = await client.callTool({ name: 'edgar_filings', arguments: args }, undefined, { timeout: WAIT_MS });
      assert.equal(unpaid.isError, true);
      const paymentRequired = unpaid.structuredContent as unknown as PaymentRequired;
      assert.equal(paymentRequired.x402Version, 2);
      const payment = await x402.createPaymentPayload(paymentRequired);
      const seen = await paysOnce(t, p, EDGAR_PRICE, async () => {
        const paid = await client.callTool({ name: 'edgar_filings', arguments: args, _meta: { 'x402/payment': payment } }, undefined, { timeout: WAIT_MS });
        const content = paid.content as { type: string; text: string }[];
        return { status: paid.isError ? 402 : 200, body: paid.isError ? paid : JSON.parse(content[0]!.text), settlement: (paid._meta as any)?.['x402/payment-response'] };
      });
      assert.equal(seen.settlement.network, 'eip155:8453');
    } finally {
      await client.close();
    }
  });
});

describe('one authorization is one payment, whichever version carries it', () => {
  /**
   * A 402 `replay` refusal for the given reason, with a failed settlement response under the
   * name the carrying version reads, and the payer's balance not moved by it.
   */
  async function refusedAsReplay(p: Account, path: string, version: 1 | 2, payment: string, reason: RegExp): Promise<void> {
    const before = await balance(p.address);
    const res = await svc.get(path, { headers: { [version === 1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE']: payment }, signal: signal() });
    const body = (await res.json()) as any;
    assert.equal(res.status, 402, JSON.stringify(body));
    assert.equal(body.error.code, 'replay', JSON.stringify(body.error));
    assert.match(body.error.message, reason);
    const settlement = decodeHeader(res.headers.get(version === 1 ? 'x-payment-response' : 'payment-response'));
    assert.deepEqual(settlement, { success: false, errorReason: 'replay', transaction: '', network: version === 1 ? 'base' : 'eip155:8453' });
    assert.equal(await balance(p.address), before, 'not charged again');
  }
  const SUBMITTED = /already submitted for settlement/;
  const ELSEWHERE = /already paid for another request/;

  test('(a) signed by x402-fetch (v1), re-sent wrapped as v2 in PAYMENT-SIGNATURE: 402 replay', TEST, async (t) => {
    const p = payer(7);
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const h = new Headers(init?.headers as HeadersInit | undefined);
      if (h.has('x-payment')) sent.push(h.get('x-payment')!);
      return fetch(input, init);
    };
    const pay = wrapFetchV1(recording, walletFor(p) as never);
    await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await pay(svc.base + CVE, { signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodeXPaymentResponse(res.headers.get('x-payment-response')!) };
    });
    assert.equal(sent.length, 1);
    const v1 = decodeHeader(sent[0]!);
    assert.equal(v1.x402Version, 1);
    const offer = await svc.get(CVE, { signal: signal() });
    assert.equal(offer.status, 402);
    const accepted = decodeHeader(offer.headers.get('payment-required')).accepts[0];
    await refusedAsReplay(p, CVE, 2, encodePayment({ x402Version: 2, accepted, payload: v1.payload }), SUBMITTED);
  });

  test('(b) paid as v2, re-sent as v1 in X-PAYMENT for the same route: 402 replay', TEST, async (t) => {
    const p = payer(7);
    const { payload } = await signPayment({ amount: String(CVE_PRICE), payTo: devnet.payTo, privateKey: p.privateKey });
    await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await svc.get(CVE, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) }, signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodeHeader(res.headers.get('payment-response')) };
    });
    await refusedAsReplay(p, CVE, 1, encodePayment({ x402Version: 1, scheme: 'exact', network: 'base', payload: payload.payload }), SUBMITTED);
  });

  test('(c) paid as v2, re-sent as v1 for another route (same price): 402 replay', TEST, async (t) => {
    const p = payer(7);
    const { payload } = await signPayment({ amount: String(CVE_PRICE), payTo: devnet.payTo, privateKey: p.privateKey });
    await paysOnce(t, p, CVE_PRICE, async () => {
      const res = await svc.get(CVE, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) }, signal: signal() });
      return { status: res.status, body: await res.json(), settlement: decodeHeader(res.headers.get('payment-response')) };
    });
    await refusedAsReplay(p, '/hn/latest', 1, encodePayment({ x402Version: 1, scheme: 'exact', network: 'base', payload: payload.payload }), ELSEWHERE);
  });
});

/**
 * The README's way to pay with the official clients: each payment carries a
 * `payment-identifier` id, added through x402Client's extension mechanism.
 */
const paymentIdentifier: ClientExtension = {
  key: 'payment-identifier',
  enrichPaymentPayload: async (payload) => ({ ...payload, extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {})) }),
};

/** A fetch that sends a request again, as it was, when its answer never came (the README's). */
const resending = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(request.clone());
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
};

/**
 * A proxy on loopback that loses the answer to the first paid request: the service gets the
 * request, settles and answers, and the client's connection is cut before the answer reaches it.
 */
async function lossyProxy(upstream: string): Promise<{ url: string; payments: string[]; close(): Promise<void> }> {
  const payments: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const payment = req.headers['payment-signature'];
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection'].includes(k))) as Record<string, string>;
    const answer = await fetch(upstream + req.url, { headers, signal: signal() });
    const body = Buffer.from(await answer.arrayBuffer());
    if (typeof payment === 'string') {
      payments.push(payment);
      if (payments.length === 1) return void req.socket.destroy();
    }
    res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, payments, close: () => new Promise((r) => server.close(() => r())) };
}

describe('the official clients after a lost answer: resent, served, charged once', () => {
  test('@x402/fetch with the payment-identifier extension and a resending fetch', TEST, async (t) => {
    const proxy = await lossyProxy(svc.base);
    try {
      const p = payer(6);
      const client = new x402Client().register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(p.privateKey))).registerExtension(paymentIdentifier);
      const pay = wrapFetchV2(resending, client);
      await paysOnce(t, p, EDGAR_PRICE, async () => {
        const res = await pay(proxy.url + EDGAR, { signal: signal() });
        return { status: res.status, body: await res.json(), settlement: decodePaymentResponseHeader(res.headers.get('payment-response')!) };
      });
      assert.equal(proxy.payments.length, 2, 'the answer was lost once and the request sent again');
      assert.equal(proxy.payments[1], proxy.payments[0], 'with the same payment');
      assert.match(decodeHeader(proxy.payments[0]!).extensions['payment-identifier'].info.id, /^[A-Za-z0-9_-]{16,128}$/);
    } finally {
      await proxy.close();
    }
  });

  test('@x402/axios with the payment-identifier extension and a retry of the request on a network error', TEST, async (t) => {
    const proxy = await lossyProxy(svc.base);
    try {
      const p = payer(7);
      // @x402/axios 2.11 carries its own @x402/core: its x402Client, the same extension.
      const client = new AxiosX402Client().register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(p.privateKey)) as never).registerExtension(paymentIdentifier as never);
      const api = wrapAxiosWithPayment(axios.create({ timeout: WAIT_MS }), client);
      // A request whose answer never came is sent again as it was, payment header included.
      api.interceptors.response.use(undefined, (err) => (!err.response && err.config && !err.config.resent ? api.request({ ...err.config, resent: true }) : Promise.reject(err)));
      await paysOnce(t, p, EDGAR_PRICE, async () => {
        const res = await api.get(proxy.url + EDGAR);
        return { status: res.status, body: res.data, settlement: decodeAxiosV2(res.headers['payment-response']) };
      });
      assert.equal(proxy.payments.length, 2);
      assert.equal(proxy.payments[1], proxy.payments[0]);
    } finally {
      await proxy.close();
    }
  });
});
