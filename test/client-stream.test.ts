/**
 * The client's push stream against the real service over loopback WebSockets: items through
 * the iterator, blocks paid and renewed within the limits, the end of a stream whose renewal
 * the limits refuse, and the socket closed when the caller stops iterating. The service
 * settles optimistically (no chain); blocks are 3 s long so a renewal happens in the test.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { generatePrivateKey } from 'viem/accounts';
import { WiresClient, type WiresError, type StreamEvent, type StreamItem } from '../src/client/index.js';
import { startTestService, type TestService } from './helpers/service.js';

const CLI = fileURLToPath(new URL('../src/client/cli.js', import.meta.url));
const STDIO = fileURLToPath(new URL('../src/client/mcp-stdio.js', import.meta.url));
let svc: TestService;
let seq = 0;

before(async () => {
  // A stream of two wires costs more than the default optimistic cap per payer (0.05 USD).
  svc = await startTestService({ SETTLEMENT: 'optimistic', OPTIMISTIC_MAX_UNSETTLED_USD: '1' }, true, { streamTiming: { blockMs: 3000, renewNoticeMs: 2000, firstPaymentMs: 30000 } });
});
after(() => svc?.stop());

/** Stores a new markets item on the news wire: pushed to matching subscriptions. */
function addNews(title: string): string {
  const url = `https://example.com/stream-test/${++seq}`;
  svc.wires.get('news')!.add([{ id: `stream-test-${seq}`, title, url, source: 'Example', filter: 'markets', published: Date.now(), summary: `${title}, in detail.` }]);
  return url;
}

/** The news stream's block price from the price list (10 × the per-call price). */
async function blockUsd(): Promise<number> {
  const list = (await (await svc.get('/.well-known/x402')).json()) as { routes: { path: string; amount: string }[]; streams?: { path: string; amount: string }[] };
  const listed = list.streams?.find((s) => s.path === '/stream?wire=news');
  return Number(listed?.amount ?? BigInt(list.routes.find((r) => r.path === '/news')!.amount) * 10n) / 1e6;
}

async function openConnections(): Promise<number> {
  const text = await (await svc.get('/metrics')).text();
  return Number(/^wires_stream_connections (\d+)/m.exec(text)?.[1]);
}

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const client = (maxSpendUsd = 1) => new WiresClient({ url: svc.base, privateKey: generatePrivateKey(), maxSpendUsd });

describe('WiresClient.stream', () => {
  test('items arrive through the iterator with their subscription; one block is counted', async () => {
    const c = client();
    const stream = c.stream('news', { category: 'markets', q: 'Fed' });
    assert.equal(await stream.ready, 'news?category=markets&q=fed');
    addNews('Unrelated markets story');
    const url = addNews('Fed holds rates steady');
    const got: StreamItem[] = [];
    for await (const it of stream) {
      got.push(it);
      break;
    }
    assert.equal(got.length, 1, 'only the item matching q');
    assert.equal(got[0]!.sub, 'news?category=markets&q=fed');
    assert.equal(got[0]!.update, false);
    assert.equal(got[0]!.item.url, url);
    assert.equal(got[0]!.item.category, 'markets');
    assert.equal(c.spentUsd, await blockUsd());
  });

  test('several wires on one stream: one block at the sum of their prices, checked against the price list, items of each', async () => {
    const c = client();
    const stream = c.stream(['edgar', 'news'], { q: 'Nvidia' });
    await stream.ready;
    addNews('Nvidia ships a chip');
    svc.wires
      .get('edgar')!
      .add([{ id: `edgar-${++seq}`, title: '8-K - NVIDIA CORP', url: `https://example.com/edgar/${seq}`, source: 'SEC EDGAR', filter: '8-k', published: Date.now(), summary: 'Filed.' }]);
    const subs: string[] = [];
    for await (const it of stream) {
      subs.push(it.sub);
      if (subs.length === 2) break;
    }
    assert.deepEqual(subs.sort(), ['edgar?q=nvidia', 'news?q=nvidia']);
    assert.equal(Math.round(c.spentUsd * 1e6), Math.round((await blockUsd()) * 1e6) + 100_000, 'news 0.05 + edgar 0.1 USD');
    assert.throws(() => c.stream(['news', 'nope' as 'news']), /unknown or repeated wire/);
    assert.throws(() => c.stream(['news', 'edgar'], { category: 'markets' } as never), /the edgar stream takes/);
  });

  test('renews on the service notice within the limit: two blocks counted, items keep coming', async () => {
    const c = client();
    const events: StreamEvent[] = [];
    const stream = c.stream('news', { category: 'markets' }, { onEvent: (e) => events.push(e) });
    await stream.ready;
    const firstUntil = stream.paidUntil!;
    await until(() => events.filter((e) => e.type === 'paid').length === 2, 5000);
    assert.ok(Date.parse(stream.paidUntil!) > Date.parse(firstUntil), 'the paid time moved on');
    assert.equal(c.spentUsd.toFixed(6), (2 * (await blockUsd())).toFixed(6));
    // Past the first block's end, the stream still delivers.
    await until(() => Date.now() > Date.parse(firstUntil) + 200);
    const url = addNews('After the renewal');
    for await (const it of stream) {
      if (it.item.url === url) break;
    }
    assert.equal(stream.error, null);
  });

  test('a client whose spend limit allows one block ends with a clear error after it', async () => {
    const c = client(await blockUsd());
    const events: StreamEvent[] = [];
    const stream = c.stream('news', {}, { onEvent: (e) => events.push(e) });
    const started = Date.now();
    await assert.rejects(
      (async () => {
        for await (const _ of stream);
      })(),
      (err: WiresError) => {
        assert.equal(err.code, 'over_spend_limit');
        assert.match(err.message, /paid time ran out: the renewal was refused: .*above the limit/);
        assert.equal(err.details.closeCode, 4402);
        return true;
      },
    );
    assert.ok(Date.now() - started >= 2500, 'it ran to the end of the paid block');
    assert.equal(c.spentUsd, await blockUsd());
    assert.ok(events.some((e) => e.type === 'renew_refused'));
  });

  test('a price list without streams: the block is checked against the route price × 10', async () => {
    const older: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith('/.well-known/x402')) return res;
      const { streams: _, ...list } = await res.json();
      return Response.json(list);
    };
    const c = new WiresClient({ url: svc.base, privateKey: generatePrivateKey(), fetch: older });
    const stream = c.stream('news');
    assert.equal(await stream.ready, 'news');
    stream.close();
    assert.equal((await c.prices()).get('/stream?wire=news')!.amount, '50000');
    assert.equal(c.spentUsd, 0.05);
  });

  test('breaking out of for await closes the connection', async () => {
    const before = await openConnections();
    const stream = client().stream('news', { category: 'markets' });
    await stream.ready;
    assert.equal(await openConnections(), before + 1);
    addNews('One to break on');
    for await (const _ of stream) break;
    assert.equal(stream.closed, true);
    await until(async () => (await openConnections()) === before);
  });

  test('refusals before the first block: no key, a per-minute price over the limit, a bad filter', async () => {
    const noKey = new WiresClient({ url: svc.base }).stream('news');
    await assert.rejects(noKey.ready, /set a wallet key/);
    // 0.005 USD a minute is above 0.001 per call: nothing is signed or spent.
    const cheap = new WiresClient({ url: svc.base, privateKey: generatePrivateKey(), maxPricePerCallUsd: 0.001 });
    await assert.rejects(cheap.stream('news').ready, (err: WiresError) => err.code === 'over_price_limit' && /a minute\), above the limit of 0\.001 USD per call/.test(err.message));
    assert.equal(cheap.spentUsd, 0);
    // A price list that says less than the block's offer: refused before signing.
    const tampered: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).endsWith('/.well-known/x402')) return res;
      const list = await res.json();
      for (const s of list.streams ?? []) s.accepts[0].amount = '1';
      for (const r of list.routes) r.accepts[0].amount = '1'; // also what a list without streams derives them from
      return Response.json(list);
    };
    const fooled = new WiresClient({ url: svc.base, privateKey: generatePrivateKey(), fetch: tampered });
    await assert.rejects(fooled.stream('news').ready, (err: WiresError) => err.code === 'price_mismatch');
    assert.equal(fooled.spentUsd, 0);
    // Checked before anything is paid (the service would check it after the block is bought).
    const c = client();
    assert.throws(
      () => c.stream('news', { category: 'nope' } as never),
      (err: WiresError) => err.code === 'invalid_parameter' && /markets/.test(err.message),
    );
    assert.throws(
      () => c.stream('news', { form: '8-k' } as never),
      (err: WiresError) => err.code === 'unknown_parameter',
    );
    // What only the service can check (here: q too long) ends the stream with its error.
    const tooLong = c.stream('news', { q: 'x'.repeat(300) });
    await assert.rejects(tooLong.ready, (err: WiresError) => err.code === 'invalid_parameter');
    await assert.rejects(
      (async () => {
        for await (const _ of tooLong);
      })(),
      (err: WiresError) => err.code === 'invalid_parameter',
    );
  });
});

describe('wires stream (CLI)', () => {
  test('--json prints each item as one JSON line as it arrives', async () => {
    const child = spawn(process.execPath, [CLI, 'stream', 'news', '--category', 'markets', '--json'], {
      env: { PATH: process.env.PATH, WIRES_URL: svc.base, WALLET_PRIVATE_KEY: generatePrivateKey() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      // The CLI says on stderr when it is subscribed; items stored before that are not pushed.
      await until(() => /subscribed/.test(stderr), 10_000);
      const url = addNews('CLI sees this');
      const line = await lines.next();
      const pushed = JSON.parse(line.value as string);
      assert.equal(pushed.sub, 'news?category=markets');
      assert.equal(pushed.update, false);
      assert.equal(pushed.item.url, url);
    } finally {
      child.kill();
    }
  });

  test('without a key it says what is needed', async () => {
    const child = spawn(process.execPath, [CLI, 'stream', 'news'], { env: { PATH: process.env.PATH, WIRES_URL: svc.base }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 1);
    assert.match(stderr, /WALLET_PRIVATE_KEY/);
  });
});

describe('wires-mcp stream_poll', () => {
  const texts = (r: any) => (r.content as { text: string }[]).map((c) => c.text).join('\n');
  async function connect(env: Record<string, string>): Promise<Client> {
    const mcp = new Client({ name: 'stream-test', version: '1.0.0' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [STDIO], env: { PATH: process.env.PATH!, WIRES_URL: svc.base, ...env }, stderr: 'pipe' }));
    return mcp;
  }

  test('the first call subscribes; the next returns the items that arrived since', async () => {
    const mcp = await connect({ WALLET_PRIVATE_KEY: generatePrivateKey() });
    try {
      assert.ok((await mcp.listTools()).tools.some((t) => t.name === 'stream_poll'));
      const args = { wire: 'news', filter: 'markets', q: 'tariffs' };
      const first = await mcp.callTool({ name: 'stream_poll', arguments: args });
      assert.match(texts(first), /Subscribed to news\?category=markets&q=tariffs, paid until/);
      const url = addNews('Tariffs move markets');
      await new Promise((r) => setTimeout(r, 200));
      const second = await mcp.callTool({ name: 'stream_poll', arguments: args });
      const got = JSON.parse((second.content as { text: string }[])[0]!.text);
      assert.equal(got.count, 1);
      assert.equal(got.items[0].item.url, url);
      const third = await mcp.callTool({ name: 'stream_poll', arguments: args });
      assert.equal(JSON.parse((third.content as { text: string }[])[0]!.text).count, 0, 'nothing new');
      const bad = await mcp.callTool({ name: 'stream_poll', arguments: { wire: 'news', filter: 'nope' } });
      assert.equal(bad.isError, true);
      assert.match(texts(bad), /No subscription opened: category must be one of: markets/);
    } finally {
      await mcp.close();
    }
  });

  test('without a key or over the limit it says why', async () => {
    const noKey = await connect({});
    try {
      const r = await noKey.callTool({ name: 'stream_poll', arguments: { wire: 'news' } });
      assert.match(texts(r), /no WALLET_PRIVATE_KEY is configured/);
    } finally {
      await noKey.close();
    }
    const poor = await connect({ WALLET_PRIVATE_KEY: generatePrivateKey(), MAX_SPEND_USD: '0.01' });
    try {
      const r = await poor.callTool({ name: 'stream_poll', arguments: { wire: 'news' } });
      assert.match(texts(r), /No subscription opened: .*above the limit of 0\.01 USD/);
    } finally {
      await poor.close();
    }
  });
});
