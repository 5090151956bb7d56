/**
 * The fetcher against real loopback servers: what it does with each way a source can answer.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { Fetcher, parseRetryAfter, type FetcherOptions } from '../src/ingest/fetch/fetcher.js';

const OPTIONS: FetcherOptions = {
  userAgent: 'WiresTest/1 test@wires.invalid',
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  totalTimeoutMs: 3000,
  maxBodyBytes: 1024 * 1024,
  maxDecodedBytes: 2 * 1024 * 1024,
  maxRedirects: 3,
  retries: 2,
  retryBaseMs: 20,
};

const hits = new Map<string, number>();
let lastHeaders: IncomingMessage['headers'] = {};
const BODY = '<rss><channel><title>ok</title></channel></rss>';

function handle(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url!, 'http://x').pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  lastHeaders = req.headers;
  switch (path) {
    case '/ok':
      if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304, { ETag: '"v1"' }).end();
      return void res.writeHead(200, { ETag: '"v1"', 'Last-Modified': 'Mon, 23 Nov 2026 10:00:00 GMT', 'Content-Type': 'application/rss+xml' }).end(BODY);
    case '/gzip':
      return void res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(gzipSync(BODY));
    case '/deflate':
      return void res.writeHead(200, { 'Content-Encoding': 'deflate' }).end(deflateSync(BODY));
    case '/br':
      return void res.writeHead(200, { 'Content-Encoding': 'br' }).end(brotliCompressSync(BODY));
    case '/500':
      return void res.writeHead(500).end('no');
    case '/404':
      return void res.writeHead(404).end('no');
    case '/503-retry-after':
      return void res.writeHead(503, { 'Retry-After': '0' }).end();
    case '/flaky':
      // Fails twice, then answers: retries must get there.
      if (hits.get(path)! <= 2) return void res.writeHead(502).end();
      return void res.writeHead(200).end(BODY);
    case '/r1':
      return void res.writeHead(301, { Location: '/r2' }).end();
    case '/r2':
      return void res.writeHead(302, { Location: '/ok' }).end();
    case '/far':
      return void res.writeHead(302, { Location: `/far${hits.get(path)}` }).end();
    case '/js':
      return void res.writeHead(302, { Location: 'javascript:alert(1)' }).end();
    case '/reset':
      return void req.socket.destroy();
    case '/slow':
      setTimeout(() => res.writeHead(200).end(BODY), 600);
      return;
    case '/hang':
      return;
    default:
      if (path.startsWith('/far')) return void res.writeHead(302, { Location: path + 'x' }).end();
      res.writeHead(404).end();
  }
}

const server = createServer(handle);
let base = '';
let fetcher: Fetcher;
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fetcher = new Fetcher(OPTIONS);
});
after(async () => {
  await fetcher.close();
  server.closeAllConnections();
  server.close();
});

describe('fetcher', () => {
  test('200: body, validators, User-Agent and Accept-Encoding sent', async () => {
    const r = await fetcher.fetch({ url: base + '/ok' });
    assert.equal(r.kind, 'ok');
    if (r.kind !== 'ok') return;
    assert.equal(Buffer.from(r.body).toString(), BODY);
    assert.equal(r.etag, '"v1"');
    assert.equal(r.lastModified, 'Mon, 23 Nov 2026 10:00:00 GMT');
    assert.equal(lastHeaders['user-agent'], OPTIONS.userAgent);
    assert.match(String(lastHeaders['accept-encoding']), /gzip/);
  });

  test('conditional GET: 304 is not-modified', async () => {
    const r = await fetcher.fetch({ url: base + '/ok', etag: '"v1"' });
    assert.equal(r.kind, 'not-modified');
  });

  test('gzip, deflate and br bodies are decoded', async () => {
    for (const p of ['/gzip', '/deflate', '/br']) {
      const r = await fetcher.fetch({ url: base + p });
      assert.equal(r.kind === 'ok' && Buffer.from(r.body).toString(), BODY, p);
    }
  });

  test('5xx is retried, then reported with the attempts made', async () => {
    const r = await fetcher.fetch({ url: base + '/500' });
    assert.equal(r.kind, 'error');
    if (r.kind !== 'error') return;
    assert.equal(r.code, 'http_status');
    assert.equal(r.status, 500);
    assert.equal(r.attempts, 3);
    assert.equal(hits.get('/500'), 3);
  });

  test('a source that recovers within the retries succeeds', async () => {
    const r = await fetcher.fetch({ url: base + '/flaky' });
    assert.equal(r.kind, 'ok');
    assert.equal(r.attempts, 3);
  });

  test('404 is not retried', async () => {
    const r = await fetcher.fetch({ url: base + '/404' });
    assert.equal(r.kind === 'error' && r.status, 404);
    assert.equal(r.attempts, 1);
  });

  test('Retry-After is honoured and reported', async () => {
    const r = await fetcher.fetch({ url: base + '/503-retry-after' });
    assert.equal(r.kind === 'error' && r.retryAfterMs, 0);
    assert.equal(r.attempts, 3);
    assert.equal(parseRetryAfter('120'), 120_000);
    assert.equal(parseRetryAfter(new Date(Date.now() + 60_000).toUTCString())! > 50_000, true);
    assert.equal(parseRetryAfter('soon'), undefined);
  });

  test('redirects: a chain is followed, too many and non-http targets are refused', async () => {
    const ok = await fetcher.fetch({ url: base + '/r1' });
    assert.equal(ok.kind === 'ok' && ok.finalUrl, base + '/ok');
    const far = await fetcher.fetch({ url: base + '/far' });
    assert.equal(far.kind === 'error' && far.code, 'too_many_redirects');
    const js = await fetcher.fetch({ url: base + '/js' });
    assert.equal(js.kind === 'error' && js.code, 'bad_redirect');
  });

  test('a reset connection is a network error', async () => {
    const r = await fetcher.fetch({ url: base + '/reset' });
    assert.equal(r.kind === 'error' && r.code, 'network');
  });

  test('a hanging server times out; a slow one does not delay a fast one', async () => {
    const started = Date.now();
    const [hang, fast] = await Promise.all([
      fetcher.fetch({ url: base + '/hang' }),
      fetcher.fetch({ url: base + '/ok' }).then((r) => ({ r, at: Date.now() })),
    ]);
    assert.equal(hang.kind === 'error' && hang.code, 'timeout');
    assert.equal(fast.r.kind, 'ok');
    assert.ok(fast.at - started < hang.ms, 'the fast fetch finished long before the hang gave up');
  });

  test('the caller can abort', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await fetcher.fetch({ url: base + '/slow' }, controller.signal);
    assert.equal(r.kind === 'error' && r.code, 'aborted');
    assert.ok(r.ms < 500);
  });
});
