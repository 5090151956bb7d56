/**
 * The client side of bench:freshness, in its own process (on core 1): SUBSCRIBERS paid
 * WebSocket streams subscribed to the probe's filter, and one bot polling the paid route with
 * a fresh payment each time. Every arrival is stamped with the monotonic clock, which all
 * processes of the machine share, so the parent compares it with its own stamps.
 *
 *   node freshness-clients.js <port> <subscribers> <poll-ms> [raw-port]
 *
 * With a raw port, as many raw sockets also connect to a bare uWS app there (the baseline:
 * uWS publishing the same messages with no service around it).
 *
 * Prints `ready` once every stream is subscribed; on a `done` line on stdin, prints one JSON
 * line: per probe title, when the polling bot first saw it, when subscriber 0 got it, when the
 * last and the first of the subscribers got it, and how many did.
 */
import { createInterface } from 'node:readline';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { Pool } from 'undici';
import { USDC_BASE, USDC_DOMAIN } from '../src/pay/offer.js';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../src/pay/transfer-types.js';
import { CHAIN_ID } from '../src/pay/verify.js';

const [portArg, subscribersArg, pollMsArg, rawPortArg] = process.argv.slice(2);
const port = Number(portArg);
const SUBSCRIBERS = Number(subscribersArg ?? 1000);
const POLL_MS = Number(pollMsArg ?? 20);
const PAY_TO = process.env.PAY_TO as `0x${string}`;
const now = () => Number(process.hrtime.bigint()) / 1e6;

const account = privateKeyToAccount(generatePrivateKey());
async function payment(amount: string): Promise<string> {
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 600);
  const message = { from: account.address, to: PAY_TO, value: BigInt(amount), validAfter: 0n, validBefore, nonce: `0x${randomBytes(32).toString('hex')}` as `0x${string}` };
  const signature = await account.signTypedData({
    domain: { ...USDC_DOMAIN, chainId: CHAIN_ID, verifyingContract: USDC_BASE },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  const accepted = { scheme: 'exact', network: 'eip155:8453', amount, asset: USDC_BASE, payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { ...USDC_DOMAIN } };
  const authorization = { ...message, value: amount, validAfter: '0', validBefore: String(validBefore) };
  return Buffer.from(JSON.stringify({ x402Version: 2, accepted, payload: { signature, authorization } })).toString('base64');
}

/** title → [first seen by the polling bot, subscriber 0, last arrival, subscribers reached, first arrival] */
const seen = new Map<string, [number, number, number, number, number]>();
const entry = (title: string) => {
  let e = seen.get(title);
  if (!e) seen.set(title, (e = [NaN, NaN, NaN, 0, NaN]));
  return e;
};
function arrived(title: string, at: number, first: boolean): void {
  const e = entry(title);
  if (first) e[1] = at;
  e[2] = Number.isNaN(e[2]) ? at : Math.max(e[2], at);
  e[4] = Number.isNaN(e[4]) ? at : Math.min(e[4], at);
  e[3]++;
}

const TITLE_BYTES = Buffer.from('Freshness probe ');
/** A masked client text frame (RFC 6455 §5.3), for the raw subscribers. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  return Buffer.concat([head, mask, payload.map((b, i) => b ^ mask[i % 4]!)]);
}
/**
 * Answers the server's pings (a silent connection is pinged and closed without a pong), as a
 * WebSocket library would; the chunk is walked frame by frame, unmasked server frames.
 */
function answerPings(socket: Socket, chunk: Buffer): void {
  for (let at = 0; at + 2 <= chunk.length; ) {
    let length = chunk[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) [length, start] = [chunk.readUInt16BE(at + 2), at + 4];
    else if (length === 127) [length, start] = [Number(chunk.readBigUInt64BE(at + 2)), at + 10];
    if ((chunk[at]! & 0x0f) === 0x9) {
      const payload = chunk.subarray(start, start + length);
      const mask = randomBytes(4);
      socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i % 4]!)]));
    }
    at = start + length;
  }
}
const SUBSCRIBE = JSON.stringify({ type: 'subscribe', params: { category: 'markets', q: 'freshness probe' } });
/** The probe numbers in a chunk of frames, found without decoding them. */
function probesIn(chunk: Buffer, found: (title: string) => void): void {
  for (let at = chunk.indexOf(TITLE_BYTES); at !== -1; at = chunk.indexOf(TITLE_BYTES, at + 1)) {
    let end = at + TITLE_BYTES.length;
    while (chunk[end]! >= 48 && chunk[end]! <= 57) end++;
    found(chunk.toString('latin1', at, end));
  }
}

// Subscriber 0 is the `ws` library, as a bot would use it.
const streams: { destroy(): void }[] = [];
{
  const ws = new WebSocket(`ws://127.0.0.1:${port}/stream?wire=news`, { headers: { 'PAYMENT-SIGNATURE': await payment('50000') } });
  ws.on('message', (data) => {
    const at = now();
    probesIn(Buffer.from(data as Buffer), (title) => arrived(title, at, true));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('message', () => {
      ws.send(SUBSCRIBE);
      ws.once('message', () => resolve());
    });
    ws.once('error', reject);
  });
  streams.push({ destroy: () => ws.terminate() });
}
// The others: read by the C client (bench/fanout-client.c, epoll) when FANOUT_CLIENT names its
// binary, else by raw Node sockets after a plain HTTP upgrade. Either way the fan-out is timed
// at their arrival, not at a WebSocket library's parsing of 1,000 messages in this one process.
const cClient = process.env.FANOUT_CLIENT;
let cResults: (() => Promise<Record<string, [number, number, number]>>) | null = null;
if (cClient) {
  const child = spawn(cClient, [SUBSCRIBE], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const lines: string[] = [];
  for (let i = 1; i < SUBSCRIBERS; i++) lines.push(`${port} /stream?wire=news ${await payment('50000')}`);
  if (rawPortArg) for (let i = 0; i < SUBSCRIBERS; i++) lines.push(`${rawPortArg} /raw -`);
  child.stdin!.write(lines.join('\n') + '\ngo\n');
  if ((await out.next()).value !== 'ready') throw new Error('the C fan-out client did not open its connections');
  cResults = async () => {
    child.stdin!.write('done\n');
    return JSON.parse((await out.next()).value as string);
  };
} else {
  for (let i = 1; i < SUBSCRIBERS; i++) {
    const signature = await payment('50000');
    const [socket, head] = await new Promise<[Socket, Buffer]>((resolve, reject) => {
      const req = request({
        host: '127.0.0.1',
        port,
        path: '/stream?wire=news',
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'PAYMENT-SIGNATURE': signature },
      });
      req.on('upgrade', (_res, sock: Socket, head: Buffer) => resolve([sock, head]));
      req.on('response', (res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    await new Promise<void>((resolve) => {
      let frames = 0;
      const onData = (chunk: Buffer) => {
        const at = now();
        if (frames < 2) {
          // `paid`, then `subscribed` (they may share a chunk).
          frames += chunk.toString('latin1').split('"type":"').length - 1;
          if (frames === 1) socket.write(textFrame(SUBSCRIBE));
          if (frames >= 2) resolve();
          return;
        }
        probesIn(chunk, (title) => arrived(title, at, false));
        answerPings(socket, chunk);
      };
      socket.on('data', onData);
      // What arrived with the 101 answer (the `paid` message, usually).
      if (head.length) onData(head);
    });
    streams.push(socket);
  }

  // The baseline's subscribers: the bare app subscribes each socket on open.
  if (rawPortArg) {
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const [socket, head] = await new Promise<[Socket, Buffer]>((resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port: Number(rawPortArg),
          path: '/raw',
          headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64') },
        });
        req.on('upgrade', (_res, sock: Socket, rest: Buffer) => resolve([sock, rest]));
        req.on('response', (res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
        req.on('error', reject);
        req.end();
      });
      const onData = (chunk: Buffer) => {
        const at = now();
        probesIn(chunk, (title) => arrived(title, at, false));
        answerPings(socket, chunk);
      };
      socket.on('data', onData);
      if (head.length) onData(head);
      streams.push(socket);
    }
  }
}

// The polling bot: a paid call every POLL_MS, each with a new authorization signed ahead.
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
const payments: string[] = [];
let polling = true;
const poller = (async () => {
  while (polling) {
    while (payments.length < 50) payments.push(await payment('5000'));
    const started = performance.now();
    const res = await pool.request({ path: '/headlines?category=markets&limit=5', method: 'GET', headers: { 'payment-signature': payments.pop()! } });
    const body = await res.body.text();
    const at = now();
    for (const m of body.matchAll(/"title":"(Freshness probe \d+)"/g)) {
      const e = entry(m[1]!);
      if (Number.isNaN(e[0])) e[0] = at;
    }
    await new Promise((r) => setTimeout(r, Math.max(0, POLL_MS - (performance.now() - started))));
  }
})();

process.stdout.write('ready\n');
createInterface({ input: process.stdin }).once('line', async () => {
  polling = false;
  await poller;
  if (cResults) {
    for (const [title, [first, last, count]] of Object.entries(await cResults())) {
      const e = entry(title);
      e[2] = Number.isNaN(e[2]) ? last : Math.max(e[2], last);
      e[4] = Number.isNaN(e[4]) ? first : Math.min(e[4], first);
      e[3] += count;
    }
  }
  process.stdout.write(JSON.stringify(Object.fromEntries(seen)) + '\n');
  for (const s of streams) s.destroy();
  await pool.close();
  process.exit(0);
});
