/**
 * Pins down the requests that the uWebSockets.js build in use (20.30) never answers: the
 * connection is closed at once or left hanging, before any of our code runs. Each raw request
 * below, sent straight to the service, must get no response byte within 1.5 s. When a future
 * uWS build starts answering one of them, this file fails: revisit deploy/nginx (the proxy
 * that answers all of them, see test/nginx.test.ts) and this list.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestService, type TestService } from './helpers/service.js';

const WAIT_MS = 1500;
const H = 'Host: wires.test\r\n';
const headerLines = (n: number) => Array.from({ length: n }, (_, i) => `X-Filler-${i}: v\r\n`).join('');
/** The first bytes of a TLS ClientHello, as a client speaking HTTPS to the plain port sends. */
const TLS_HELLO = Buffer.concat([Buffer.from('16030100c4010000c00303', 'hex'), Buffer.alloc(32, 7), Buffer.from('000002c02f01000095', 'hex')]);

/** Requests the uWS build drops, by what makes it drop them. */
const UWS_DROPS: ReadonlyArray<readonly [string, string | Buffer]> = [
  // Closed at once.
  ['unknown method FOO', `FOO /health HTTP/1.1\r\n${H}\r\n`],
  ['unknown method PROPFIND', `PROPFIND /health HTTP/1.1\r\n${H}\r\n`],
  ['lower-case method', `get /health HTTP/1.1\r\n${H}\r\n`],
  ['Content-Length with Transfer-Encoding', `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
  ['non-numeric Content-Length', `POST /mcp HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`],
  // Left hanging.
  ['HTTP/1.0 without Host', 'GET /health HTTP/1.0\r\n\r\n'],
  ['HTTP/1.0 with Host', `GET /health HTTP/1.0\r\n${H}\r\n`],
  ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n'],
  ['49 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(48)}\r\n`],
  ['\\x01 in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x01b\r\n\r\n`],
  ['NUL in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x00b\r\n\r\n`],
  ['space in a header name', `GET /health HTTP/1.1\r\n${H}X Note: b\r\n\r\n`],
  ['obs-fold continuation line', `GET /health HTTP/1.1\r\n${H}X-Note: a\r\n  b\r\n\r\n`],
  ['space in the target', `GET /news/preview?q=rate cut HTTP/1.1\r\n${H}\r\n`],
  ['absolute-form target', `GET http://wires.test/health HTTP/1.1\r\n${H}\r\n`],
  ['asterisk target', `OPTIONS * HTTP/1.1\r\n${H}\r\n`],
  ['bare LF line endings', 'GET /health HTTP/1.1\nHost: wires.test\n\n'],
  ['HTTP/2.0 in the request line', `GET /health HTTP/2.0\r\n${H}\r\n`],
  ['garbage bytes', Buffer.from('\x00\xff\x13garbage\r\n\r\n', 'latin1')],
  ['TLS ClientHello', TLS_HELLO],
];

/** Sends `payload` on a fresh connection; resolves with the bytes received within `ms` (or the first ones, with `early`). */
function firstBytes(port: number, payload: string | Buffer, ms: number, early = false): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload));
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks));
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (c) => {
      chunks.push(c);
      if (early) done();
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

describe('uWebSockets.js drops these requests unanswered (deploy/nginx answers them)', () => {
  test('controls: a plain request, and 48 header lines, are answered', async () => {
    const [plain, fortyEight] = await Promise.all([
      firstBytes(svc.port, `GET /health HTTP/1.1\r\n${H}\r\n`, 5000, true),
      firstBytes(svc.port, `GET /health HTTP/1.1\r\n${H}${headerLines(47)}\r\n`, 5000, true),
    ]);
    assert.match(plain.toString('latin1'), /^HTTP\/1\.1 200 /);
    assert.match(fortyEight.toString('latin1'), /^HTTP\/1\.1 200 /);
  });

  test('each case gets no response byte within 1.5 s', async () => {
    const results = await Promise.all(UWS_DROPS.map(async ([name, payload]) => [name, await firstBytes(svc.port, payload, WAIT_MS)] as const));
    const answered = results.filter(([, bytes]) => bytes.length > 0).map(([name, bytes]) => `${name}: ${JSON.stringify(bytes.subarray(0, 60).toString('latin1'))}`);
    assert.deepEqual(answered, [], 'this uWS build now answers these: revisit deploy/nginx and this list');
  });
});
