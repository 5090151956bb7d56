/**
 * HTTPS and WSS without a proxy (TLS_CERT_FILE, TLS_KEY_FILE), with certificates the test
 * makes with openssl, and their reload: on SIGHUP and on a file change, under load from new
 * connections with and without a server name and from a kept-alive one, with no failed request;
 * a pair that does not load is refused and the current certificate kept.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type PeerCertificate } from 'node:tls';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../src/config.js';
import { spawnService, type ServiceProcess } from './helpers/spawn-service.js';
import { until } from './helpers/until.js';

const dir = mkdtempSync(join(tmpdir(), 'wires-tls-'));
/** A self-signed certificate for localhost; its serial number. */
function makeCertificate(name: string): string {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      join(dir, `${name}.key`),
      '-out',
      join(dir, `${name}.crt`),
    ],
    { stdio: 'ignore' },
  );
  return execFileSync('openssl', ['x509', '-noout', '-serial', '-in', join(dir, `${name}.crt`)], { encoding: 'utf8' })
    .trim()
    .slice('serial='.length);
}
const serials: Record<string, string> = {};
let ca: Buffer[];
const CERT = join(dir, 'live.crt');
const KEY = join(dir, 'live.key');
/** Puts a pair in place as renewal tools do: each file written beside and renamed over. */
function install(cert: string, key: string): void {
  copyFileSync(join(dir, `${cert}.crt`), `${CERT}.new`);
  copyFileSync(join(dir, `${key}.key`), `${KEY}.new`);
  renameSync(`${KEY}.new`, KEY);
  renameSync(`${CERT}.new`, CERT);
}

let service: ServiceProcess;
before(async () => {
  serials.a = makeCertificate('a');
  serials.b = makeCertificate('b');
  ca = [readFileSync(join(dir, 'a.crt')), readFileSync(join(dir, 'b.crt'))];
  install('a', 'a');
  service = await spawnService({
    INGEST: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-tls-data-')),
    TLS_CERT_FILE: CERT,
    TLS_KEY_FILE: KEY,
    // Payments on (the facilitator is never reached): a stream opened with pay=message is asked to pay in its first message.
    PAY_TO_ADDRESS: '0x1111111111111111111111111111111111111111',
    FACILITATOR_URL: 'http://127.0.0.1:9',
  });
});
after(async () => {
  await service?.kill();
});

/**
 * GET over a new TLS connection (or `agent`'s), naming localhost or, as a client given an IP
 * address does, no server name: the status, the body and the certificate's serial.
 */
function get(path: string, opts: { sni?: boolean; agent?: Agent } = {}): Promise<{ status: number; body: string; serial: string }> {
  return new Promise((resolve, reject) => {
    const name = opts.sni === false ? { servername: '', checkServerIdentity: () => undefined } : { servername: 'localhost' };
    const req = request({ host: '127.0.0.1', ...name, port: service.port, path, ca, agent: opts.agent ?? false }, (res) => {
      const serial = (res.socket as unknown as { getPeerCertificate(): PeerCertificate }).getPeerCertificate().serialNumber;
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, serial }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The first message of a WSS stream opened with pay=message. */
async function firstStreamMessage(): Promise<{ type: string }> {
  const ws = new WebSocket(`wss://localhost:${service.port}/stream?wire=news&pay=message`, { ca });
  try {
    return await new Promise((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data))));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
  } finally {
    ws.close();
  }
}

test('HTTPS and WSS on the service’s own port, TLS 1.2 and up only', async () => {
  const health = await get('/health');
  assert.equal(health.status, 200);
  assert.equal(health.serial, serials.a);
  assert.ok((JSON.parse(health.body) as { status: string }).status);
  assert.match(service.logs(), /"msg":"listening".*"tls":\{"names":\["localhost"\]/);
  // A WebSocket over TLS, told in its first message what a block costs.
  assert.equal((await firstStreamMessage()).type, 'payment_required');
  // TLS 1.1 is refused in the handshake. The client offers only 1.0 and 1.1 (OpenSSL 3 needs
  // security level 0 for them); a Node TLS server that allows 1.1 shows that it can.
  const tls11 = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0', ca, servername: 'localhost' } as const;
  const handshake = (port: number) =>
    new Promise<string>((resolve) => {
      const s = connect({ host: '127.0.0.1', port, ...tls11 }, () => {
        resolve(`accepted ${s.getProtocol()}`);
        s.destroy();
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? String(err)));
    });
  const control = createServer({ cert: readFileSync(join(dir, 'a.crt')), key: readFileSync(join(dir, 'a.key')), minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }, (s) => s.end());
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  assert.equal(await handshake((control.address() as AddressInfo).port), 'accepted TLSv1.1');
  control.close();
  assert.match(await handshake(service.port), /PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL|WRONG_VERSION/);
  // Connections handed to the serving app are counted as any other (connection-guard.ts).
  const held = new Agent({ keepAlive: true, maxSockets: 3, ca });
  await Promise.all([1, 2, 3].map(() => get('/health', { agent: held })));
  const open = Number(/^wires_connections_open (\d+)/m.exec((await get('/metrics')).body)?.[1]);
  held.destroy();
  assert.ok(open >= 4, `wires_connections_open ${open} with three kept-alive connections and the one asking`);
  // A malformed request over TLS gets uWS's plain answer, as over plain HTTP (test/uws-malformed.test.ts).
  const malformed = await new Promise<string>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: service.port, servername: 'localhost', ca }, () => s.write('GET /health HTTP/1.0\r\n\r\n'));
    let got = '';
    s.on('data', (d) => (got += d));
    s.on('end', () => resolve(got));
    s.on('close', () => resolve(got));
    s.on('error', reject);
  });
  assert.match(malformed, /^HTTP\/1\.1 505 /);
});

test('a renewal under load: SIGHUP, a file change, and a pair that does not load; no request fails', async () => {
  let stop = false;
  const seen: string[] = [];
  const failures: string[] = [];
  // New connections with and without a server name, and one kept-alive connection that stays
  // on the app it was accepted by.
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1, ca });
  const worker = async (opts: { sni?: boolean; agent?: Agent }) => {
    while (!stop) {
      try {
        const r = await get('/health', opts);
        if (r.status !== 200) failures.push(`HTTP ${r.status}`);
        if (opts.agent) kept.push(r.serial);
        else (opts.sni === false ? seenByIp : seen).push(r.serial);
      } catch (err) {
        failures.push(String(err));
      }
    }
  };
  const seenByIp: string[] = [];
  const kept: string[] = [];
  // A stream opened before the reloads: still answered after them.
  const ws = new WebSocket(`wss://localhost:${service.port}/stream?wire=news&pay=message`, { ca });
  const messages: { type: string }[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await until('the stream open', async () => messages.length > 0);
  const workers = Promise.all([worker({}), worker({}), worker({ sni: false }), worker({ sni: false }), worker({ agent: keepAlive })]);
  const serving = async (serial: string) => {
    const [from, fromIp] = [seen.length, seenByIp.length];
    const present = (list: string[], at: number) => list.slice(at).filter((s) => s === serial).length >= 20;
    await until(`new handshakes present ${serial}`, async () => present(seen, from) && present(seenByIp, fromIp)).catch((e) => {
      throw new Error(`${e} seen ${[...new Set(seen.slice(from))]} by IP ${[...new Set(seenByIp.slice(fromIp))]} logs ${service.logs().slice(-1500)}`);
    });
  };
  try {
    await until('requests under way', async () => seen.length >= 20);
    install('b', 'b');
    service.child.kill('SIGHUP');
    await serving(serials.b!);
    assert.match(service.logs(), /"msg":"TLS certificate reloaded","why":"SIGHUP"/);
    // Renewed on disk only: seen within the watch interval, no signal needed.
    install('a', 'a');
    await serving(serials.a!);
    assert.match(service.logs(), /"msg":"TLS certificate reloaded","why":"file change"/);
    // B's certificate with A's key does not load: refused, A stays.
    copyFileSync(join(dir, 'b.crt'), CERT);
    service.child.kill('SIGHUP');
    await until('the refusal logged', async () => service.logs().includes('TLS certificate not reloaded'));
    await serving(serials.a!);
    // Ten renewals in a row, 100 ms apart, while the clients connect.
    for (let i = 0; i < 10; i++) {
      const pair = i % 2 === 0 ? 'b' : 'a';
      install(pair, pair);
      service.child.kill('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await serving(serials.a!);
  } finally {
    stop = true;
    await workers;
    keepAlive.destroy();
  }
  assert.deepEqual(failures, []);
  assert.ok(seen.length >= 80 && seenByIp.length >= 80, `${seen.length} and ${seenByIp.length} requests`);
  // The kept-alive connection was served throughout, on the certificate it was opened with.
  assert.ok(kept.length >= 20, `${kept.length} requests on the kept-alive connection`);
  assert.deepEqual([...new Set(kept)], [serials.a]);
  // The stream opened before the reloads still answers: a message it cannot read gets an error back.
  const before = messages.length;
  ws.send('not json');
  await until('the old stream answers', async () => messages.length > before);
  assert.equal(messages.at(-1)!.type, 'error');
  ws.close();
  // Streams too, on the reloaded certificate's connections.
  assert.equal((await firstStreamMessage()).type, 'payment_required');
});

test('TLS_CERT_FILE and TLS_KEY_FILE come together; a pair that does not load, or a port in use, stops the start with the reason', async () => {
  assert.throws(
    () => loadConfig({ TLS_CERT_FILE: CERT }),
    (err: Error) => err instanceof ConfigError && /TLS_KEY_FILE/.test(err.message),
  );
  assert.equal(loadConfig({}).tls, null);
  await assert.rejects(
    spawnService({ INGEST: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-tls-data-')), TLS_CERT_FILE: join(dir, 'b.crt'), TLS_KEY_FILE: join(dir, 'a.key') }),
    /TLS_CERT_FILE and TLS_KEY_FILE do not load/,
  );
  // The port is listened with reuse for the reloads, yet a second instance on it is refused.
  await assert.rejects(
    spawnService({ INGEST: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-tls-data-')), PORT: String(service.port), TLS_CERT_FILE: join(dir, 'a.crt'), TLS_KEY_FILE: join(dir, 'a.key') }),
    /cannot listen on 127\.0\.0\.1:\d+: the port is in use/,
  );
});
