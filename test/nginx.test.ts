/**
 * The shipped nginx proxy (deploy/nginx/wires-maps.conf + wires-proxy.conf) end to end: a real
 * nginx in front of the real service on loopback, and the devnet for one paid call. The
 * generated nginx.conf only adds what a test needs (paths under a temporary folder, a port,
 * the upstream); every directive under test comes from the shipped files.
 *
 * Skipped only when nginx is not installed and CI is unset; in CI a missing nginx fails.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { decodeHeader, encodePayment, signPayment } from './helpers/payments.js';
import { startPollingService, startTestService, type PollingService, type TestService } from './helpers/service.js';
import { freePort } from './helpers/loopback.js';
import { startPublisher, type Publisher } from './helpers/publisher.js';
import { startWebSubHub, type WebSubHub } from './helpers/websub-hub.js';
import { SOURCES } from '../src/catalog/index.js';
import { openStream, refusedUpgrade } from './helpers/ws.js';
import { NGINX, startNginx, type Nginx } from './helpers/nginx.js';

/** Every answer through the proxy must arrive within this. */
const ANSWER_MS = 5000;

// ---------------------------------------------------------------------------------------
// A raw HTTP/1.x client: the requests below are ones no ordinary client would send.

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

class RawConnection {
  private buf = Buffer.alloc(0);
  closed = false;
  private wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => {});
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
      socket.setTimeout(ANSWER_MS * 2, () => socket.destroy());
    });
  }

  send(payload: string | Buffer): void {
    this.socket.write(typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload);
  }

  /** Resolves once `ready()` is true or the connection closed; rejects after `ms`. */
  private until(ready: () => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (ready() || this.closed) {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.wake = null;
        reject(new Error(`no ${what} within ${ms} ms; received ${JSON.stringify(this.buf.subarray(0, 200).toString('latin1'))}`));
      }, ms);
      this.wake = check;
      check();
    });
  }

  /** Reads one complete response (framed by Content-Length, or by the close). */
  async read(ms = ANSWER_MS, head = false): Promise<RawResponse> {
    let headerEnd = -1;
    let length: number | null = null;
    const complete = () => {
      if (headerEnd === -1) {
        headerEnd = this.buf.indexOf('\r\n\r\n');
        if (headerEnd === -1) return false;
        const m = /\r\ncontent-length: *(\d+)/i.exec(this.buf.subarray(0, headerEnd + 2).toString('latin1'));
        length = head ? 0 : m ? Number(m[1]) : null;
      }
      return length !== null && this.buf.length >= headerEnd + 4 + length;
    };
    await this.until(complete, ms, 'complete response');
    if (headerEnd === -1) throw new Error(`connection closed without a response; received ${JSON.stringify(this.buf.toString('latin1'))}`);
    const [statusLine, ...lines] = this.buf.subarray(0, headerEnd).toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine!);
    assert.ok(status, `status line: ${statusLine}`);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const i = line.indexOf(':');
      headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
    }
    const end = length === null ? this.buf.length : headerEnd + 4 + length;
    const body = this.buf.subarray(headerEnd + 4, end).toString('utf8');
    this.buf = this.buf.subarray(end);
    return { status: Number(status[1]), headers, body };
  }

  /** True when the peer closes the connection within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    await this.until(() => false, ms, 'close').catch(() => {});
    return this.closed;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

async function exchange(port: number, payload: string | Buffer): Promise<RawResponse> {
  const conn = await RawConnection.open(port);
  try {
    conn.send(payload);
    return await conn.read();
  } finally {
    conn.destroy();
  }
}

const json = (r: RawResponse) => {
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/, `content type of ${r.status} ${r.body.slice(0, 80)}`);
  return JSON.parse(r.body);
};

// ---------------------------------------------------------------------------------------

const H = 'Host: wires.test\r\n';
const headerLines = (n: number) => Array.from({ length: n }, (_, i) => `X-Filler-${i}: v\r\n`).join('');
const TLS_HELLO = Buffer.concat([Buffer.from('16030100c4010000c00303', 'hex'), Buffer.alloc(32, 7), Buffer.from('000002c02f01000095', 'hex')]);

/**
 * Each malformed request uWS answers in HTML or lets through (test/uws-malformed.test.ts), and
 * what a client gets through the proxy: the status and the error code (null: the request is served, /health answers 200).
 */
const THROUGH_PROXY: ReadonlyArray<readonly [string, string | Buffer, number, string | null]> = [
  ['unknown method FOO', `FOO /health HTTP/1.1\r\n${H}\r\n`, 405, 'method_not_allowed'],
  ['unknown method PROPFIND', `PROPFIND /health HTTP/1.1\r\n${H}\r\n`, 405, 'method_not_allowed'],
  ['lower-case method', `get /health HTTP/1.1\r\n${H}\r\n`, 400, 'bad_request'],
  ['Content-Length with Transfer-Encoding', `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 'bad_request'],
  ['non-numeric Content-Length', `POST /mcp HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`, 400, 'bad_request'],
  ['HTTP/1.0 without Host', 'GET /health HTTP/1.0\r\n\r\n', 200, null],
  ['HTTP/1.0 with Host', `GET /health HTTP/1.0\r\n${H}\r\n`, 200, null],
  ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400, 'bad_request'],
  ['49 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(48)}\r\n`, 200, null],
  ['100 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(99)}\r\n`, 200, null],
  ['\\x01 in a header that is not forwarded', `GET /health HTTP/1.1\r\n${H}X-Note: a\x01b\r\n\r\n`, 200, null],
  ['\\x01 in Accept (forwarded)', `GET /health HTTP/1.1\r\n${H}Accept: a\x01b\r\n\r\n`, 400, 'invalid_header'],
  ['\\x1f in PAYMENT-SIGNATURE (forwarded)', `GET /cve/latest HTTP/1.1\r\n${H}PAYMENT-SIGNATURE: a\x1fb\r\n\r\n`, 400, 'invalid_header'],
  ['NUL in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x00b\r\n\r\n`, 400, 'bad_request'],
  ['space in a header name', `GET /health HTTP/1.1\r\n${H}X Note: b\r\n\r\n`, 400, 'bad_request'],
  ['obs-fold continuation line', `GET /health HTTP/1.1\r\n${H}X-Note: a\r\n  b\r\n\r\n`, 400, 'bad_request'],
  ['space in the target', `GET /news/preview?q=rate cut HTTP/1.1\r\n${H}\r\n`, 400, 'bad_request'],
  ['absolute-form target', `GET http://wires.test/health HTTP/1.1\r\n${H}\r\n`, 200, null],
  ['asterisk target', `OPTIONS * HTTP/1.1\r\n${H}\r\n`, 400, 'bad_request'],
  ['bare LF line endings', 'GET /health HTTP/1.1\nHost: wires.test\n\n', 200, null],
  ['HTTP/2.0 in the request line', `GET /health HTTP/2.0\r\n${H}\r\n`, 505, 'http_version_not_supported'],
  ['garbage bytes', Buffer.from('\x00\xff\x13garbage\r\n\r\n', 'latin1'), 400, 'bad_request'],
  ['TLS ClientHello', TLS_HELLO, 400, 'bad_request'],
];

describe('nginx in front of the service (deploy/nginx)', {
  skip: !NGINX && !process.env.CI ? 'nginx is not installed (scripts/install-system-deps.sh installs it; in CI this suite fails instead)' : false,
}, () => {
  let devnet: Devnet;
  let svc: TestService;
  let svcStopped = false;
  let chain: ChainReader;
  let proxy: Nginx | undefined;
  let port: number;
  let base: string;

  before(async () => {
    assert.ok(NGINX, 'nginx is required in CI: apt-get install -y --no-install-recommends nginx (scripts/install-system-deps.sh)');
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    devnet = await startDevnet({ payers: 1 });
    chain = new ChainReader(devnet.rpcUrl, 10_000);
    svc = await startTestService({ PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl, PUBLIC_URL: base });

    proxy = await startNginx(port, `server 127.0.0.1:${svc.port};`);
  });

  after(async () => {
    await proxy?.stop();
    if (!svcStopped) await svc?.stop();
    await devnet?.stop();
  });

  const get = (path: string, init?: RequestInit) => fetch(base + path, { signal: AbortSignal.timeout(ANSWER_MS), ...init });

  test('a preview returns items', async () => {
    const res = await get('/cve/preview?src=cisa');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    const body = await res.json();
    assert.ok(Array.isArray(body.articles));
    assert.ok(body.count >= 1 && body.count === body.articles.length, `count ${body.count}`);
    for (const a of body.articles) assert.equal(a.category, 'cisa');
  });

  test('/metrics is not forwarded to the public: a JSON 404 at the proxy, while the service itself serves it', async () => {
    const res = await get('/metrics');
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as any).error.code, 'not_found');
    assert.equal((await fetch(`${svc.base}/metrics`)).status, 200);
  });

  test('percent-encoding in the query reaches the service unchanged', async () => {
    const res = await get('/news/preview?q=rate%20cut');
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.query, 'rate cut');
    assert.ok(body.count >= 1);
    // A malformed escape is the service's own 400, not the proxy's.
    const bad = await exchange(port, `GET /news/preview?q=%zz HTTP/1.1\r\n${H}\r\n`);
    assert.equal(bad.status, 400);
    assert.equal(json(bad).error.code, 'invalid_encoding');
  });

  test('POST /mcp initialize works, with a Content-Length body and with a chunked one', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'nginx-test', version: '1.0.0' } } };
    const res = await get('/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' },
      body: JSON.stringify(initialize),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, 1);
    assert.equal(body.result.protocolVersion, '2025-06-18');
    assert.equal(body.result.serverInfo.name, 'wires');

    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const chunked = await exchange(port, `POST /mcp HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${ping.length.toString(16)}\r\n${ping}\r\n0\r\n\r\n`);
    assert.equal(chunked.status, 200);
    assert.deepEqual(json(chunked), { jsonrpc: '2.0', id: 2, result: {} });
  });

  test('an HTTP/1.0 request gets a JSON 200 and the connection closes', async () => {
    const conn = await RawConnection.open(port);
    try {
      conn.send('GET /health HTTP/1.0\r\n\r\n');
      const res = await conn.read();
      assert.equal(res.status, 200);
      assert.equal(typeof json(res).status, 'string');
      assert.equal(await conn.closesWithin(ANSWER_MS), true, 'nginx closes an HTTP/1.0 connection after the answer');
    } finally {
      conn.destroy();
    }
  });

  test('an HTTP/1.1 keep-alive client gets two answers on one connection', async () => {
    const conn = await RawConnection.open(port);
    try {
      conn.send(`GET /health HTTP/1.1\r\n${H}\r\n`);
      const first = await conn.read();
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('connection'), 'keep-alive');
      conn.send(`GET /cve/preview?src=cisa HTTP/1.1\r\n${H}\r\n`);
      const second = await conn.read();
      assert.equal(second.status, 200);
      assert.ok(json(second).count >= 1);
      assert.equal(conn.closed, false);
    } finally {
      conn.destroy();
    }
  });

  test('every malformed request gets a JSON answer within 5 s', async () => {
    const results = await Promise.all(
      THROUGH_PROXY.map(async ([name, payload, status, code]) => {
        const started = Date.now();
        const res = await exchange(port, payload).catch((err: Error) => err);
        return { name, status, code, res, ms: Date.now() - started };
      }),
    );
    const problems: string[] = [];
    for (const { name, status, code, res, ms } of results) {
      if (res instanceof Error) {
        problems.push(`${name}: ${res.message}`);
        continue;
      }
      const seen = `${res.status} ${res.headers.get('content-type')} ${res.body.slice(0, 100)}`;
      try {
        assert.ok(res.status !== 502 && res.status !== 504, 'never a gateway error');
        assert.equal(res.status, status);
        const body = json(res);
        if (code === null) assert.equal(typeof body.status, 'string', 'the /health record');
        else assert.equal(body.error.code, code);
        if (status === 405) assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
        assert.ok(ms < ANSWER_MS, `${ms} ms`);
      } catch (err) {
        problems.push(`${name}: ${(err as Error).message} (got ${seen})`);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('limits answer JSON: body, header line, request line, transfer coding; service errors pass through', async () => {
    const cases: [string, string, number, string][] = [
      ['body over 256 KiB', `POST /mcp HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 300000\r\n\r\n`, 413, 'body_too_large'],
      ['header line over 8 KiB', `GET /health HTTP/1.1\r\n${H}X-Note: ${'a'.repeat(9000)}\r\n\r\n`, 431, 'header_too_large'],
      ['request line over 8 KiB', `GET /health?${'a'.repeat(9000)} HTTP/1.1\r\n${H}\r\n`, 414, 'uri_too_long'],
      ['unknown transfer coding', `POST /mcp HTTP/1.1\r\n${H}Transfer-Encoding: gzip\r\n\r\n`, 501, 'not_implemented'],
      ['path above the root', `GET /%2e%2e/health HTTP/1.1\r\n${H}\r\n`, 400, 'bad_request'],
      // The service's own answers, untouched.
      ['POST off /mcp', `POST /health HTTP/1.1\r\n${H}Content-Length: 2\r\n\r\n{}`, 405, 'method_not_allowed'],
      ['unknown route', `GET /nope HTTP/1.1\r\n${H}\r\n`, 404, 'not_found'],
      ['query over 2 KiB', `GET /cve/preview?q=${'a'.repeat(3000)} HTTP/1.1\r\n${H}\r\n`, 414, 'query_too_long'],
      ['an unreadable payment header', `GET /cve/latest HTTP/1.1\r\n${H}PAYMENT-SIGNATURE: ${'a'.repeat(4000)}\r\n\r\n`, 400, 'invalid_payment'],
    ];
    const problems: string[] = [];
    await Promise.all(
      cases.map(async ([name, payload, status, code]) => {
        try {
          const res = await exchange(port, payload);
          assert.equal(res.status, status, res.body);
          assert.equal(json(res).error.code, code);
        } catch (err) {
          problems.push(`${name}: ${(err as Error).message}`);
        }
      }),
    );
    assert.deepEqual(problems, []);
    const head = await get('/cve/latest', { method: 'HEAD' });
    assert.equal(head.status, 402);
    const options = await get('/cve/latest', { method: 'OPTIONS' });
    assert.equal(options.status, 204);
    assert.match(options.headers.get('access-control-allow-headers')!, /PAYMENT-SIGNATURE/);
  });

  test('a paid call through nginx settles on the devnet: the payer pays exactly the price', async () => {
    const payer = devnet.payers[0]!;
    const url = `${base}/edgar/filings?form=8-k`;
    const offer = await get('/edgar/filings?form=8-k');
    assert.equal(offer.status, 402);
    const required = JSON.parse(Buffer.from(offer.headers.get('payment-required')!, 'base64').toString());
    const price = BigInt(required.accepts[0].amount);
    assert.equal(price, 10_000n, '0.01 USD');
    assert.equal(required.resource.url, `${base}/edgar/filings`, 'the offer names the public (proxy) URL');

    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payer.privateKey))));
    const before = await chain.balanceOf(payer.address);
    const res = await pay(url, { signal: AbortSignal.timeout(30_000) });
    assert.equal(res.status, 200, await res.clone().text());
    const settlement = JSON.parse(Buffer.from(res.headers.get('payment-response')!, 'base64').toString());
    assert.equal(settlement.success, true);
    assert.match(settlement.transaction, /^0x[0-9a-f]{64}$/);
    const body = await res.json();
    assert.ok(Array.isArray(body.articles) && body.count >= 1);
    assert.equal((await chain.balanceOf(payer.address)) - before, -price);
  });

  test("a paid stream through nginx stays open past the proxy's 30 s read timeout and pushes", { timeout: 90_000 }, async () => {
    const payer = devnet.payers[0]!;
    const ws = `ws://127.0.0.1:${port}/stream?wire=news`;
    const refusal = await refusedUpgrade(ws);
    assert.equal(refusal.status, 402, 'the upgrade without payment is answered by the service through the proxy');
    const required = decodeHeader(refusal.headers['payment-required'] as string);
    assert.equal(required.resource.url, `${base}/stream?wire=news`);
    const header = encodePayment((await signPayment({ amount: required.accepts[0].amount, payTo: devnet.payTo, privateKey: payer.privateKey })).payload);
    const c = await openStream(ws, { 'PAYMENT-SIGNATURE': header });
    // A stream cut short is told with nginx's own account of the connection.
    const withLog = (err: Error) => {
      err.message += `\nnginx error.log:\n${proxy!.errorLog()}`;
      throw err;
    };
    assert.equal((await c.next('paid', 30_000).catch(withLog)).settlement.success, true);
    c.send({ type: 'subscribe', params: { category: 'world' } });
    await c.next('subscribed').catch(withLog);
    // Nothing to push for longer than nginx's proxy_read_timeout: only the service's pings.
    await new Promise((r) => setTimeout(r, 36_000));
    assert.equal(c.ws.readyState, c.ws.OPEN, 'still open after 36 s of silence');
    svc.wires
      .get('news')!
      .add([
        { id: 'via-nginx', title: 'Pushed through the proxy', url: 'https://example.com/via-nginx', source: 'Test Wire', filter: 'world', published: Date.now(), summary: 'A stream through nginx.' },
      ]);
    assert.equal((await c.next('item').catch(withLog)).item.title, 'Pushed through the proxy');
    c.ws.close();
  });

  test('with the service down, a client gets a JSON 502 (last: stops the service)', async () => {
    await svc.stop();
    svcStopped = true;
    const res = await get('/health');
    assert.equal(res.status, 502);
    assert.match(res.headers.get('content-type')!, /^application\/json/);
    assert.equal((await res.json()).error.code, 'upstream_unavailable');
  });
});

if (!NGINX && process.env.CI) {
  test('nginx is installed (required in CI)', () => {
    assert.fail('nginx not found: apt-get install -y --no-install-recommends nginx (scripts/install-system-deps.sh)');
  });
}

describe('WebSub through nginx: a hub verifies and delivers to the callback behind the proxy', {
  skip: !NGINX && !process.env.CI ? 'nginx is not installed (scripts/install-system-deps.sh installs it; in CI this suite fails instead)' : false,
}, () => {
  let hub: WebSubHub;
  let feed: Publisher;
  let run: PollingService;
  let proxy: Nginx | undefined;
  let base: string;

  before(async () => {
    assert.ok(NGINX, 'nginx is required in CI: apt-get install -y --no-install-recommends nginx (scripts/install-system-deps.sh)');
    hub = await startWebSubHub({ algorithm: 'sha256' });
    feed = await startPublisher({ hub: hub.url });
    const port = await freePort();
    const servicePort = await freePort();
    base = `http://127.0.0.1:${port}`;
    const overrides = Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/closed']));
    overrides.techcrunch = feed.url;
    // The hub reaches the callback at PUBLIC_URL, which is nginx: it starts with the service,
    // so it listens before the service's first poll subscribes.
    [proxy, run] = await Promise.all([
      startNginx(port, `server 127.0.0.1:${servicePort};`),
      startPollingService(overrides, { PORT: String(servicePort), PUBLIC_URL: base, USER_AGENT: 'Wires Test ops@example.com' }),
    ]);
  });

  after(async () => {
    await proxy?.stop();
    await run?.service.stop();
    await hub?.close();
    await feed?.close();
  });

  test('subscribed, verified and delivered through the proxy; a forged or mistopicked notification is refused there too', async () => {
    const sub = await hub.waitForSubscription(feed.url, 10_000);
    assert.equal(sub.callback, `${base}/websub/techcrunch`);
    feed.add('Story through the proxy');
    assert.deepEqual(await hub.publish(feed.url), [202]);
    const news = run.service.wires.get('news')!;
    const deadline = Date.now() + 5000;
    while (!news.get('tech', 'Story through the proxy') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(news.get('tech', 'Story through the proxy'), 'the pushed story is on the wire');
    assert.deepEqual(await hub.distribute(feed.url, '<rss/>', 'application/rss+xml', { secret: 'forged' }), [403]);
    // X-Hub-Signature and Link reach the service: a correct signature for another topic is refused for the topic.
    const { createHmac } = await import('node:crypto');
    const body = '<rss/>';
    const res = await fetch(`${base}/websub/techcrunch`, {
      method: 'POST',
      headers: { 'content-type': 'application/rss+xml', 'x-hub-signature': `sha256=${createHmac('sha256', sub.secret!).update(body).digest('hex')}`, link: '<https://elsewhere.example/>; rel="self"' },
      body,
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, 'topic_mismatch');
  });
});
