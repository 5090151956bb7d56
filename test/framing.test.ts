/**
 * Message framing (RFC 9112 §6.3) of every answer the service gives, read by a strict raw
 * HTTP/1.1 client that reads each body to its exact end on a keep-alive connection and then
 * sends the next request on the same connection: an answer whose end the client cannot tell
 * (no Content-Length, no chunking, no `Connection: close`) leaves a keep-alive client stuck.
 *
 * The case it was written for: a `202 Accepted` to an MCP notification had neither length nor
 * chunking; curl hung, and through nginx the client got a chunked body with no last chunk for 30 s.
 *
 * Every route of the catalogue, every method and status the service answers (and uWS's own
 * answers to malformed requests), once straight to the service and once through the shipped
 * nginx (deploy/nginx).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PAID_ROUTES, PREVIEW_ROUTES, REDIRECTS, ROUTES } from '../src/catalog/index.js';
import { freePort } from './helpers/loopback.js';
import { NGINX, startNginx, type Nginx } from './helpers/nginx.js';
import { encodePayment, signPayment } from './helpers/payments.js';
import { PAY_TO, startTestService, type TestService } from './helpers/service.js';

/** A whole answer (head and body) must arrive within this. */
const ANSWER_MS = 3000;
/** After an answer that may end its connection without saying so: how long to watch for the close. */
const CLOSE_GRACE_MS = 300;
const METRICS_TOKEN = 'framing-test-token';

// ---------------------------------------------------------------------------------------
// A strict HTTP/1.1 client over node:net.

class FramingError extends Error {}

interface Answer {
  statusLine: string;
  status: number;
  headers: [string, string][];
  body: Buffer;
  /** How the body's end was found. */
  framing: 'no body' | 'content-length' | 'chunked' | 'close';
  /** The answer said `Connection: close`. */
  close: boolean;
}

const header = (a: Pick<Answer, 'headers'>, name: string): string[] => a.headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v);
const tokens = (values: string[]) =>
  values
    .flatMap((v) => v.split(','))
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const show = (b: Buffer, max = 160) => JSON.stringify(b.subarray(0, max).toString('latin1')) + (b.length > max ? `… (${b.length} bytes)` : '');

class Connection {
  private buf = Buffer.alloc(0);
  closed = false;
  private wake: (() => void) | null = null;
  /** Requests sent on this connection. */
  sent = 0;

  private constructor(
    private readonly socket: Socket,
    readonly id: number,
  ) {
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

  private static opened = 0;

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket, ++Connection.opened)));
      socket.once('error', reject);
      socket.setNoDelay(true);
    });
  }

  get pending(): Buffer {
    return this.buf;
  }

  send(payload: string | Buffer): void {
    this.sent++;
    this.socket.write(typeof payload === 'string' ? Buffer.from(payload, 'latin1') : payload);
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Waits until `ready()` (true), the connection closed or the deadline passed (false). */
  private wait(ready: () => boolean, deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.wake = null;
        resolve(ok);
      };
      const check = () => {
        if (ready()) finish(true);
        else if (this.closed) finish(false);
      };
      const timer = setTimeout(() => finish(ready()), Math.max(0, deadline - Date.now()));
      this.wake = check;
      check();
    });
  }

  private take(n: number): Buffer {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  private why(what: string, deadline: number): string {
    return this.closed ? `the connection closed before ${what}` : Date.now() >= deadline ? `no ${what} within ${ANSWER_MS} ms` : `no ${what}`;
  }

  async line(deadline: number, what: string): Promise<string> {
    if (!(await this.wait(() => this.buf.includes('\r\n'), deadline))) throw new FramingError(this.why(what, deadline));
    const i = this.buf.indexOf('\r\n');
    const line = this.take(i).toString('latin1');
    this.take(2);
    return line;
  }

  async bytes(n: number, deadline: number, what: string): Promise<Buffer> {
    if (!(await this.wait(() => this.buf.length >= n, deadline))) throw new FramingError(`${this.why(what, deadline)}: ${this.buf.length} of ${n} bytes arrived`);
    return Buffer.from(this.take(n));
  }

  /** Everything until the peer closes. */
  async toClose(deadline: number): Promise<Buffer> {
    await this.wait(() => false, deadline);
    if (!this.closed) throw new FramingError(`the body runs until the close, and the connection was still open after ${ANSWER_MS} ms (${this.buf.length} bytes so far)`);
    return Buffer.from(this.take(this.buf.length));
  }

  /** True when the peer closes within `ms` (bytes that come meanwhile stay pending). */
  async closesWithin(ms: number): Promise<boolean> {
    await this.wait(() => false, Date.now() + ms);
    return this.closed;
  }

  /**
   * Reads one answer, its body delimited as RFC 9112 §6.3 says; throws a FramingError (the
   * answer's head attached) where the end of the answer cannot be told or does not come.
   */
  async read(head: boolean): Promise<Answer> {
    const deadline = Date.now() + ANSWER_MS;
    let partial: Pick<Answer, 'statusLine' | 'headers'> = { statusLine: '', headers: [] };
    try {
      for (;;) {
        const statusLine = await this.line(deadline, 'status line');
        partial = { statusLine, headers: [] };
        const m = /^HTTP\/1\.[01] (\d{3})(?: [^\r\n]*)?$/.exec(statusLine);
        if (!m) throw new FramingError(`not a status line: ${JSON.stringify(statusLine.slice(0, 120))}`);
        const status = Number(m[1]);
        const headers: [string, string][] = partial.headers;
        for (;;) {
          const line = await this.line(deadline, 'end of the header section');
          if (line === '') break;
          if (/^[ \t]/.test(line)) throw new FramingError(`obs-fold header line ${JSON.stringify(line)}`);
          const colon = line.indexOf(':');
          const name = colon > 0 ? line.slice(0, colon) : '';
          if (!TOKEN.test(name)) throw new FramingError(`malformed header line ${JSON.stringify(line.slice(0, 120))}`);
          headers.push([name, line.slice(colon + 1).trim()]);
        }
        if (status === 100) continue; // an interim answer; the final one follows
        if (status >= 101 && status < 200) throw new FramingError(`unexpected interim answer ${status}: no request here switches protocols`);
        const answer = { statusLine, status, headers };
        const close = tokens(header(answer, 'connection')).includes('close');
        const te = tokens(header(answer, 'transfer-encoding'));
        const clValues = tokens(header(answer, 'content-length'));
        if (clValues.some((v) => !/^\d+$/.test(v))) throw new FramingError(`invalid Content-Length ${JSON.stringify(header(answer, 'content-length'))}`);
        if (new Set(clValues).size > 1) throw new FramingError(`differing Content-Length values ${JSON.stringify(header(answer, 'content-length'))}`);
        const length = clValues.length ? Number(clValues[0]) : null;
        if (te.length && length !== null) throw new FramingError('both Transfer-Encoding and Content-Length');
        if (status === 204 || status === 304) {
          if (te.length) throw new FramingError(`a ${status} with Transfer-Encoding`);
          if (status === 204 && length !== null && length !== 0) throw new FramingError(`a 204 with Content-Length: ${length}`);
          return { ...answer, body: Buffer.alloc(0), framing: 'no body', close };
        }
        if (head) return { ...answer, body: Buffer.alloc(0), framing: 'no body', close };
        if (te.length) {
          if (te[te.length - 1] !== 'chunked') {
            if (!close) throw new FramingError(`unframed: Transfer-Encoding ${te.join(', ')} does not end in chunked, and no Connection: close`);
            return { ...answer, body: await this.toClose(deadline), framing: 'close', close };
          }
          return { ...answer, body: await this.chunked(deadline), framing: 'chunked', close };
        }
        if (length !== null) return { ...answer, body: await this.bytes(length, deadline, `body of ${length} bytes (Content-Length)`), framing: 'content-length', close };
        if (!close) throw new FramingError('unframed: neither Content-Length nor Transfer-Encoding, and no Connection: close (a keep-alive client cannot tell where the body ends)');
        return { ...answer, body: await this.toClose(deadline), framing: 'close', close };
      }
    } catch (err) {
      if (err instanceof FramingError) (err as FramingError & { partial?: unknown }).partial = partial;
      throw err;
    }
  }

  private async chunked(deadline: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for (;;) {
      const seen = `after ${chunks.length} chunk(s), ${chunks.reduce((n, c) => n + c.length, 0)} bytes`;
      const sizeLine = await this.line(deadline, `chunk size line (chunked body ${seen}; no last chunk)`);
      const m = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(sizeLine);
      if (!m) throw new FramingError(`bad chunk size line ${JSON.stringify(sizeLine.slice(0, 80))} (${seen})`);
      const size = Number.parseInt(m[1]!, 16);
      if (size === 0) break;
      chunks.push(await this.bytes(size, deadline, `chunk of ${size} bytes (${seen})`));
      const crlf = await this.bytes(2, deadline, `CRLF after a chunk (${seen})`);
      if (crlf.toString('latin1') !== '\r\n') throw new FramingError(`chunk not followed by CRLF: ${show(crlf)}`);
    }
    // Trailer section, up to its empty line.
    for (;;) if ((await this.line(deadline, 'end of the trailer section after the last chunk')) === '') break;
    return Buffer.concat(chunks);
  }
}

// ---------------------------------------------------------------------------------------
// The cases.

type Target = 'direct' | 'nginx';

/**
 * One request and what must come back. `keep`: 'always' (default) when the answer must keep
 * the connection (the next request goes on it); 'may-close' where the connection may end
 * after the answer (uWS's own answers, a refused body), said with Connection: close or by
 * closing right after a complete answer.
 */
interface Case {
  name: string;
  req: string | Buffer;
  head?: boolean;
  status: number;
  keep?: 'always' | 'may-close';
  /** The service that answers it (default: the main one). */
  service?: 'main' | 'unpaid';
  /**
   * The request announces body bytes it never sends: after a complete `Connection: close`
   * answer the server may wait for them before closing (nginx's lingering close does).
   */
  bodyUnsent?: boolean;
}

const H = 'Host: wires.test\r\n';
const JSON_ACCEPT = 'Accept: application/json\r\n';
const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\n${H}${JSON_ACCEPT}${extra}\r\n`;
const head = (path: string, extra = '') => `HEAD ${path} HTTP/1.1\r\n${H}${JSON_ACCEPT}${extra}\r\n`;
const withBody = (method: string, path: string, body: string, extra = '') =>
  `${method} ${path} HTTP/1.1\r\n${H}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const headerLines = (n: number) => Array.from({ length: n }, (_, i) => `X-Filler-${i}: v\r\n`).join('');
const UPGRADE = 'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n';
const TLS_HELLO = Buffer.concat([Buffer.from('16030100c4010000c00303', 'hex'), Buffer.alloc(32, 7), Buffer.from('000002c02f01000095', 'hex')]);

/** The smallest valid query of a route. */
const query = (path: string) => (ROUTES.find((r) => r.path === path)!.def.qRequired ? '?q=rate' : '');
const byTarget = (t: Target, direct: number, nginx: number) => (t === 'direct' ? direct : nginx);

/** Requests grouped into sequences: each sequence goes on one connection (a new one only where an answer may close it). */
async function sequences(t: Target): Promise<Case[][]> {
  const mcpInit = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'framing-test', version: '1.0.0' } } });
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
  const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  const metricsStatus = byTarget(t, 200, 404);
  const metricsUnauthorized = byTarget(t, 401, 404);
  const auth = `Authorization: Bearer ${METRICS_TOKEN}\r\n`;
  // A signed payment whose authorization has expired: refused by the payment core (402).
  const expired = async (amount: string) => encodePayment((await signPayment({ amount, validBefore: 1 })).payload);

  const free: Case[] = [
    { name: 'GET / (JSON)', req: get('/'), status: 200 },
    { name: 'GET / (HTML)', req: `GET / HTTP/1.1\r\n${H}Accept: text/html\r\n\r\n`, status: 200 },
    { name: 'HEAD /', req: head('/'), head: true, status: 200 },
    { name: 'GET /health', req: get('/health'), status: 200 },
    { name: 'HEAD /health', req: head('/health'), head: true, status: 200 },
    { name: 'GET /sources', req: get('/sources'), status: 200 },
    { name: 'HEAD /sources', req: head('/sources'), head: true, status: 200 },
    { name: 'GET /tickers without the map (503)', req: get('/tickers?q=apple'), status: 503 },
    { name: 'GET /tickers without a query (400)', req: get('/tickers'), status: 400 },
    { name: 'GET /mcp', req: get('/mcp'), status: 200 },
    { name: 'HEAD /mcp', req: head('/mcp'), head: true, status: 200 },
    { name: 'GET /llms-full.txt', req: get('/llms-full.txt'), status: 200 },
    { name: 'HEAD /llms-full.txt', req: head('/llms-full.txt'), head: true, status: 200 },
    { name: 'GET /openapi.json', req: get('/openapi.json'), status: 200 },
    { name: 'HEAD /openapi.json', req: head('/openapi.json'), head: true, status: 200 },
    { name: 'GET /.well-known/x402', req: get('/.well-known/x402'), status: 200 },
    { name: 'HEAD /.well-known/x402', req: head('/.well-known/x402'), head: true, status: 200 },
  ];
  const metrics: Case[] = [
    { name: 'GET /metrics with the token', req: get('/metrics', auth), status: metricsStatus },
    { name: 'HEAD /metrics with the token', req: head('/metrics', auth), head: true, status: metricsStatus },
    { name: 'GET /metrics without the token', req: get('/metrics'), status: metricsUnauthorized },
    { name: 'HEAD /metrics without the token', req: head('/metrics'), head: true, status: metricsUnauthorized },
  ];
  const previews: Case[] = PREVIEW_ROUTES.flatMap((r) => [
    { name: `GET ${r.path}`, req: get(r.path + query(r.path)), status: 200 },
    { name: `HEAD ${r.path}`, req: head(r.path + query(r.path)), head: true, status: 200 },
    { name: `GET ${r.path} with a bad parameter`, req: get(`${r.path}?limit=4${query(r.path).replace('?', '&')}`), status: 400 },
  ]);
  const redirects: Case[] = [...REDIRECTS.keys()].flatMap((from) => [
    { name: `GET ${from} (redirect)`, req: get(`${from}?limit=1`), status: 308 },
    { name: `HEAD ${from} (redirect)`, req: head(from), head: true, status: 308 },
  ]);
  const paid: Case[] = [];
  for (const r of PAID_ROUTES) {
    paid.push(
      { name: `GET ${r.path} without payment`, req: get(r.path + query(r.path)), status: 402 },
      { name: `HEAD ${r.path} without payment`, req: head(r.path + query(r.path)), head: true, status: 402 },
      { name: `GET ${r.path} with a bad parameter`, req: get(`${r.path}?bogus=1`), status: 400 },
      { name: `GET ${r.path} with a malformed payment`, req: get(r.path + query(r.path), `PAYMENT-SIGNATURE: ${'a'.repeat(4000)}\r\n`), status: 400 },
      { name: `DELETE ${r.path}`, req: `DELETE ${r.path} HTTP/1.1\r\n${H}\r\n`, status: 405 },
      { name: `OPTIONS ${r.path}`, req: `OPTIONS ${r.path} HTTP/1.1\r\n${H}Origin: https://example.test\r\nAccess-Control-Request-Method: GET\r\n\r\n`, status: 204 },
    );
  }
  const first = PAID_ROUTES[0]!;
  const firstUrl = first.path + query(first.path);
  const payments: Case[] = [
    { name: `GET ${first.path} from a browser (paywall page)`, req: `GET ${firstUrl} HTTP/1.1\r\n${H}Accept: text/html\r\n\r\n`, status: 402 },
    { name: `HEAD ${first.path} from a browser`, req: `HEAD ${firstUrl} HTTP/1.1\r\n${H}Accept: text/html\r\n\r\n`, head: true, status: 402 },
    { name: `GET ${first.path} with an undecodable X-PAYMENT`, req: get(firstUrl, 'X-PAYMENT: bm90IGpzb24=\r\n'), status: 400 },
    { name: `GET ${first.path} with an expired signed payment`, req: get(firstUrl, `PAYMENT-SIGNATURE: ${await expired(first.amount!)}\r\n`), status: 402 },
    { name: `HEAD ${first.path} with a payment (never taken)`, req: head(firstUrl, `PAYMENT-SIGNATURE: ${await expired(first.amount!)}\r\n`), head: true, status: 402 },
    { name: 'GET /cve/preview with a query over 2 KiB', req: get(`/cve/preview?q=${'a'.repeat(3000)}`), status: 414 },
  ];
  const errors: Case[] = [
    { name: 'GET /nope', req: get('/nope'), status: 404 },
    { name: 'HEAD /nope', req: head('/nope'), head: true, status: 404 },
    { name: 'DELETE /health', req: `DELETE /health HTTP/1.1\r\n${H}\r\n`, status: 405 },
    { name: 'PUT /mcp without a body', req: `PUT /mcp HTTP/1.1\r\n${H}\r\n`, status: 405 },
    { name: 'HEAD /stream (426)', req: head('/stream'), head: true, status: 426 },
    { name: 'GET /mcp asking for an event stream', req: `GET /mcp HTTP/1.1\r\n${H}Accept: text/event-stream\r\n\r\n`, status: 405 },
    { name: 'OPTIONS /health', req: `OPTIONS /health HTTP/1.1\r\n${H}\r\n`, status: 204 },
    { name: 'OPTIONS /nope', req: `OPTIONS /nope HTTP/1.1\r\n${H}\r\n`, status: 204 },
    { name: 'unknown method FOO', req: `FOO /health HTTP/1.1\r\n${H}\r\n`, status: 405 },
  ];
  const mcp: Case[] = [
    { name: 'POST /mcp initialize', req: withBody('POST', '/mcp', mcpInit), status: 200 },
    { name: 'POST /mcp notifications/initialized (202)', req: withBody('POST', '/mcp', notification), status: 202 },
    { name: 'POST /mcp ping after the notification', req: withBody('POST', '/mcp', ping), status: 200 },
    { name: 'POST /mcp tools/list', req: withBody('POST', '/mcp', toolsList), status: 200 },
    {
      name: 'POST /mcp ping, chunked request body',
      req: `POST /mcp HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${ping.length.toString(16)}\r\n${ping}\r\n0\r\n\r\n`,
      status: 200,
    },
    { name: 'POST /mcp a second notification (202)', req: withBody('POST', '/mcp', notification), status: 202 },
    { name: 'POST /mcp not JSON', req: withBody('POST', '/mcp', '{not json'), status: 400 },
    {
      name: 'POST /mcp notification, chunked request body (202)',
      req: `POST /mcp HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${notification.length.toString(16)}\r\n${notification}\r\n0\r\n\r\n`,
      status: 202,
    },
  ];
  const stream: Case[] = [
    { name: 'GET /stream without an upgrade', req: get('/stream?wire=cve'), status: 426 },
    { name: 'upgrade /stream with an unknown wire', req: `GET /stream?wire=nope HTTP/1.1\r\n${H}${UPGRADE}\r\n`, status: 400 },
    { name: 'upgrade /stream without a wire', req: `GET /stream HTTP/1.1\r\n${H}${UPGRADE}\r\n`, status: 400 },
    { name: 'upgrade /stream without payment', req: `GET /stream?wire=cve HTTP/1.1\r\n${H}${UPGRADE}\r\n`, status: 402 },
    { name: 'upgrade /stream with a malformed payment', req: `GET /stream?wire=cve HTTP/1.1\r\n${H}${UPGRADE}PAYMENT-SIGNATURE: ${'a'.repeat(4000)}\r\n\r\n`, status: 400 },
  ];
  // Payments off on this service: paid routes and streams answer 503.
  const unavailable: Case[] = [
    { name: `GET ${first.path} with payments off (503)`, req: get(firstUrl), status: 503, service: 'unpaid' },
    { name: `HEAD ${first.path} with payments off (503)`, req: head(firstUrl), head: true, status: 503, service: 'unpaid' },
    { name: 'upgrade /stream with payments off (503)', req: `GET /stream?wire=cve HTTP/1.1\r\n${H}${UPGRADE}\r\n`, status: 503, service: 'unpaid' },
    { name: 'POST /mcp notification with payments off (202)', req: withBody('POST', '/mcp', notification), status: 202, service: 'unpaid' },
    { name: 'GET /health with payments off', req: get('/health'), status: 200, service: 'unpaid' },
  ];
  // Answers that may end the connection: each its own sequence, so one close ends nothing else.
  const mayClose = (name: string, req: string | Buffer, direct: number, nginx: number, extra: Partial<Case> = {}): Case[] => [
    { name, req, status: byTarget(t, direct, nginx), keep: 'may-close', ...extra },
  ];
  const closing: Case[][] = [
    mayClose('GET /health with a body (413)', `GET /health HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`, 413, 413),
    mayClose('HEAD /health with a body (413)', `HEAD /health HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`, 413, 413, { head: true }),
    mayClose('POST /health with a body (405)', `POST /health HTTP/1.1\r\n${H}Content-Length: 2\r\n\r\n{}`, 405, 405),
    mayClose('POST /mcp over 256 KiB (413)', `POST /mcp HTTP/1.1\r\n${H}Content-Type: application/json\r\nContent-Length: 300000\r\n\r\n`, 413, 413, { bodyUnsent: true }),
    mayClose('POST /mcp over 256 KiB, body sent (413)', withBody('POST', '/mcp', `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(270_000)}"}}`), 413, 413),
    mayClose('HTTP/1.0 request', `GET /health HTTP/1.0\r\n${H}\r\n`, 505, 200),
    mayClose('HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\n\r\n', 400, 400),
    mayClose('99 header lines', `GET /health HTTP/1.1\r\n${H}${headerLines(98)}\r\n`, 431, 200),
    mayClose('a request head over 16 KiB', `GET /health HTTP/1.1\r\n${H}X-Note: ${'a'.repeat(16_400)}\r\n\r\n`, 431, 431),
    mayClose('Content-Length with Transfer-Encoding', `POST /mcp HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400, 400),
    mayClose('non-numeric Content-Length', `POST /mcp HTTP/1.1\r\n${H}Content-Length: abc\r\n\r\n`, 400, 400),
    mayClose('\\x01 in a header value', `GET /health HTTP/1.1\r\n${H}X-Note: a\x01b\r\n\r\n`, 400, 200),
    mayClose('space in the target', `GET /news/preview?q=rate cut HTTP/1.1\r\n${H}\r\n`, 505, 400),
    mayClose('HTTP/2.0 in the request line', `GET /health HTTP/2.0\r\n${H}\r\n`, 505, 505),
    mayClose('garbage bytes', Buffer.from('\x00\xff\x13garbage\r\n\r\n', 'latin1'), 505, 400),
    mayClose('TLS ClientHello', TLS_HELLO, 505, 400),
  ];
  // Several requests on one connection, in an order that mixes framings (length, none, HEAD).
  const inGroupsOf = (xs: Case[], n: number) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
  return [free, metrics, ...inGroupsOf(previews, 12), redirects, ...inGroupsOf(paid, 18), payments, errors, mcp, stream, unavailable, ...closing];
}

// ---------------------------------------------------------------------------------------

interface Ports {
  main: number;
  unpaid: number;
}

const SENTINEL: Case = { name: 'GET /health (the next request on the same connection)', req: get('/health'), status: 200 };

/**
 * Sends the cases of one sequence one after the other on one connection, each only once the
 * previous answer has been read to its end, then (`sentinel`) a last request on the same
 * connection.
 * Returns one line per fault.
 */
async function runSequence(t: Target, ports: Ports, seq: Case[], sentinel = true): Promise<{ problems: string[]; framings: Map<string, number> }> {
  const problems: string[] = [];
  const framings = new Map<string, number>();
  const service = seq[0]!.service ?? 'main';
  const port = ports[service];
  let conn: Connection | null = null;
  let previous: string | null = null;
  for (const c of sentinel ? [...seq, SENTINEL] : seq) {
    if (conn?.closed) {
      conn = null;
      previous = null;
    }
    if (!conn) conn = await Connection.open(port);
    const on = `connection #${conn.id}, request ${conn.sent + 1} on it${previous ? `, after "${previous}"` : ''}`;
    conn.send(c.req);
    let a: Answer;
    try {
      a = await conn.read(!!c.head);
    } catch (err) {
      const p = (err as { partial?: Pick<Answer, 'statusLine' | 'headers'> }).partial;
      const seen = p?.statusLine ? `${p.statusLine}; headers ${JSON.stringify(p.headers)}` : `nothing parsable; bytes ${show(conn.pending)}`;
      problems.push(`[${t}] ${c.name} (${on}): ${(err as Error).message} — seen: ${seen}`);
      conn.destroy();
      conn = null;
      previous = null;
      continue;
    }
    framings.set(`${a.status} ${a.framing}`, (framings.get(`${a.status} ${a.framing}`) ?? 0) + 1);
    const seen = `${a.statusLine}; ${a.framing}; headers ${JSON.stringify(a.headers)}; body ${show(a.body, 120)}`;
    if (a.status !== c.status) problems.push(`[${t}] ${c.name} (${on}): status ${a.status}, expected ${c.status} — seen: ${seen}`);
    if (a.close) {
      if (c.keep !== 'may-close') problems.push(`[${t}] ${c.name} (${on}): Connection: close on an answer that should keep the connection — seen: ${seen}`);
      // Said close: then nothing more may come, and the connection must end.
      const closes = await conn.closesWithin(c.bodyUnsent ? CLOSE_GRACE_MS : ANSWER_MS);
      if (conn.pending.length) problems.push(`[${t}] ${c.name} (${on}): ${conn.pending.length} bytes after the end of a Connection: close answer: ${show(conn.pending)} — seen: ${seen}`);
      if (!closes && !c.bodyUnsent) problems.push(`[${t}] ${c.name} (${on}): said Connection: close but the connection was still open after ${ANSWER_MS} ms — seen: ${seen}`);
      conn.destroy();
      conn = null;
      previous = null;
      continue;
    }
    if (c.keep === 'may-close' && (await conn.closesWithin(CLOSE_GRACE_MS))) {
      // Closed right after a complete answer: allowed here, if nothing followed it.
      if (conn.pending.length) problems.push(`[${t}] ${c.name} (${on}): ${conn.pending.length} bytes after the end of the answer, then a close: ${show(conn.pending)} — seen: ${seen}`);
      conn.destroy();
      conn = null;
      previous = null;
      continue;
    }
    previous = c.name;
  }
  conn?.destroy();
  return { problems, framings };
}

async function runAll(t: Target, ports: Ports): Promise<void> {
  const seqs = await sequences(t);
  const results = await Promise.all(seqs.map((s) => runSequence(t, ports, s)));
  const problems = results.flatMap((r) => r.problems);
  const framings = new Map<string, number>();
  for (const r of results) for (const [k, n] of r.framings) framings.set(k, (framings.get(k) ?? 0) + n);
  const requests = seqs.reduce((n, s) => n + s.length, 0);
  assert.ok(requests > 100, `${requests} requests`);
  // Every status the suite means to reach, reached and framed (a route change that lost one shows here).
  const statuses = new Set([...framings.keys()].map((k) => Number(k.split(' ')[0])));
  for (const s of [200, 202, 204, 308, 400, 402, 404, 405, 413, 426, 503]) assert.ok(problems.length > 0 || statuses.has(s), `no ${s} answer was read (${[...statuses].join(', ')})`);
  assert.deepEqual(problems, [], `${problems.length} of ${requests} answers were not framed as RFC 9112 §6.3 requires (answers read: ${JSON.stringify(Object.fromEntries(framings))})`);
}

// ---------------------------------------------------------------------------------------

let svc: TestService;
let unpaid: TestService;

before(async () => {
  svc = await startTestService({ METRICS_TOKEN });
  unpaid = await startTestService({ PAY_TO_ADDRESS: '' });
});

after(async () => {
  await svc?.stop();
  await unpaid?.stop();
});

describe('framing of every answer (RFC 9112 §6.3), read to its end on keep-alive connections', () => {
  test('straight to the service', async () => {
    await runAll('direct', { main: svc.port, unpaid: unpaid.port });
  });

  describe('through the shipped nginx (deploy/nginx)', { skip: !NGINX && !process.env.CI ? 'nginx is not installed (in CI this suite fails instead)' : false }, () => {
    const proxies: Nginx[] = [];
    const ports = { main: 0, unpaid: 0 };

    before(async () => {
      assert.ok(NGINX, 'nginx is required in CI (scripts/install-system-deps.sh)');
      ports.main = await freePort();
      proxies.push(await startNginx(ports.main, `server 127.0.0.1:${svc.port};`));
      ports.unpaid = await freePort();
      proxies.push(await startNginx(ports.unpaid, `server 127.0.0.1:${unpaid.port};`));
    });

    after(async () => {
      for (const p of proxies) await p.stop();
    });

    test('through nginx', async () => {
      await runAll('nginx', ports);
    });
  });
});

/**
 * The connection guard's 503 (connection-guard.ts), answered as a connection opens, before its
 * request is read: the service as its own process with 256 descriptors (prlimit, as
 * test/fd-exhaustion.test.ts runs it), held near the limit by idle connections.
 */
describe("framing of the connection guard's 503 too_many_connections", () => {
  const LIMIT = 256;
  let child: ChildProcess | undefined;
  let port = 0;
  const idle: Socket[] = [];

  before(async () => {
    child = spawn('prlimit', [`--nofile=${LIMIT}:${LIMIT}`, process.execPath, fileURLToPath(new URL('./helpers/service-process.js', import.meta.url))], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: '0',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-framing-fd-')),
        INGEST: '0',
        LOG_LEVEL: 'error',
        PAY_TO_ADDRESS: PAY_TO,
        FACILITATOR_URL: 'http://127.0.0.1:9',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
    port = (JSON.parse(first.value as string) as { port: number }).port;
    // More idle connections than the guard leaves to clients (it refuses from LIMIT - 64 open descriptors on).
    for (let i = 0; i < LIMIT - 40; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => {});
      idle.push(s);
      await new Promise((r) => s.once('connect', r).once('close', r));
    }
  });

  after(() => {
    for (const s of idle) s.destroy();
    child?.kill('SIGKILL');
  });

  test('straight to the service', async () => {
    const refused: Case = { name: 'GET /health near the descriptor limit (503 too_many_connections)', req: get('/health'), status: 503, keep: 'may-close' };
    const { problems, framings } = await runSequence('direct', { main: port, unpaid: port }, [refused], false);
    assert.deepEqual(problems, []);
    assert.ok(framings.has('503 content-length'), JSON.stringify(Object.fromEntries(framings)));
  });
});

/** The strict client itself, against canned answers: each fault is caught, each correct framing read. */
test('the raw client fails each framing fault and reads each correct framing', async () => {
  const ANSWERS: ReadonlyArray<readonly [string, string, RegExp | null, boolean?]> = [
    ['unframed 202', 'HTTP/1.1 202 Accepted\r\nX-A: 1\r\n\r\n', /unframed: neither Content-Length nor Transfer-Encoding/],
    ['chunked, no last chunk', 'HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n', /no last chunk\) within 3000 ms/],
    ['Transfer-Encoding and Content-Length', 'HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n', /both Transfer-Encoding and Content-Length/],
    ['differing Content-Length', 'HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc', /differing Content-Length/],
    ['body shorter than announced', 'HTTP/1.1 202 Accepted\r\nContent-Length: 10\r\n\r\nabc', /3 of 10 bytes arrived/],
    ['204 with Transfer-Encoding', 'HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', /a 204 with Transfer-Encoding/],
    ['204 with a length', 'HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\nab', /a 204 with Content-Length: 2/],
    ['close-delimited, closed without saying so', 'HTTP/1.1 202 Accepted\r\n\r\nabc', /unframed/, true],
    ['Content-Length', 'HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n', null],
    ['chunked with a trailer', 'HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nX-T: 1\r\n\r\n', null],
    ['close-delimited, said and closed', 'HTTP/1.1 202 Accepted\r\nConnection: close\r\n\r\nabc', null, true],
  ];
  const servers = await Promise.all(
    ANSWERS.map(
      ([, bytes, , close]) =>
        new Promise<{ port: number; stop: () => void }>((resolve) => {
          const sockets = new Set<Socket>();
          const server = createServer((s) => {
            sockets.add(s);
            s.once('data', () => (close ? s.end(bytes, 'latin1') : s.write(bytes, 'latin1')));
          });
          server.listen(0, '127.0.0.1', () => {
            const address = server.address() as { port: number };
            resolve({ port: address.port, stop: () => (sockets.forEach((s) => s.destroy()), server.close()) });
          });
        }),
    ),
  );
  try {
    const results = await Promise.all(
      ANSWERS.map(([name], i) =>
        runSequence('direct', { main: servers[i]!.port, unpaid: servers[i]!.port }, [{ name, req: get('/'), status: 202, keep: ANSWERS[i]![3] ? 'may-close' : 'always' }], false),
      ),
    );
    const wrong: string[] = [];
    ANSWERS.forEach(([name, , fault], i) => {
      const { problems } = results[i]!;
      if (fault === null ? problems.length > 0 : !problems.some((p) => fault.test(p))) wrong.push(`${name}: ${fault ?? 'no fault'} expected, got ${JSON.stringify(problems)}`);
    });
    assert.deepEqual(wrong, []);
  } finally {
    for (const s of servers) s.stop();
  }
});
