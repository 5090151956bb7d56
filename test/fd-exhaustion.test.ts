/**
 * File descriptors run out: the service runs as its own process with a limit of 256
 * (prlimit) and the test opens 300 idle connections to it. It stays up, a keep-alive client
 * connected before goes on being served, and once the idle connections close, new clients are
 * served again: nothing to restart.
 *
 * What it cannot do is refuse the connections beyond the limit cleanly: uWebSockets.js
 * retries the failing accept() in a loop while they wait in the kernel's backlog (the
 * diagnostic line gives the CPU it spends). The deployment keeps the limit out of reach instead
 * (LimitNOFILE=65536 in deploy/wires.service, nginx holding the client connections), and the
 * service warns at start when its limit is below what its streams may take.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PAY_TO } from './helpers/service.js';

const ENTRY = fileURLToPath(new URL('./helpers/service-process.js', import.meta.url));
const LIMIT = 256;
let child: ChildProcess;
let port: number;
let stderr = '';

before(async () => {
  child = spawn('prlimit', [`--nofile=${LIMIT}:${LIMIT}`, process.execPath, ENTRY], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-fd-')),
      INGEST: '0',
      LOG_LEVEL: 'warn',
      PAY_TO_ADDRESS: PAY_TO,
      FACILITATOR_URL: 'http://127.0.0.1:9',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (c) => (stderr += c));
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  port = (JSON.parse(first.value as string) as { port: number }).port;
});
after(() => {
  child?.kill('SIGKILL');
});

const openFds = () => readdirSync(`/proc/${child.pid}/fd`).length;
/** CPU time of the service process so far, in clock ticks. */
const cpuTicks = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const get = (agent: Agent) =>
  new Promise<number>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    })
      .on('error', reject)
      .end();
  });
/** How a new connection attempt ends: 'connected' or its error code. */
const attempt = () =>
  new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setTimeout(2000, () => (s.destroy(), resolve('timeout')));
    s.on('connect', () => (s.destroy(), resolve('connected')));
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });

test(`with its ${LIMIT} descriptors used up it stays up and serves the clients it has, and new ones once they free up`, { timeout: 60_000 }, async (t) => {
  for (let i = 0; i < 20 && !/file-descriptor limit is within reach/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(stderr, /file-descriptor limit is within reach/, 'the start-up warns of the low limit');
  const kept = new Agent({ keepAlive: true, maxSockets: 1 });
  assert.equal(await get(kept), 200, 'a keep-alive client, connected before');

  const idle: Socket[] = [];
  for (let i = 0; i < 300; i++) idle.push(connect(port, '127.0.0.1').on('error', () => {}));
  for (let i = 0; i < 50 && openFds() < LIMIT; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(openFds(), LIMIT, 'every descriptor is in use');

  const ticks = cpuTicks();
  await new Promise((r) => setTimeout(r, 2000));
  t.diagnostic(`CPU while exhausted: ${cpuTicks() - ticks} clock ticks in 2 s (uWebSockets.js retrying accept)`);
  assert.equal(await get(kept), 200, 'the client connected before is still served');
  assert.equal(child.exitCode, null, 'the process is up');

  for (const s of idle) s.destroy();
  for (let i = 0; i < 50 && (await attempt()) !== 'connected'; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await get(new Agent()), 200, 'a new client is served again');
  assert.ok(openFds() < 64, `descriptors released: ${openFds()} open`);
  kept.destroy();
});
