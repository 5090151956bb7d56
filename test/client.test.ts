/**
 * The client kit against a live service on the devnet: the `wires` CLI run as a real process,
 * the `wires-mcp` stdio server driven by the official MCP client's stdio transport, and the
 * importable client module. Paid calls are checked on the chain.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { previewParams } from '../src/client/client.js';
import { WiresClient, type WiresError } from '../src/client/index.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { startTestService, type TestService } from './helpers/service.js';

const CLI = fileURLToPath(new URL('../src/client/cli.js', import.meta.url));
const STDIO = fileURLToPath(new URL('../src/client/mcp-stdio.js', import.meta.url));
const SIGN = fileURLToPath(new URL('../scripts/sign-payment.js', import.meta.url));
let devnet: Devnet;
let svc: TestService;
let chain: ChainReader;

before(async () => {
  devnet = await startDevnet({ payers: 3 });
  svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
  chain = new ChainReader(devnet.rpcUrl, 10_000);
});
after(async () => {
  await svc?.stop();
  await devnet?.stop();
});

const balance = (a: string) => chain.balanceOf(a);

function wires(args: string[], env: Record<string, string> = {}, bin = CLI): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, WIRES_URL: svc.base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('wires CLI', () => {
  test('without a key it shows the preview as a table, and says so', async () => {
    const { code, stdout, stderr } = await wires(['cve', '--src', 'cisa']);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /no WALLET_PRIVATE_KEY: showing the free preview/);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, 6, 'three results, two lines each');
    assert.match(lines[1]!, /https?:\/\//);
  });

  test('--json prints the envelope', async () => {
    const { code, stdout } = await wires(['news', 'markets', '--category', 'markets', '--preview', '--json']);
    assert.equal(code, 0);
    const env = JSON.parse(stdout);
    assert.ok(env.count > 0 && env.count <= 3);
    for (const a of env.articles) assert.equal(a.category, 'markets');
  });

  test('with a key it pays once on chain and prints the data', async () => {
    const payer = devnet.payers[0]!;
    const before = await balance(payer.address);
    const { code, stdout, stderr } = await wires(['edgar', '--form', '8-k', '--limit', '5', '--json'], { WALLET_PRIVATE_KEY: payer.privateKey });
    assert.equal(code, 0, stderr);
    assert.ok(JSON.parse(stdout).count <= 5);
    assert.match(stderr, /paid 0\.01 USD \(0x[0-9a-f]{64}\)/);
    assert.equal((await balance(payer.address)) - before, -10_000n);
    assert.equal(stderr.includes(payer.privateKey.slice(2)), false, 'the key never appears');
  });

  test('clear errors: unknown wire, bad filter value, missing q, over the price limit (nothing signed)', async () => {
    const unknown = await wires(['nope']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown wire "nope"; wires: news, edgar/);
    const badFilter = await wires(['cve', '--src', 'nope']);
    assert.equal(badFilter.code, 2);
    assert.match(badFilter.stderr, /allowed: cisa, ubuntu, msrc, debian, zdi/);
    const noQ = await wires(['news'], { WALLET_PRIVATE_KEY: devnet.payers[1]!.privateKey });
    assert.equal(noQ.code, 2);
    assert.match(noQ.stderr, /needs search terms/);
    const payer = devnet.payers[1]!;
    const before = await balance(payer.address);
    const limited = await wires(['edgar'], { WALLET_PRIVATE_KEY: payer.privateKey, MAX_PRICE_PER_CALL_USD: '0.005' });
    assert.equal(limited.code, 1);
    assert.match(limited.stderr, /above the limit of 0\.005 USD per call/);
    assert.equal(await balance(payer.address), before);
  });

  test('--help prints the usage on stdout and exits 0; without a key, --limit reaches the preview, capped at 3', async () => {
    const help = await wires(['--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^usage: wires <wire>/);
    assert.equal(help.stderr, '');
    const wireHelp = await wires(['cve', '--help']);
    assert.equal(wireHelp.code, 0);
    assert.match(wireHelp.stdout, /cve: --src cisa\|ubuntu\|msrc\|debian\|zdi/);
    const two = await wires(['cve', '--src', 'cisa', '--limit', '2', '--json']);
    assert.equal(two.code, 0, two.stderr);
    assert.equal(JSON.parse(two.stdout).articles.length, 2);
    const many = await wires(['cve', '--limit', '20', '--json']);
    assert.equal(many.code, 0, many.stderr);
    assert.equal(JSON.parse(many.stdout).articles.length, 3);
  });
});

describe('wires-mcp over stdio', () => {
  async function connect(env: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO], env: { PATH: process.env.PATH!, WIRES_URL: svc.base, ...env }, stderr: 'pipe' }));
    return client;
  }
  const texts = (r: any) => (r.content as { text: string }[]).map((c) => c.text).join('\n');

  test('a paid tool settles on the devnet; an over-limit one falls back to the preview without paying', async () => {
    const payer = devnet.payers[2]!;
    const client = await connect({ WALLET_PRIVATE_KEY: payer.privateKey, MAX_SPEND_USD: '0.015' });
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'edgar_filings'));
      const before = await balance(payer.address);
      const paid = await client.callTool({ name: 'edgar_filings', arguments: { form: '8-k' } });
      assert.match(texts(paid), /Paid 0\.01 USD \(0x[0-9a-f]{64}\)/);
      assert.equal((paid._meta as any)['x402/payment-response'].success, true);
      assert.equal((await balance(payer.address)) - before, -10_000n);
      // 0.01 more would take the session to 0.02 USD, over MAX_SPEND_USD.
      const refused = await client.callTool({ name: 'edgar_filings', arguments: { form: '8-k' } });
      assert.match(texts(refused), /Payment not made: .*above the limit of 0\.015 USD\. Showing the free preview/);
      assert.ok(JSON.parse((refused.content as { text: string }[])[1]!.text).count <= 3);
      assert.equal((await balance(payer.address)) - before, -10_000n);
    } finally {
      await client.close();
    }
  });

  test('a tampered price list makes it refuse to sign', async () => {
    // A proxy in front of the service that advertises a lower price than the offers carry.
    const proxy: Server = createServer(async (req, res) => {
      const upstream = await fetch(svc.base + req.url, { headers: req.headers as Record<string, string> });
      let body = Buffer.from(await upstream.arrayBuffer());
      if (req.url === '/.well-known/x402') {
        const list = JSON.parse(body.toString());
        for (const r of list.routes) r.accepts[0].amount = '1';
        body = Buffer.from(JSON.stringify(list));
      }
      const headers: Record<string, string> = {};
      upstream.headers.forEach((v, k) => k !== 'content-length' && k !== 'content-encoding' && (headers[k] = v));
      res.writeHead(upstream.status, headers).end(body);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const payer = devnet.payers[2]!;
    const client = await connect({ WALLET_PRIVATE_KEY: payer.privateKey, WIRES_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
    try {
      const before = await balance(payer.address);
      const result = await client.callTool({ name: 'cve_latest', arguments: {} });
      assert.match(texts(result), /differs from the service's published price list/);
      assert.equal(await balance(payer.address), before);
    } finally {
      await client.close();
      proxy.close();
    }
  });

  test('a bad parameter: the tool error names the allowed values once', async () => {
    const client = await connect({});
    try {
      const bad = await client.callTool({ name: 'edgar_filings', arguments: { form: '8k' } });
      assert.equal(bad.isError, true);
      const message = texts(bad);
      assert.match(message, /form must be one of: 8-k, 10-q/);
      assert.equal(message.split('10-q').length - 1, 1, `the values are listed once: ${message}`);
    } finally {
      await client.close();
    }
  });

  test('the ticker lookup tool asks the service: its answer, or its error as the tool error', async () => {
    const client = await connect({});
    try {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'tickers_lookup'));
      // This service ingests nothing, so it holds no map yet: the route's 503, as the tool's error.
      const noMap = await client.callTool({ name: 'tickers_lookup', arguments: { q: 'nvidia' } });
      assert.equal(noMap.isError, true);
      assert.match(texts(noMap), /ticker map is not loaded yet/);
      const bad = await client.callTool({ name: 'tickers_lookup', arguments: { q: 'nvidia', cik: '1' } });
      assert.match(texts(bad), /exactly one of q/);
    } finally {
      await client.close();
    }
  });

  test('without a key a paid tool answers the preview with the asked limit, capped at 3', async () => {
    const client = await connect({});
    try {
      const two = await client.callTool({ name: 'cve_latest', arguments: { src: 'cisa', limit: 2 } });
      assert.match(texts(two), /No WALLET_PRIVATE_KEY is configured, so nothing was paid\. Showing the free preview/);
      assert.equal(JSON.parse((two.content as { text: string }[])[1]!.text).articles.length, 2);
      const capped = await client.callTool({ name: 'edgar_filings', arguments: { limit: 20 } });
      assert.equal(capped.isError, undefined, texts(capped));
      assert.equal(JSON.parse((capped.content as { text: string }[])[1]!.text).articles.length, 3);
    } finally {
      await client.close();
    }
  });
  test('the stdio framing: bad lines get JSON-RPC errors, notifications no answer, a ping its answer, and it exits when stdin closes', async () => {
    const child = spawn(process.execPath, [STDIO], { env: { PATH: process.env.PATH, WIRES_URL: svc.base }, stdio: ['pipe', 'pipe', 'pipe'] });
    const answers: any[] = [];
    let buffered = '';
    child.stdout.on('data', (c) => {
      buffered += c;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        answers.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n');
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    child.stdin.write('not json\n\n');
    child.stdin.write('[{"jsonrpc":"2.0","id":2,"method":"ping"}]\n');
    child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"resources/list"}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"cve_preview","arguments":{"limit":1}}}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":6,"method":"ping"}\n');
    child.stdin.end();
    assert.equal(await exited, 0, 'exits once stdin is closed and the answers are out');
    const byId = new Map(answers.filter((a) => a.id !== null).map((a) => [a.id, a]));
    assert.equal(byId.get(1).result.protocolVersion, '2025-06-18', 'an unknown version is answered with the newest supported');
    assert.deepEqual(
      answers.filter((a) => a.id === null).map((a) => a.error.code),
      [-32700, -32600],
      'the line that is not JSON and the batch',
    );
    assert.equal(byId.get(3).error.code, -32601);
    assert.equal(byId.get(4).error.code, -32602);
    assert.equal(JSON.parse(byId.get(5).result.content[0].text).articles.length, 1);
    assert.deepEqual(byId.get(6).result, {});
    assert.equal(answers.length, 7, 'nothing for the notification or the blank line');
  });
});

describe('sign-payment script (curl)', () => {
  test('prints a header that pays for exactly one call; resent (a retry after a lost answer), it gets the same answer free', async () => {
    const payer = devnet.payers[0]!;
    const url = `${svc.base}/cve/latest?src=cisa`;
    const before = await balance(payer.address);
    const { code, stdout, stderr } = await wires([url], { WALLET_PRIVATE_KEY: payer.privateKey }, SIGN);
    assert.equal(code, 0, stderr);
    const res = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': stdout.trim() } });
    assert.equal(res.status, 200);
    // It carries a payment-identifier, which is what makes the resend the payer's own.
    const again = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': stdout.trim() } });
    assert.equal(again.status, 200);
    assert.equal(await again.text(), await res.text());
    assert.equal((await balance(payer.address)) - before, -5000n);
  });
});

describe('client module', () => {
  test('typed wire calls: previews without a key, and errors that carry the allowed values', async () => {
    const client = new WiresClient({ url: svc.base });
    const result = await client.wire('cve', { src: 'cisa' });
    assert.equal(result.paidUsd, 0);
    assert.equal(result.route, '/cve/preview');
    assert.ok(result.envelope.articles.every((a) => a.category === 'cisa'));
    await assert.rejects(client.call('/cve/preview', { src: 'nope' }), (err: WiresError) => err.code === 'invalid_parameter' && (err.details.allowed as string[]).includes('cisa'));
    assert.throws(() => new WiresClient({ url: svc.base, privateKey: 'not-a-key' }), /64 hex digits/);
  });

  test('concurrent paid calls never pass the spend limit together: one pays, on chain, the other is refused unsigned', async () => {
    const payer = devnet.payers[0]!;
    const client = new WiresClient({ url: svc.base, privateKey: payer.privateKey, maxSpendUsd: 0.005 });
    const before = await balance(payer.address);
    const results = await Promise.allSettled([client.wire('cve', { src: 'cisa' }), client.wire('cve', { src: 'cisa', limit: 5 })]);
    const paid = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(paid.length, 1);
    assert.equal(refused.length, 1);
    assert.equal((refused[0]!.reason as WiresError).code, 'over_spend_limit');
    assert.match((refused[0]!.reason as WiresError).message, /not yet answered/);
    assert.equal(client.spentUsd, 0.005);
    assert.equal((await balance(payer.address)) - before, -5_000n);
    // Nothing stays reserved: a third call is refused for what was spent alone.
    await assert.rejects(client.wire('cve', { src: 'cisa' }), (err: WiresError) => err.code === 'over_spend_limit' && !/not yet answered/.test(err.message));
  });

  test('a preview takes the asked limit capped at 3', async () => {
    const client = new WiresClient({ url: svc.base });
    assert.equal((await client.wire('cve', { limit: 2 })).envelope.articles.length, 2);
    assert.equal((await client.wire('edgar', { limit: 20 }, { preview: true })).envelope.articles.length, 3);
    assert.deepEqual(previewParams('/cve/preview', { src: 'cisa', limit: '50' }), { src: 'cisa', limit: '3' });
    assert.deepEqual(previewParams('/cve/preview', { limit: 1 }), { limit: 1 });
    assert.throws(() => previewParams('/cve/latest', {}), /unknown preview route/);
  });
});
