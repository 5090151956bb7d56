/**
 * The remote MCP endpoint with the official MCP client (@modelcontextprotocol/sdk, Streamable
 * HTTP transport): tools from the catalogue, free previews, and paid tools following x402's
 * MCP transport, paid on the devnet with the official x402 client's payload.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { ROUTES, WIRES } from '../src/catalog/index.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { startTestService, type TestService } from './helpers/service.js';

let devnet: Devnet;
let svc: TestService;
let client: Client;

before(async () => {
  devnet = await startDevnet({ payers: 1 });
  svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
  client = new Client({ name: 'wires-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.base}/mcp`)));
});

after(async () => {
  await client?.close();
  await svc?.stop();
  await devnet?.stop();
});

const textOf = (result: any) => (result.content as { type: string; text: string }[])[0]!.text;

describe('remote MCP over Streamable HTTP', () => {
  test('initialize negotiates a current protocol version and names the server', () => {
    assert.equal(client.getServerVersion()?.name, 'wires');
    assert.deepEqual(client.getServerCapabilities()?.tools, { listChanged: false });
  });

  test('tools/list has a free and a paid tool for every wire, with filter enums', async () => {
    const { tools } = await client.listTools();
    assert.equal(tools.length, ROUTES.length + 1, 'a tool per route, and the ticker lookup');
    assert.ok(tools.some((t) => t.name === 'tickers_lookup' && /^Free./.test(t.description ?? '')));
    for (const wire of WIRES) {
      const preview = tools.find((t) => t.name === wire.preview.path.slice(1).replace(/\//g, '_'));
      assert.ok(preview, `${wire.id} preview tool`);
      assert.deepEqual((preview.inputSchema.properties as any)[wire.filter.name].enum, wire.filter.values);
      for (const paid of wire.paid)
        assert.ok(
          tools.some((t) => t.name === paid.path.slice(1).replace(/\//g, '_') && /USD per call/.test(t.description ?? '')),
          paid.path,
        );
    }
    assert.deepEqual(tools.find((t) => t.name === 'news')!.inputSchema.required, ['q']);
  });

  test('a preview tool returns items; a bad argument is a tool error naming the allowed values', async () => {
    const result = await client.callTool({ name: 'cve_preview', arguments: { limit: 2 } });
    assert.notEqual(result.isError, true);
    const envelope = JSON.parse(textOf(result));
    assert.equal(envelope.count, 2);
    const bad = await client.callTool({ name: 'cve_preview', arguments: { src: 'nope' } });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /"param":"src"/);
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);
  });

  test('a paid tool without payment returns the x402 PaymentRequired, in structuredContent and as text', async () => {
    const result = await client.callTool({ name: 'cve_latest', arguments: {} });
    assert.equal(result.isError, true);
    const required = result.structuredContent as any;
    assert.equal(required.x402Version, 2);
    assert.equal(required.accepts[0].amount, '5000');
    assert.equal(required.accepts[0].payTo, devnet.payTo);
    assert.deepEqual(JSON.parse(textOf(result)), required);
  });

  test('a paid tool with _meta["x402/payment"] returns items and a settlement that is on the chain', async () => {
    const chain = new ChainReader(devnet.rpcUrl, 10_000);
    const payer = devnet.payers[0]!;
    const balance = () => chain.balanceOf(payer.address);
    const before = await balance();
    const offer = (await client.callTool({ name: 'edgar_filings', arguments: { form: '8-k' } })).structuredContent as any;
    const x402 = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payer.privateKey)));
    const payment = await x402.createPaymentPayload(offer);
    const result = await client.callTool({ name: 'edgar_filings', arguments: { form: '8-k' }, _meta: { 'x402/payment': payment } });
    assert.notEqual(result.isError, true);
    assert.ok(JSON.parse(textOf(result)).count > 0);
    const settlement = (result._meta as any)['x402/payment-response'];
    assert.equal(settlement.success, true);
    assert.equal((await chain.client.getTransactionReceipt({ hash: settlement.transaction })).status, 'success');
    assert.equal((await balance()) - before, -10_000n);

    // The same payment for other arguments is a replay, reported the x402 way.
    const replay = await client.callTool({ name: 'edgar_filings', arguments: { form: '10-k' }, _meta: { 'x402/payment': payment } });
    assert.equal(replay.isError, true);
    assert.match((replay.structuredContent as any).error, /^replay/);
    assert.equal((await balance()) - before, -10_000n);
  });
});

describe('bad JSON-RPC over HTTP', () => {
  const post = (body: string) => fetch(`${svc.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  test('each gets its JSON-RPC error code, never a crash', async () => {
    const cases: [string, number, number][] = [
      ['{not json', 400, -32700],
      ['[{"jsonrpc":"2.0","id":1,"method":"ping"}]', 400, -32600],
      ['{"jsonrpc":"1.0","id":1,"method":"ping"}', 400, -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"nope"}', 200, -32601],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}', 200, -32602],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      assert.equal(res.status, status, body);
      assert.equal(((await res.json()) as any).error.code, code, body);
    }
    assert.equal((await post('{"jsonrpc":"2.0","method":"notifications/initialized"}')).status, 202);
    const big = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(300_000) } }));
    assert.equal(big.status, 413);
    assert.equal(((await (await post('{"jsonrpc":"2.0","id":"a","method":"ping"}')).json()) as any).result !== undefined, true, 'still serving');
  });

  test('GET /mcp still returns the catalogue; an event-stream GET is refused', async () => {
    const catalogue = (await (await fetch(`${svc.base}/mcp`)).json()) as any;
    assert.equal(catalogue.wires.length, WIRES.length);
    assert.equal((await fetch(`${svc.base}/mcp`, { headers: { accept: 'text/event-stream' } })).status, 405);
  });
});
