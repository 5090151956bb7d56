/**
 * File descriptors near the limit: the service runs as its own process with a limit of 256
 * (prlimit) and the test opens 300 idle connections to it. Once its open descriptors come
 * within the guard's reserve of the limit (connection-guard.ts), every new connection is
 * answered `503 too_many_connections` with Retry-After and closed, so the descriptors never
 * run out: uWebSockets.js would otherwise retry the failing accept() in a busy loop (198 of
 * 200 clock ticks in 2 s, before the guard) while new clients wait unanswered. A keep-alive
 * client connected before goes on being served, and once the idle connections close, new
 * clients are served again: nothing to restart.
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
const answer = (agent: Agent, path = '/health') =>
  new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body }));
    })
      .on('error', reject)
      .end();
  });
const get = async (agent: Agent) => (await answer(agent)).status;
/** How a new connection attempt ends: 'connected' or its error code. */
const attempt = () =>
  new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.setTimeout(2000, () => (s.destroy(), resolve('timeout')));
    s.on('connect', () => (s.destroy(), resolve('connected')));
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });

test(`near its ${LIMIT} descriptors it refuses new connections with 503 instead of spinning, serves the clients it has, and new ones once they free up`, { timeout: 60_000 }, async (t) => {
  for (let i = 0; i < 20 && !/file-descriptor limit is within reach/.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(stderr, /file-descriptor limit is within reach/, 'the start-up warns of the low limit');
  const kept = new Agent({ keepAlive: true, maxSockets: 1 });
  assert.equal(await get(kept), 200, 'a keep-alive client, connected before');

  const idle: Socket[] = [];
  const refusedIdle: string[] = [];
  for (let i = 0; i < 300; i++) {
    const s = connect(port, '127.0.0.1').on('error', () => {});
    s.on('data', (d) => refusedIdle.push(d.toString()));
    idle.push(s);
  }
  for (let i = 0; i < 50 && refusedIdle.length < 50; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(refusedIdle.length >= 50, `connections past the reserve are refused: ${refusedIdle.length} of 300`);
  assert.match(refusedIdle[0]!, /^HTTP\/1\.1 503 /);
  assert.match(refusedIdle[0]!, /too_many_connections/);
  assert.ok(openFds() < LIMIT - 16, `descriptors stay short of the limit: ${openFds()} of ${LIMIT} open`);

  const ticks = cpuTicks();
  await new Promise((r) => setTimeout(r, 2000));
  const spent = cpuTicks() - ticks;
  t.diagnostic(`CPU while at the reserve: ${spent} clock ticks in 2 s`);
  assert.ok(spent < 100, `no busy loop: ${spent} of 200 clock ticks in 2 s`);
  assert.equal(await get(kept), 200, 'the client connected before is still served');
  // A descriptor freed meanwhile (a worker's pipe, a timer) leaves room for one more: a few
  // more idle connections take any such room first.
  for (let i = 0; i < 8; i++) idle.push(connect(port, '127.0.0.1').on('error', () => {}));
  await new Promise((r) => setTimeout(r, 200));
  const refused = await answer(new Agent());
  assert.equal(refused.status, 503, 'a new client is answered, not left waiting');
  assert.equal(refused.retryAfter, '5');
  assert.equal(JSON.parse(refused.body).error.code, 'too_many_connections');
  const metrics = (await answer(kept, '/metrics')).body;
  assert.match(metrics, /^wires_connections_refused_total [1-9]\d*$/m);
  const held = Number(/^wires_connections_open (\d+)$/m.exec(metrics)?.[1]);
  assert.ok(held > 150 && held <= LIMIT, `the idle connections are counted as held: ${held}`);
  assert.equal(child.exitCode, null, 'the process is up');
  assert.match(stderr, /new connections are refused with 503/);

  for (const s of idle) s.destroy();
  for (let i = 0; i < 50 && (await attempt()) !== 'connected'; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await get(new Agent()), 200, 'a new client is served again');
  assert.ok(openFds() < 64, `descriptors released: ${openFds()} open`);
  const after = Number(/^wires_connections_open (\d+)$/m.exec((await answer(kept, '/metrics')).body)?.[1]);
  assert.ok(after <= 3, `the closed connections are no longer counted: ${after} held`);
  kept.destroy();
});
