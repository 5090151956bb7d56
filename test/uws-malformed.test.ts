/**
 * Pins what the uWebSockets.js release in use (20.57) does with malformed or unusual requests
 * sent straight to the service, before or instead of our code. Every one gets an answer at
 * once: uWS's own (a status line, `Connection: close`, an HTML body, the connection closed), or
 * the service's JSON when uWS lets it through. When a uWS upgrade changes any of these, this
 * file fails: revisit the table in deploy/README.md and the proxy (deploy/nginx, which answers
 * all of them in JSON, test/nginx.test.ts).
 *
 * The release before (20.30) answered none of these: it closed the connection or left it
 * hanging until its idle timeout.
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

/** Who answers: uWS itself (HTML, connection closed) or the service (JSON). */
type By = 'uws' | 'service';

const CASES: ReadonlyArray<readonly [string, string | Buffer, number, By]> = [
  ['unknown method FOO', `FOO /health HTTP/1.1\r\n${H}\r\n`, 405, 'service'],
  ['unknown method PROPFIND', `PROPFIND /health HTTP/1.1\r\n${H}\r\n`, 405, 'service'],
  // uWS hands methods over in lower case, whatever their case on the wire.
  ['lower-case method', `get /health HTTP/1.1\r\n${H}\r\n`, 200, 'service'],
  ['Content-Length with Transfer-Encoding', `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 'uws'],
  ['non-numeric Content-Length', `POST /mcp HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`, 400, 'uws'],
  ['HTTP/1.0 without Host', 'GET /health HTTP/1.0\r\n\r\n', 505, 'uws'],
  ['HTTP/1.0 with Host', `GET /health HTTP/1.0\r\n${H}\r\n`, 505, 'uws'],
  ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400, 'uws'],
  ['49 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(48)}\r\n`, 200, 'service'],
  ['98 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(97)}\r\n`, 200, 'service'],
  ['99 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(98)}\r\n`, 431, 'uws'],
  // UWS_HTTP_MAX_HEADERS_SIZE is 16384 by default (src/config.ts); uWS's own default is 4096.
  ['a 9,000-byte header line', `GET /health HTTP/1.1\r\n${H}X-Note: ${'a'.repeat(9000)}\r\n\r\n`, 200, 'service'],
  ['a request head over 16 KiB', `GET /health HTTP/1.1\r\n${H}X-Note: ${'a'.repeat(16_400)}\r\n\r\n`, 431, 'uws'],
  ['\\x01 in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x01b\r\n\r\n`, 400, 'uws'],
  ['NUL in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x00b\r\n\r\n`, 400, 'uws'],
  ['space in a header name', `GET /health HTTP/1.1\r\n${H}X Note: b\r\n\r\n`, 400, 'uws'],
  ['obs-fold continuation line', `GET /health HTTP/1.1\r\n${H}X-Note: a\r\n  b\r\n\r\n`, 400, 'uws'],
  ['space in the target', `GET /news/preview?q=rate cut HTTP/1.1\r\n${H}\r\n`, 505, 'uws'],
  ['absolute-form target', `GET http://wires.test/health HTTP/1.1\r\n${H}\r\n`, 505, 'uws'],
  ['asterisk target', `OPTIONS * HTTP/1.1\r\n${H}\r\n`, 505, 'uws'],
  ['bare LF line endings', 'GET /health HTTP/1.1\nHost: wires.test\n\n', 505, 'uws'],
  ['HTTP/2.0 in the request line', `GET /health HTTP/2.0\r\n${H}\r\n`, 505, 'uws'],
  ['garbage bytes', Buffer.from('\x00\xff\x13garbage\r\n\r\n', 'latin1'), 505, 'uws'],
  ['TLS ClientHello', TLS_HELLO, 505, 'uws'],
];

interface Exchange {
  bytes: Buffer;
  /** Whether the server closed the connection within the wait. */
  closed: boolean;
}

/** Sends `payload` on a fresh connection; resolves with what came back within `ms`, and whether the server closed. */
function exchange(port: number, payload: string | Buffer, ms: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload));
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.on('data', (c) => chunks.push(c));
    socket.on('end', () => done(true));
    socket.on('error', () => done(true));
  });
}

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

describe('uWebSockets.js answers malformed requests itself, or lets the service answer them', () => {
  test('each case gets its pinned status, from uWS (HTML, connection closed) or the service (JSON)', async () => {
    const results = await Promise.all(CASES.map(async ([name, payload, status, by]) => ({ name, status, by, got: await exchange(svc.port, payload, WAIT_MS) })));
    const changed: string[] = [];
    for (const { name, status, by, got } of results) {
      const text = got.bytes.toString('latin1');
      const head = text.slice(0, text.indexOf('\r\n\r\n') + 1);
      const statusOk = text.startsWith(`HTTP/1.1 ${status} `);
      const byOk = by === 'uws' ? /^Connection: close\r$/m.test(head) && !/^Content-Type: application\/json/im.test(head) && got.closed : /^Content-Type: application\/json/im.test(head);
      if (!statusOk || !byOk) changed.push(`${name}: expected ${status} from ${by}, got ${JSON.stringify(text.slice(0, 90))}${got.closed ? ' (closed)' : ''}`);
    }
    assert.deepEqual(changed, [], 'uWS now treats these differently: revisit deploy/README.md and deploy/nginx');
  });

  test('controls: a plain request, and 48 header lines, are served', async () => {
    for (const payload of [`GET /health HTTP/1.1\r\n${H}\r\n`, `GET /health HTTP/1.1\r\n${H}${headerLines(47)}\r\n`]) {
      const got = await exchange(svc.port, payload, 300);
      assert.match(got.bytes.toString('latin1'), /^HTTP\/1\.1 200 /);
      assert.equal(got.closed, false, 'a good request keeps its connection');
    }
  });
});
