/**
 * The fetcher against real loopback servers: what it does with every way a source can
 * answer (or not). Servers listen on 127.0.0.1 port 0;
 * every server-side loop is bounded in count and time, and timing assertions are loose
 * (ordering, or generous upper bounds that only a hang would break).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { Fetcher, parseRetryAfter, type FetcherOptions, type FetchResult } from '../src/ingest/fetch/fetcher.js';
import { backoffMs } from '../src/ingest/fetch/retry.js';

const OPTIONS: FetcherOptions = {
  userAgent: 'WiresTest/1.0 test@wires.invalid',
  connectTimeoutMs: 1000,
  headersTimeoutMs: 1000,
  bodyTimeoutMs: 1000,
  totalTimeoutMs: 4000,
  maxBodyBytes: 1024 * 1024,
  maxDecodedBytes: 2 * 1024 * 1024,
  maxRedirects: 3,
  retries: 2,
  retryBaseMs: 20,
  // Every test server is on loopback, redirects between them included (test/ssrf.test.ts checks the refusal).
  allowPrivateDestinations: true,
};

const BODY = '<rss><channel><title>ok</title></channel></rss>';
/** Compressible enough that the compressed size is visibly smaller than the decoded one. */
const BIG = Buffer.from('<item><title>same headline again</title></item>\n'.repeat(500));
const MB = 1024 * 1024;
/** Hand-written Atom snippet with EDGAR's relative feed link and relative entry links: they resolve against the URL after redirects. */
const MOVED_FEED = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>moved</title><id>urn:moved</id><link rel="alternate" href="/v2/"/>
<entry><id>urn:1</id><title>Relative to the feed link</title><link href="news/1"/><updated>2026-11-23T15:00:00Z</updated></entry>
<entry><id>urn:2</id><title>Relative to an xml:base, itself relative to the document URL</title><link xml:base="archive/" href="2"/><updated>2026-11-23T15:00:00Z</updated></entry>
<entry><id>urn:3</id><title>Absolute</title><link href="https://www.example.com/3"/><updated>2026-11-23T15:00:00Z</updated></entry></feed>`;
const LAST_MODIFIED = 'Mon, 23 Nov 2026 10:00:00 GMT';

/** Per path: how many requests arrived, and when. */
const hits = new Map<string, number[]>();
const count = (path: string) => hits.get(path)?.length ?? 0;
let lastHeaders: IncomingMessage['headers'] = {};
/** Bytes the /huge route managed to write before the client went away. */
let hugeSent = 0;
let bombMembersSent = 0;

/** A gzip member of 1 MiB of zeros (about 1 KiB); 1024 members in a row are a valid 1 GiB gzip body. */
const ZERO_MEMBER = gzipSync(Buffer.alloc(MB), { level: 9 });

/** Writes `next()` chunks with backpressure until it returns undefined or the client leaves. */
function pump(res: ServerResponse, next: () => Buffer | undefined): void {
  let closed = false;
  res.on('close', () => (closed = true));
  const go = () => {
    for (;;) {
      if (closed) return;
      const chunk = next();
      if (!chunk) return void res.end();
      if (!res.write(chunk)) return void res.once('drain', go);
    }
  };
  go();
}

function handleA(req: IncomingMessage, res: ServerResponse): void {
  const path = new URL(req.url!, 'http://x').pathname;
  hits.set(path, [...(hits.get(path) ?? []), Date.now()]);
  lastHeaders = req.headers;
  const n = count(path);
  switch (path) {
    case '/ok':
      if (req.headers['if-none-match'] === '"v1"' || req.headers['if-modified-since'] === LAST_MODIFIED) {
        return void res.writeHead(304).end();
      }
      return void res.writeHead(200, { ETag: '"v1"', 'Last-Modified': LAST_MODIFIED, 'Content-Type': 'application/rss+xml' }).end(BODY);
    case '/enc/gzip':
      return void res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(gzipSync(BIG));
    case '/enc/deflate':
      return void res.writeHead(200, { 'Content-Encoding': 'deflate' }).end(deflateSync(BIG));
    case '/enc/deflate-raw':
      return void res.writeHead(200, { 'Content-Encoding': 'deflate' }).end(deflateRawSync(BIG));
    case '/enc/br':
      return void res.writeHead(200, { 'Content-Encoding': 'br' }).end(brotliCompressSync(BIG));
    case '/enc/not-really-gzip':
      return void res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(BODY);
    case '/enc/broken-br':
      return void res.writeHead(200, { 'Content-Encoding': 'br' }).end(Buffer.from('this is not brotli at all, sorry'));
    case '/enc/truncated-gzip':
      return void res.writeHead(200, { 'Content-Encoding': 'gzip' }).end(gzipSync(BIG).subarray(0, 40));
    case '/enc/zstd':
      return void res.writeHead(200, { 'Content-Encoding': 'zstd' }).end('x');
    case '/huge': {
      // 50 MB, chunked (no Content-Length), written only as fast as the client reads.
      hugeSent = 0;
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      return pump(res, () => (hugeSent < 50 * MB ? ((hugeSent += chunk.length), chunk) : undefined));
    }
    case '/huge-announced':
      // Announces 50 MB and then sends almost nothing: the cap must act on the header alone.
      res.writeHead(200, { 'Content-Length': String(50 * MB) });
      return void res.write('a');
    case '/bomb':
      bombMembersSent = 0;
      res.writeHead(200, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/xml' });
      return pump(res, () => (bombMembersSent < 1024 ? (bombMembersSent++, ZERO_MEMBER) : undefined));
    case '/500':
      return void res.writeHead(500).end('no');
    case '/404':
      return void res.writeHead(404).end('no');
    case '/flaky':
      return void (n <= 2 ? res.writeHead(502).end() : res.writeHead(200).end(BODY));
    case '/503-once':
      return void (n === 1 ? res.writeHead(503, { 'Retry-After': '1' }).end() : res.writeHead(200).end(BODY));
    case '/503-later':
      return void res.writeHead(503, { 'Retry-After': '3600' }).end();
    case '/503-2s':
      return void res.writeHead(503, { 'Retry-After': '2' }).end();
    case '/403':
      return void res.writeHead(403, { 'Retry-After': new Date(Date.now() + 120_000).toUTCString() }).end('Undeclared Automated Tool');
    case '/chain/r1':
      return void res.writeHead(301, { Location: 'r2' }).end(); // relative: /chain/r2
    case '/chain/r2':
      return void res.writeHead(302, { Location: '/ok' }).end();
    case '/old/feed':
      return void res.writeHead(301, { Location: '/v2/feeds/atom.xml' }).end();
    case '/v2/feeds/atom.xml':
      return void res.writeHead(200, { 'Content-Type': 'application/atom+xml' }).end(MOVED_FEED);
    case '/loop/a':
      return void res.writeHead(302, { Location: '/loop/b' }).end();
    case '/loop/b':
      return void res.writeHead(307, { Location: '/loop/a' }).end();
    case '/ftp':
      return void res.writeHead(302, { Location: 'ftp://example.invalid/feed' }).end();
    case '/to-b':
      return void res.writeHead(302, { Location: `${baseB}/echo` }).end();
    case '/post':
      return void res.writeHead(303, { Location: '/echo' }).end();
    case '/echo':
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers }));
    case '/slow':
      return void setTimeout(() => res.writeHead(200).end(BODY), 800).unref();
    case '/trickle': {
      // Headers, then one byte every 100 ms: never silent long enough for the body timeout.
      res.writeHead(200);
      let sent = 0;
      const timer = setInterval(() => (++sent > 100 ? (clearInterval(timer), res.end()) : res.write('a')), 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    case '/never':
      return; // headers never come
    default:
      if (path.startsWith('/far/')) return void res.writeHead(302, { Location: `/far/${Number(path.slice(5)) + 1}` }).end();
      res.writeHead(404).end();
  }
}

function handleB(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ origin: 'b', headers: req.headers }));
}

const serverA = createServer(handleA);
const serverB = createServer(handleB);
/** Accepts connections and never says a word. */
const silentSockets = new Set<Socket>();
const silent: NetServer = createNetServer((s) => {
  silentSockets.add(s);
  s.on('close', () => silentSockets.delete(s));
});
/** Resets every connection as soon as a request arrives. */
const resetter: NetServer = createNetServer((s) => s.once('data', () => s.resetAndDestroy()));

let baseA = '';
let baseB = '';
let baseSilent = '';
let baseReset = '';
const fetchers: Fetcher[] = [];
let fetcher: Fetcher;

function make(overrides: Partial<FetcherOptions> = {}): Fetcher {
  const f = new Fetcher({ ...OPTIONS, ...overrides });
  fetchers.push(f);
  return f;
}

async function listen(server: Server | NetServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function expectError(r: FetchResult, code: string): Extract<FetchResult, { kind: 'error' }> {
  assert.equal(r.kind, 'error', `expected ${code}, got ${JSON.stringify({ ...r, body: undefined })}`);
  assert.ok(r.kind === 'error');
  assert.equal(r.code, code, r.message);
  assert.ok(r.message.length > 0 && r.message.length <= 240 && !r.message.includes('\n'), `short message: ${r.message}`);
  return r;
}

before(async () => {
  [baseA, baseB, baseSilent, baseReset] = await Promise.all([listen(serverA), listen(serverB), listen(silent), listen(resetter)]);
  fetcher = make();
});

after(async () => {
  await Promise.all(fetchers.map((f) => f.close()));
  for (const s of silentSockets) s.destroy();
  serverA.closeAllConnections();
  serverB.closeAllConnections();
  await Promise.all([serverA, serverB, silent, resetter].map((s) => new Promise((r) => s.close(r))));
});

describe('fetcher: answers', () => {
  test('200: body, validators, User-Agent and Accept-Encoding sent', async () => {
    const r = await fetcher.fetch({ url: baseA + '/ok' });
    assert.equal(r.kind, 'ok');
    assert.ok(r.kind === 'ok');
    assert.equal(Buffer.from(r.body).toString(), BODY);
    assert.equal(r.etag, '"v1"');
    assert.equal(r.lastModified, LAST_MODIFIED);
    assert.equal(r.contentType, 'application/rss+xml');
    assert.equal(r.finalUrl, baseA + '/ok');
    assert.equal(r.bytes, BODY.length);
    assert.equal(r.attempts, 1);
    assert.equal(lastHeaders['user-agent'], OPTIONS.userAgent);
    assert.equal(lastHeaders['accept-encoding'], 'gzip, deflate, br');
    assert.equal(lastHeaders['if-none-match'], undefined);
  });

  test('conditional GET: validators are sent, 304 is not-modified and carries no body', async () => {
    const byEtag = await fetcher.fetch({ url: baseA + '/ok', etag: '"v1"', lastModified: LAST_MODIFIED });
    assert.equal(lastHeaders['if-none-match'], '"v1"');
    assert.equal(lastHeaders['if-modified-since'], LAST_MODIFIED);
    assert.equal(byEtag.kind, 'not-modified');
    assert.ok(!('body' in byEtag));
    // The 304 sent no validators: the ones we sent come back so the caller keeps them.
    assert.equal(byEtag.kind === 'not-modified' && byEtag.etag, '"v1"');
    const byDate = await fetcher.fetch({ url: baseA + '/ok', lastModified: LAST_MODIFIED });
    assert.equal(byDate.kind, 'not-modified');
  });

  test('gzip, deflate (zlib and raw) and br bodies are decoded; bytes counts the wire', async () => {
    for (const p of ['/enc/gzip', '/enc/deflate', '/enc/deflate-raw', '/enc/br']) {
      const r = await fetcher.fetch({ url: baseA + p });
      assert.equal(r.kind, 'ok', p);
      assert.ok(r.kind === 'ok');
      assert.ok(Buffer.from(r.body).equals(BIG), p);
      assert.ok(r.bytes < BIG.length / 10, `${p}: ${r.bytes} bytes on the wire`);
    }
  });

  test('bad encodings: undecodable and truncated bodies, unknown codings; a mislabelled plain body passes', async () => {
    expectError(await fetcher.fetch({ url: baseA + '/enc/broken-br' }), 'bad_encoding');
    expectError(await fetcher.fetch({ url: baseA + '/enc/truncated-gzip' }), 'bad_encoding');
    expectError(await fetcher.fetch({ url: baseA + '/enc/zstd' }), 'bad_encoding');
    const plain = await fetcher.fetch({ url: baseA + '/enc/not-really-gzip' });
    assert.equal(plain.kind === 'ok' && Buffer.from(plain.body).toString(), BODY);
  });
});

describe('fetcher: size caps', () => {
  test('a 50 MB body stops at the cap, without reading the rest', async () => {
    const r = expectError(await fetcher.fetch({ url: baseA + '/huge' }), 'too_large');
    assert.equal(r.attempts, 1, 'too large is not retried');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(hugeSent < 25 * MB, `the server only got to write ${hugeSent} bytes`);
  });

  test('a Content-Length over the cap is refused on the header alone', async () => {
    const r = expectError(await fetcher.fetch({ url: baseA + '/huge-announced' }), 'too_large');
    assert.match(r.message, /Content-Length/);
  });

  test('a gzip bomb (1 GiB of zeros) stops at the decoded cap without inflating it in memory', async () => {
    const bombFetcher = make({ maxBodyBytes: 4 * MB, maxDecodedBytes: 8 * MB });
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const r = expectError(await bombFetcher.fetch({ url: baseA + '/bomb' }), 'decoded_too_large');
      assert.equal(r.attempts, 1);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    assert.ok(peak - baseline < 256 * MB, `rss grew by ${Math.round((peak - baseline) / MB)} MB`);
  });
});

describe('fetcher: redirects', () => {
  test('a chain within the limit is followed, relative locations resolved', async () => {
    const r = await fetcher.fetch({ url: baseA + '/chain/r1' });
    assert.equal(r.kind === 'ok' && r.finalUrl, baseA + '/ok');
    assert.equal(count('/chain/r2'), 1);
  });

  test('a loop is a redirect_loop, an endless chain too_many_redirects, a non-http target blocked', async () => {
    expectError(await fetcher.fetch({ url: baseA + '/loop/a' }), 'redirect_loop');
    const far = expectError(await fetcher.fetch({ url: baseA + '/far/0' }), 'too_many_redirects');
    assert.equal(far.attempts, 1);
    assert.equal(count('/far/4'), 0, 'no request beyond maxRedirects');
    expectError(await fetcher.fetch({ url: baseA + '/ftp' }), 'blocked');
    expectError(await fetcher.fetch({ url: 'file:///etc/passwd' }), 'blocked');
    expectError(await fetcher.fetch({ url: 'not a url' }), 'blocked');
  });

  test('303 after a POST becomes a GET; credentials do not follow to another origin', async () => {
    const post = await fetcher.fetch({ url: baseA + '/post', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(post.kind, 'ok');
    assert.equal(post.kind === 'ok' && JSON.parse(Buffer.from(post.body).toString()).method, 'GET');
    const cross = await fetcher.fetch({ url: baseA + '/to-b', headers: { Authorization: 'Bearer secret', Accept: 'application/json' } });
    assert.equal(cross.kind, 'ok');
    assert.ok(cross.kind === 'ok');
    const seen = JSON.parse(Buffer.from(cross.body).toString()) as { origin: string; headers: Record<string, string> };
    assert.equal(seen.origin, 'b');
    assert.equal(seen.headers.authorization, undefined);
    assert.equal(seen.headers.accept, 'application/json');
  });
});

describe('fetcher: retries', () => {
  test('500 is retried, then reported with attempts = retries + 1', async () => {
    const r = expectError(await fetcher.fetch({ url: baseA + '/500' }), 'http_status');
    assert.equal(r.status, 500);
    assert.equal(r.attempts, OPTIONS.retries + 1);
    assert.equal(count('/500'), OPTIONS.retries + 1);
  });

  test('a source that recovers within the retries succeeds', async () => {
    const r = await fetcher.fetch({ url: baseA + '/flaky' });
    assert.equal(r.kind, 'ok');
    assert.equal(r.attempts, 3);
  });

  test('404 and 403 are not retried; 403 carries its Retry-After', async () => {
    const nf = expectError(await fetcher.fetch({ url: baseA + '/404' }), 'http_status');
    assert.equal(nf.status, 404);
    assert.equal(nf.attempts, 1);
    assert.equal(count('/404'), 1);
    const forbidden = expectError(await fetcher.fetch({ url: baseA + '/403' }), 'http_status');
    assert.equal(forbidden.attempts, 1);
    assert.ok(forbidden.retryAfterMs! > 100_000 && forbidden.retryAfterMs! <= 120_000);
  });

  test('503 with Retry-After: the next attempt waits for it', async () => {
    const r = await fetcher.fetch({ url: baseA + '/503-once' });
    assert.equal(r.kind, 'ok');
    assert.equal(r.attempts, 2);
    const [first, second] = hits.get('/503-once')!;
    assert.ok(second! - first! >= 900, `second attempt ${second! - first!} ms after the first`);
  });

  test('a Retry-After beyond the deadline ends the fetch at once and is reported', async () => {
    const r = expectError(await fetcher.fetch({ url: baseA + '/503-later' }), 'http_status');
    assert.equal(r.attempts, 1);
    assert.equal(r.retryAfterMs, 3_600_000);
    assert.ok(r.ms < 1000);
  });

  test('Retry-After parsing and backoff bounds', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 10:01:00 GMT', now), 60_000);
    assert.equal(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('99999999', now), 24 * 3_600_000);
    assert.equal(parseRetryAfter('soon', now), undefined);
    assert.equal(parseRetryAfter(undefined, now), undefined);
    assert.equal(
      backoffMs(1, 500, () => 0.999),
      499,
    );
    assert.equal(
      backoffMs(3, 500, () => 0.999),
      1998,
    );
    assert.equal(
      backoffMs(1, 500, () => 0),
      0,
    );
  });
});

describe('fetcher: network trouble', () => {
  test('a server that accepts and never answers times out within the deadline', async () => {
    const f = make({ headersTimeoutMs: 400, totalTimeoutMs: 1500 });
    const r = expectError(await f.fetch({ url: baseSilent + '/feed' }), 'timeout');
    assert.ok(r.attempts >= 2, 'header timeouts are retried while time remains');
    assert.ok(r.ms < 1500 + 1000, `gave up after ${r.ms} ms`);
  });

  test('a body trickling forever is stopped by the overall deadline', async () => {
    const f = make({ totalTimeoutMs: 1500 });
    const r = expectError(await f.fetch({ url: baseA + '/trickle' }), 'timeout');
    assert.ok(r.ms < 1500 + 1000, `gave up after ${r.ms} ms`);
  });

  test('a slow source does not delay fast ones fetched concurrently', async () => {
    const done: string[] = [];
    const track = (name: string, p: Promise<FetchResult>) => p.then((r) => (done.push(name), r));
    const results = await Promise.all([
      track('slow', fetcher.fetch({ url: baseA + '/slow' })),
      track('fast-other-host', fetcher.fetch({ url: baseB + '/' })),
      track('fast-same-host', fetcher.fetch({ url: baseA + '/ok' })),
    ]);
    assert.deepEqual(
      results.map((r) => r.kind),
      ['ok', 'ok', 'ok'],
    );
    assert.equal(done[2], 'slow', `completion order: ${done.join(', ')}`);
  });

  test('a reset connection is a network error, retried', async () => {
    const r = expectError(await fetcher.fetch({ url: baseReset + '/feed' }), 'network');
    assert.equal(r.attempts, OPTIONS.retries + 1);
  });

  test('a refused connection is a network error', async () => {
    const closed = createNetServer();
    const url = await listen(closed);
    await new Promise((r) => closed.close(r));
    const r = expectError(await make({ retries: 0 }).fetch({ url }), 'network');
    assert.match(r.message, /refused/);
  });
});

describe('fetcher: stopping', () => {
  test('the caller aborts a request in flight promptly', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = expectError(await fetcher.fetch({ url: baseA + '/never' }, controller.signal), 'aborted');
    assert.ok(r.ms < 1000, `aborted after ${r.ms} ms`);
  });

  test('the caller aborts a backoff sleep promptly', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const r = expectError(await fetcher.fetch({ url: baseA + '/503-2s' }, controller.signal), 'aborted');
    assert.equal(r.attempts, 1);
    assert.ok(r.ms < 1500, `aborted after ${r.ms} ms`);
  });

  test('an already aborted signal sends nothing', async () => {
    const before = count('/ok');
    expectError(await fetcher.fetch({ url: baseA + '/ok' }, AbortSignal.abort()), 'aborted');
    assert.equal(count('/ok'), before);
  });

  test('close() ends fetches in flight; later fetches are aborted, not thrown', async () => {
    const f = make();
    const pending = f.fetch({ url: baseA + '/never' });
    await new Promise((r) => setTimeout(r, 50));
    await f.close();
    expectError(await pending, 'aborted');
    expectError(await f.fetch({ url: baseA + '/ok' }), 'aborted');
  });
});

describe('poll task: the final URL reaches the parser', () => {
  test('relative links resolve against the URL after redirects, not the one requested', async () => {
    // Imported here, last: importing the worker module lowers the calling thread's priority (WORKER_NICE).
    const { runPoll } = await import('../src/ingest/poll-task.js');
    const { SOURCES } = await import('../src/catalog/index.js');
    const source = SOURCES.find((s) => s.id === 'theverge')!;
    const r = await runPoll({ source, request: { url: baseA + '/old/feed' }, now: Date.parse('2026-11-23T15:30:00Z'), fetcher: OPTIONS });
    assert.equal(r.kind, 'items', JSON.stringify(r));
    assert.ok(r.kind === 'items');
    const items = new TextDecoder()
      .decode(r.items)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { url: string });
    assert.deepEqual(
      items.map((i) => i.url),
      [baseA + '/v2/news/1', baseA + '/v2/feeds/archive/2', 'https://www.example.com/3'],
    );
    assert.equal(r.skipped, 0);
  });
});
