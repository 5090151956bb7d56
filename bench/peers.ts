/**
 * The service against its peers, in one run, with one load generator per kind of call
 * (`npm run bench:peers`). Three servers answer the same preview bytes:
 *
 *   - raw uWebSockets.js: one precomputed buffer (the body of the service's own preview
 *     answer, captured at start) with the same headers: the ceiling for this HTTP stack;
 *   - this service, started as `npm start` would (seeded wires, INGEST=0), GET
 *     /cve/preview?q=vulnerability;
 *   - Express 5 with @x402/express's `paymentMiddleware` in front (set up as in
 *     bench/pay-reference.ts), the same bytes on its free route.
 *
 * Each server runs in a child process of its own (`node dist/bench/peers.js serve <kind>
 * <port> <setup-file>`) pinned to core 0; wrk (`-t1 -c10`) is pinned to core 1 and measures
 * previews: requests/s and latency percentiles (p99.9 from a small Lua `done` hook, in µs).
 *
 * Paid calls need a fresh authorization per request, which wrk cannot sign, so they are
 * measured with the project's load generator (bench/load.ts) and a file of pre-signed
 * payments, and the free preview is measured through the same load generator as the floor:
 * paid − free on one client. This service's paid route runs with SETTLEMENT=optimistic; the
 * reference seller settles synchronously (the only way it can). The devnet (anvil and the
 * facilitator) runs on core 1 beside the load generators (PEERS_DEVNET_NICE=10 gives the
 * load generator priority over it; the reference then waits longer for its settlements).
 *
 * Environment: BENCH_SECONDS (default 8) per measured run, BENCH_WARM_SECONDS (2) per
 * warm-up, BENCH_CONNECTIONS (10, wrk), BENCH_LOAD_CONNECTIONS (4, bench/load.ts),
 * BENCH_PAID_RATE (3000: payments signed per measured second for this service; the
 * reference gets BENCH_REF_PAID_RATE, 500), BENCH_PAID=0 skips the paid calls and the devnet,
 * PEERS_PIN=serving keeps only each server's main thread on core 0 (its helper threads move
 * to core 1 after the warm-up), PEERS_CPU_PROF=<dir> runs the service child under
 * `node --cpu-prof` and writes its profile there on exit.
 *
 * Each run also reads the server process's CPU time (/proc/<pid>/stat, all threads) before
 * and after: its share of a core, and CPU µs per request. When raw uWS does not fill its
 * core, the client was the ceiling and the req/s ratios overstate the others; the CPU per
 * request is then the better measure of capacity.
 *
 * Absolute numbers vary with the machine's other load; compare ratios within one run.
 */
// A type only: importing placement.ts itself would pin this process, which runs no server.
import type { LoadResult } from './placement.js';
import { cpuSeconds } from './proc.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadUws } from '../src/http/uws.js';

const SELF = fileURLToPath(import.meta.url);
const LOAD = fileURLToPath(new URL('./load.js', import.meta.url));
const PREVIEW_PATH = '/cve/preview?q=vulnerability';
const PAID_PATH = '/cve/latest?q=vulnerability&limit=3';

type Kind = 'raw' | 'wires' | 'express';

/** What a server child needs: the captured preview answer and, for paid routes, the devnet. */
interface Setup {
  /** Base64 of the preview body the service answered. */
  body: string;
  /** Response headers to repeat (Content-Length, Date and the like excluded). */
  headers: [string, string][];
  devnet: import('../src/devnet/devnet.js').DevnetInfo | null;
  dataDir: string;
}

// ---------------------------------------------------------------------------------------
// Child modes: a server, or the devnet. Each prints one JSON line when ready and exits when
// told (SIGTERM) or when its parent goes away (stdin closes), whichever comes first.
// ---------------------------------------------------------------------------------------

function exitWith(stop: () => Promise<unknown> | unknown): void {
  let stopping = false;
  const go = async () => {
    if (stopping) return;
    stopping = true;
    // A service with settlements still in flight may take long to stop: bounded.
    await Promise.race([Promise.resolve().then(stop), new Promise((r) => setTimeout(r, 3000))]).catch(() => {});
    process.exit(0);
  };
  process.on('SIGTERM', go);
  process.on('SIGINT', go);
  process.stdin.on('end', go);
  process.stdin.on('error', go);
  process.stdin.resume();
}

async function serve(kind: Kind, port: number, setupFile: string): Promise<void> {
  const setup = JSON.parse(readFileSync(setupFile, 'utf8')) as Setup;
  const body = Buffer.from(setup.body, 'base64');
  if (kind === 'raw') {
    // The binary the service loads, through the same loader.
    const { uws } = loadUws();
    const app = uws.App();
    // The same calls the service makes for an answer: the same headers (200 is uWS's
    // default status, which neither writes), the body.
    app.any('/*', (res) => {
      for (const [k, v] of setup.headers) res.writeHeader(k, v);
      res.end(body);
    });
    const socket = await new Promise<import('uWebSockets.js').us_listen_socket>((resolve, reject) =>
      app.listen('127.0.0.1', port, (s) => (s ? resolve(s) : reject(new Error(`raw uWS cannot listen on ${port}`)))),
    );
    exitWith(() => uws.us_listen_socket_close(socket));
    console.log(JSON.stringify({ port: uws.us_socket_local_port(socket as never) }));
  } else if (kind === 'express') {
    const { default: express } = await import('express');
    const { paymentMiddleware } = await import('@x402/express');
    const { HTTPFacilitatorClient, x402ResourceServer } = await import('@x402/core/server');
    const { ExactEvmScheme } = await import('@x402/evm/exact/server');
    const { NETWORK } = await import('../src/pay/offer.js');
    const app = express();
    if (setup.devnet) {
      const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: setup.devnet.facilitatorUrl })).register(NETWORK, new ExactEvmScheme());
      app.use(paymentMiddleware({ 'GET /cve/latest': { accepts: { scheme: 'exact', price: '$0.005', network: NETWORK, payTo: setup.devnet.payTo } } }, resourceServer));
    }
    const contentType = setup.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? 'application/json';
    const send = (_req: unknown, res: import('express').Response) => {
      for (const [k, v] of setup.headers) res.setHeader(k, v);
      res.type(contentType).send(body);
    };
    app.get('/cve/preview', send);
    app.get('/cve/latest', send);
    const server = await new Promise<import('node:http').Server>((resolve, reject) => {
      const s = app.listen(port, '127.0.0.1', (err?: Error) => (err ? reject(err) : resolve(s)));
    });
    exitWith(() => new Promise((r) => server.close(r)));
    console.log(JSON.stringify({ port: (server.address() as import('node:net').AddressInfo).port }));
  } else if (kind === 'wires') {
    const { loadConfig } = await import('../src/config.js');
    const { setLogLevel } = await import('../src/log.js');
    const { createIndexes, startService } = await import('../src/service.js');
    const { seedAll } = await import('../test/helpers/sample-items.js');
    setLogLevel('error');
    const wires = createIndexes();
    const now = Date.now();
    for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
    const d = setup.devnet;
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: setup.dataDir,
      INGEST: '0',
      ...(d
        ? {
            PAY_TO_ADDRESS: d.payTo,
            FACILITATOR_URL: d.facilitatorUrl,
            SETTLEMENT: 'optimistic',
            OPTIMISTIC_RELEASE: 'written',
            // A few payers make every call: lift the cap so all of them take the optimistic path.
            OPTIMISTIC_MAX_UNSETTLED_USD: '1000',
          }
        : {}),
    });
    const service = await startService(config, { wires });
    exitWith(() => service.stop());
    console.log(JSON.stringify({ port: service.port }));
  } else {
    throw new Error(`unknown server kind ${kind}`);
  }
}

async function devnetChild(): Promise<void> {
  const { startDevnet } = await import('../src/devnet/devnet.js');
  const devnet = await startDevnet();
  exitWith(() => devnet.stop());
  console.log(JSON.stringify(devnet.info()));
}

// ---------------------------------------------------------------------------------------
// The orchestrator.
// ---------------------------------------------------------------------------------------

const env = (name: string, def: number) => {
  const v = Number(process.env[name] ?? def);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number`);
  return v;
};

/** One measured run: req/s and latency in milliseconds. */
interface Run {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  p999: number;
  /** Non-2xx answers and socket errors. */
  bad: number;
  note?: string;
  /** The service's own time per request (took_ms), through bench/load.ts. */
  server?: { p50: number; p99: number };
  /** The server process's CPU during the run (all threads): share of one core, and per request. */
  cpu?: { share: number; usPerRequest: number };
}

const children = new Set<ChildProcess>();
let cleaning: Promise<void> | null = null;

/** Ends every child this process started: SIGTERM, then SIGKILL after a grace period. */
function cleanup(): Promise<void> {
  cleaning ??= Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  ).then(() => undefined);
  return cleaning;
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
const pinned = hasTaskset && availableParallelism() >= 2;
/** A command line on the given core (unchanged when not pinning), optionally niced. */
function onCore(core: 0 | 1, cmd: string, args: string[], nice = 0): [string, string[]] {
  const niced: [string, string[]] = nice ? ['nice', ['-n', String(nice), cmd, ...args]] : [cmd, args];
  return pinned ? ['taskset', ['-c', String(core), niced[0], ...niced[1]]] : niced;
}

/** Starts a child that prints one JSON line when ready; its stderr goes to `log`. */
async function startChild<T>(name: string, cmd: string, args: string[], log: string, childEnv: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; ready: T }> {
  const fd = openSync(log, 'a');
  const child = track(spawn(cmd, args, { stdio: ['pipe', 'pipe', fd], env: childEnv }));
  closeSync(fd);
  const ready = await new Promise<T>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 120 s (see ${log})`)), 120_000);
    const early = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready; its log:\n${readFileSync(log, 'utf8').slice(-3000)}`));
    };
    child.once('exit', early);
    lines.once('line', (line) => {
      clearTimeout(timer);
      child.off('exit', early);
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${name} printed ${JSON.stringify(line)} instead of its port (see ${log})`));
      }
    });
  });
  child.stdout!.resume();
  return { child, ready };
}

/** Runs a command to its end; its stdout, wall time and status. */
function run(cmd: string, args: string[]): Promise<{ out: string; err: string; code: number | null; ms: number }> {
  const start = performance.now();
  const child = track(spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ out, err, code, ms: performance.now() - start }));
  });
}

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return null;
}

/** wrk's `done` hook: one JSON line with the whole distribution in microseconds. */
const WRK_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('PEERS_JSON {"requests":%d,"duration_us":%d,"p50":%.1f,"p75":%.1f,"p90":%.1f,"p99":%.1f,"p999":%.1f,"max":%.1f,"mean":%.2f,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;

let wrkScript = '';
const wrk = which('wrk');
const autocannon = wrk ? null : which('autocannon');

/** wrk (or, failing that, autocannon) on core 1 against `url` for `seconds`. */
async function http(url: string, seconds: number, connections: number): Promise<Run> {
  if (wrk) {
    const [cmd, args] = onCore(1, wrk, ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', wrkScript, url]);
    const r = await run(cmd, args);
    const json = /PEERS_JSON (\{.*\})/.exec(r.out);
    const rps = /Requests\/sec:\s+([0-9.]+)/.exec(r.out);
    if (r.code !== 0 || !json || !rps) throw new Error(`wrk failed (${r.code}):\n${r.out}\n${r.err}`);
    const s = JSON.parse(json[1]!) as Record<string, number>;
    const bad = s.status! + s.connect! + s.read! + s.write! + s.timeout!;
    return { rps: Number(rps[1]), requests: s.requests!, p50: s.p50! / 1000, p99: s.p99! / 1000, p999: s.p999! / 1000, bad };
  }
  // Only reached when wrk is absent and autocannon is on the PATH.
  const [cmd, args] = onCore(1, autocannon!, ['-c', String(connections), '-d', String(seconds), '--json', url]);
  const r = await run(cmd, args);
  const s = JSON.parse(r.out) as { requests: { average: number; total: number }; latency: Record<string, number>; non2xx: number; errors: number };
  return { rps: s.requests.average, requests: s.requests.total, p50: s.latency.p50!, p99: s.latency.p99!, p999: s.latency.p99_9 ?? NaN, bad: s.non2xx + s.errors, note: 'autocannon' };
}

/** Wall time of a load.ts process that makes no request: its start-up and shut-down. */
let loadOverheadMs = 0;

/** bench/load.ts on core 1; with a payments file, one fresh authorization per request. */
async function load(url: string, seconds: number, connections: number, paymentsFile?: string, payments = 0): Promise<Run & { raw: LoadResult }> {
  const [cmd, args] = onCore(1, process.execPath, [LOAD, url, String(connections), String(seconds), ...(paymentsFile ? [paymentsFile] : [])]);
  const r = await run(cmd, args);
  if (r.code !== 0 || !r.out.trim()) throw new Error(`load generator failed (${r.code}): ${r.err}`);
  const res = JSON.parse(r.out) as LoadResult;
  const bad = res.errors + Object.entries(res.statuses).reduce((n, [s, c]) => n + (s === '200' ? 0 : c), 0);
  // A run that used up its payments ended before its deadline: time it from outside.
  const exhausted = paymentsFile !== undefined && res.requests >= payments;
  const secs = exhausted ? Math.max(0.001, (r.ms - loadOverheadMs) / 1000) : seconds;
  return {
    rps: res.requests / secs,
    requests: res.requests,
    p50: res.p50,
    p99: res.p99,
    p999: res.p999,
    bad,
    raw: res,
    ...(Number.isFinite(res.server_p50) ? { server: { p50: res.server_p50, p99: res.server_p99 } } : {}),
    ...(exhausted ? { note: 'payments ran out: req/s from wall time' } : {}),
  };
}

/** Runs `measure` and adds the server's CPU use during it: share of one core, µs per request. */
async function withCpu(pid: number, measure: () => Promise<Run>): Promise<Run> {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const r = await measure();
  const cpu = cpuSeconds(pid) - cpu0;
  return { ...r, cpu: { share: cpu / ((performance.now() - t0) / 1000), usPerRequest: (cpu * 1e6) / r.requests } };
}

/** Moves every thread of `pid` but its main one to core 1. */
function moveHelpers(pid: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) if (tid !== String(pid)) spawnSync('taskset', ['-p', '-c', '1', tid]);
}

interface Signer {
  /** `count` PAYMENT-SIGNATURE values for the offer `base` makes on PAID_PATH, payers in turn. */
  sign(base: string, count: number, keys: `0x${string}`[]): Promise<string[]>;
}

/**
 * Signs like the official client, fast: the official client (@x402/core + @x402/evm) signs
 * one payload for the server's own offer, which is the template; every further payment is
 * that payload with a fresh random nonce, its EIP-712 digest computed by the project's
 * eip3009 module and signed by libsecp256k1 (the `secp256k1` package's native binding):
 * about 0.1 ms each instead of about 2.6 ms through viem. Signatures are deterministic
 * (RFC 6979) on both paths, so the template's own signature is checked byte for byte.
 */
async function makeSigner(): Promise<Signer> {
  const require = createRequire(import.meta.url);
  const secp = require('secp256k1') as { ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number } };
  const { x402Client } = await import('@x402/core/client');
  const { decodePaymentRequiredHeader, encodePaymentSignatureHeader } = await import('@x402/core/http');
  const { ExactEvmScheme } = await import('@x402/evm/exact/client');
  const { privateKeyToAccount } = await import('viem/accounts');
  const { authorizationDigest, domainSeparator } = await import('../src/pay/eip3009.js');

  const sig = (digest: Uint8Array, key: Uint8Array) => {
    const { signature, recid } = secp.ecdsaSign(digest, key);
    return '0x' + Buffer.from(signature).toString('hex') + (27 + recid).toString(16);
  };
  return {
    async sign(base, count, keys) {
      const offer = await fetch(base + PAID_PATH);
      await offer.arrayBuffer();
      const header = offer.headers.get('payment-required');
      if (offer.status !== 402 || !header) throw new Error(`${base + PAID_PATH} answered ${offer.status} without an offer`);
      const required = decodePaymentRequiredHeader(header);
      const templates = [];
      for (const key of keys) {
        const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(key)));
        const template = (await client.createPaymentPayload(required)) as unknown as {
          accepted: { asset: string; network: string; extra?: { name?: string; version?: string } };
          payload: { signature: string; authorization: import('../src/pay/eip3009.js').Authorization };
        };
        const { accepted } = template;
        if (!template.payload?.authorization) throw new Error('the official client did not sign an EIP-3009 authorization');
        const separator = domainSeparator({
          name: accepted.extra?.name ?? '',
          version: accepted.extra?.version ?? '',
          chainId: Number(accepted.network.split(':')[1]),
          verifyingContract: accepted.asset,
        });
        const secret = Buffer.from(key.slice(2), 'hex');
        if (sig(authorizationDigest(separator, template.payload.authorization), secret).toLowerCase() !== template.payload.signature.toLowerCase()) {
          throw new Error("fast signing does not reproduce the official client's signature");
        }
        templates.push({ template, separator, secret });
      }
      const out: string[] = [];
      for (let i = 0; i < count; i++) {
        const { template, separator, secret } = templates[i % templates.length]!;
        const authorization = { ...template.payload.authorization, nonce: '0x' + randomBytes(32).toString('hex') };
        const payload = { ...template, payload: { ...template.payload, authorization, signature: sig(authorizationDigest(separator, authorization), secret) } };
        out.push(encodePaymentSignatureHeader(payload as never));
      }
      return out;
    },
  };
}

let dir = '';
/** The work directory (logs, payments, the devnet's keys) is removed at the end unless a run went wrong. */
let keepDir = false;

const ms = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '-');

async function main(): Promise<void> {
  const SECONDS = env('BENCH_SECONDS', 8);
  const WARM = env('BENCH_WARM_SECONDS', 2);
  const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
  const LOAD_CONNECTIONS = env('BENCH_LOAD_CONNECTIONS', 4);
  const PAID = process.env.BENCH_PAID !== '0';
  const PAID_RATE = env('BENCH_PAID_RATE', 3000);
  const REF_PAID_RATE = env('BENCH_REF_PAID_RATE', 500);
  const PIN = process.env.PEERS_PIN ?? 'all';
  const PROF = process.env.PEERS_CPU_PROF;
  const DEVNET_NICE = env('PEERS_DEVNET_NICE', 0);

  if (!wrk && !autocannon) {
    throw new Error('wrk is not installed (apt-get install wrk) and neither is autocannon: cannot measure previews. Install wrk: autocannon caps near 40k req/s.');
  }
  if (!wrk) {
    console.error('\n!!!!!!!!!! WARNING: wrk not found, falling back to autocannon, which caps near 40k req/s on this kind of machine:');
    console.error('!!!!!!!!!! raw uWS will be under-measured and the ratio to it will look better than it is.\n');
  }
  if (!pinned) console.error(`WARNING: not pinning (${hasTaskset ? 'fewer than 2 cores' : 'taskset missing'}): servers and clients share cores.`);
  // The orchestrator itself (mostly idle) stays off the servers' core.
  if (pinned) spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)]);

  dir = mkdtempSync(join(tmpdir(), 'wires-bench-peers-'));
  wrkScript = join(dir, 'p999.lua');
  writeFileSync(wrkScript, WRK_LUA);
  const logOf = (name: string) => join(dir, `${name}.log`);

  let devnet: Setup['devnet'] = null;
  if (PAID) {
    const [cmd, args] = onCore(1, process.execPath, [SELF, 'devnet'], DEVNET_NICE);
    devnet = (await startChild<NonNullable<Setup['devnet']>>('devnet', cmd, args, logOf('devnet'))).ready;
  }

  const setupFile = join(dir, 'setup.json');
  const setup: Setup = { body: '', headers: [], devnet, dataDir: join(dir, 'data') };
  writeFileSync(setupFile, JSON.stringify(setup), { mode: 0o600 });
  const server = async (kind: Kind) => {
    const nodeArgs = kind === 'wires' && PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [];
    const [cmd, args] = onCore(0, process.execPath, [...nodeArgs, SELF, 'serve', kind, '0', setupFile]);
    const { child, ready } = await startChild<{ port: number }>(kind, cmd, args, logOf(kind));
    return { pid: child.pid!, base: `http://127.0.0.1:${ready.port}` };
  };

  // The service first: its preview answer is what the others serve.
  const wires = await server('wires');
  const captured = await fetch(wires.base + PREVIEW_PATH);
  const body = Buffer.from(await captured.arrayBuffer());
  if (captured.status !== 200) throw new Error(`the service's preview answered ${captured.status}: ${body}`);
  const SKIP = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding', 'uwebsockets']);
  setup.body = body.toString('base64');
  setup.headers = [...captured.headers].filter(([k]) => !SKIP.has(k.toLowerCase()));
  writeFileSync(setupFile, JSON.stringify(setup), { mode: 0o600 });
  const raw = await server('raw');
  const express = await server('express');
  const targets = { 'raw uWS': raw, wires, 'express + @x402/express': express } as const;
  for (const [name, t] of Object.entries(targets)) {
    const res = await fetch(t.base + PREVIEW_PATH);
    const got = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200 || got.length !== body.length) throw new Error(`${name} answered ${res.status} with ${got.length} bytes, expected 200 with ${body.length}`);
  }

  const rows: { target: string; route: string; client: string; r: Run }[] = [];
  const add = (target: string, route: string, client: string, r: Run) => {
    rows.push({ target, route, client, r });
    console.error(
      `  ${target} ${route} (${client}): ${r.rps.toFixed(0)} req/s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, p99.9 ${ms(r.p999)} ms${r.cpu ? `; server CPU ${(100 * r.cpu.share).toFixed(0)} % of a core, ${r.cpu.usPerRequest.toFixed(1)} µs/request` : ''}${r.bad ? `, ${r.bad} BAD ANSWERS` : ''}`,
    );
  };
  const client = wrk ? `wrk -t1 -c${CONNECTIONS}` : `autocannon -c${CONNECTIONS}`;
  const loadClient = `load.ts -c${LOAD_CONNECTIONS}`;

  console.error(`preview bytes: ${body.length}; warming up (${WARM} s each)`);
  for (const t of Object.values(targets)) await http(t.base + PREVIEW_PATH, WARM, CONNECTIONS);
  if (pinned && PIN === 'serving') for (const t of Object.values(targets)) moveHelpers(t.pid);
  console.error(`previews through ${client}, ${SECONDS} s each`);
  for (const [name, t] of Object.entries(targets)) add(name, 'GET /cve/preview', client, await withCpu(t.pid, () => http(t.base + PREVIEW_PATH, SECONDS, CONNECTIONS)));

  // The same previews through bench/load.ts: its ceiling (raw) and the floors of the paid calls.
  loadOverheadMs = (await run(...onCore(1, process.execPath, [LOAD, raw.base + PREVIEW_PATH, '1', '0']))).ms;
  console.error(`previews through ${loadClient}, ${SECONDS} s each (load.ts start-up and exit: ${loadOverheadMs.toFixed(0)} ms)`);
  for (const [name, t] of Object.entries(targets)) {
    await load(t.base + PREVIEW_PATH, WARM, LOAD_CONNECTIONS); // the server is warm; this warms nothing in the client, but settles the machine
    add(name, 'GET /cve/preview', loadClient, await withCpu(t.pid, () => load(t.base + PREVIEW_PATH, SECONDS, LOAD_CONNECTIONS)));
  }

  let settlement: unknown = null;
  if (PAID && devnet) {
    const signer = await makeSigner();
    const keys = devnet.payers.map((p) => p.privateKey as `0x${string}`);
    const paid = async (name: string, { base, pid }: { base: string; pid: number }, route: string, rate: number, payerKeys: `0x${string}`[], warmCalls: number) => {
      const slug = name.replace(/[^a-z0-9]+/gi, '-');
      const warmFile = join(dir, `${slug}-warm.txt`);
      writeFileSync(warmFile, (await signer.sign(base, warmCalls, payerKeys)).join('\n'), { mode: 0o600 });
      const warm = await load(base + PAID_PATH, WARM, LOAD_CONNECTIONS, warmFile, warmCalls);
      if (warm.bad) throw new Error(`${name}: ${warm.bad} of ${warm.requests} warm-up paid calls failed: ${JSON.stringify(warm.raw.statuses)} (logs in ${dir})`);
      const count = Math.ceil(SECONDS * rate);
      const t0 = performance.now();
      const file = join(dir, `${slug}-paid.txt`);
      writeFileSync(file, (await signer.sign(base, count, payerKeys)).join('\n'), { mode: 0o600 });
      console.error(`  ${name}: ${count} authorizations signed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      add(name, route, loadClient, await withCpu(pid, () => load(base + PAID_PATH, SECONDS, LOAD_CONNECTIONS, file, count)));
    };
    console.error(`paid calls through ${loadClient}, fresh authorization each`);
    // The reference first, with a payer of its own: this service's background settlements
    // keep the devnet busy for a while after its run.
    await paid('express + @x402/express', express, 'GET /cve/latest (sync)', REF_PAID_RATE, keys.slice(-1), 20);
    await paid('wires', wires, 'GET /cve/latest (optimistic)', PAID_RATE, keys.slice(0, Math.max(1, keys.length - 1)), 300);
    settlement = ((await (await fetch(`${wires.base}/health`)).json()) as { x402: { settlement: unknown } }).x402.settlement;
  }

  // The table.
  const rawWrk = rows.find((x) => x.target === 'raw uWS' && x.client === client)!;
  const rawLoad = rows.find((x) => x.target === 'raw uWS' && x.client === loadClient);
  const table = rows.map(({ target, route, client: c, r }) => {
    const free = rows.find((x) => x.target === target && x.client === c && x.route === 'GET /cve/preview');
    const isPreview = route === 'GET /cve/preview';
    const base = c === client ? rawWrk : rawLoad;
    return {
      target,
      route,
      client: c,
      'req/s': Math.round(r.rps),
      'p50 ms': ms(r.p50),
      'p99 ms': ms(r.p99),
      'p99.9 ms': ms(r.p999),
      'vs raw uWS': isPreview && base ? `${((100 * r.rps) / base.r.rps).toFixed(1)} %` : '',
      'server CPU': r.cpu ? `${(100 * r.cpu.share).toFixed(0)} %, ${r.cpu.usPerRequest.toFixed(1)} µs/req` : '',
      'paid − free p50/p99/p99.9 ms': !isPreview && free ? `${ms(r.p50 - free.r.p50)} / ${ms(r.p99 - free.r.p99)} / ${ms(r.p999 - free.r.p999)}` : '',
      bad: r.bad,
      ...(r.note ? { note: r.note } : {}),
    };
  });
  const placement = !pinned
    ? 'not pinned'
    : PIN === 'serving'
      ? "each server's main thread on core 0 (its helper threads on core 1); clients and the devnet on core 1"
      : `each server (all its threads) on core 0; clients, the orchestrator and the devnet${DEVNET_NICE ? ` (nice ${DEVNET_NICE})` : ''} on core 1`;
  console.log(`\n${placement}; ${SECONDS} s per run; preview bytes ${body.length}; latencies at the client`);
  console.table(table);
  const wiresWrk = rows.find((x) => x.target === 'wires' && x.client === client)!;
  const expressWrk = rows.find((x) => x.target === 'express + @x402/express' && x.client === client)!;
  console.log(
    `previews at ${((100 * wiresWrk.r.rps) / rawWrk.r.rps).toFixed(1)} % of raw uWS (target ≥ 80 %); p99 ${(wiresWrk.r.p99 / rawWrk.r.p99).toFixed(2)}× raw's; ` +
      `the service serves ${(wiresWrk.r.rps / expressWrk.r.rps).toFixed(1)}× the previews of express + @x402/express`,
  );
  if (rawWrk.r.cpu && wiresWrk.r.cpu && expressWrk.r.cpu) {
    console.log(
      `server CPU per preview (all threads, from /proc): raw uWS ${rawWrk.r.cpu.usPerRequest.toFixed(1)} µs, the service ${wiresWrk.r.cpu.usPerRequest.toFixed(1)} µs (${(wiresWrk.r.cpu.usPerRequest / rawWrk.r.cpu.usPerRequest).toFixed(2)}×), ` +
        `express + @x402/express ${expressWrk.r.cpu.usPerRequest.toFixed(1)} µs (${(expressWrk.r.cpu.usPerRequest / rawWrk.r.cpu.usPerRequest).toFixed(2)}×)`,
    );
    if (rawWrk.r.cpu.share < 0.9) {
      console.log(
        `note: raw uWS used only ${(100 * rawWrk.r.cpu.share).toFixed(0)} % of its core: the client was its ceiling, so raw's req/s is a lower bound and the "vs raw uWS" ratios overstate the others`,
      );
    }
  }
  const paidRow = rows.find((x) => x.target === 'wires' && x.route.startsWith('GET /cve/latest'));
  const refRow = rows.find((x) => x.target.startsWith('express') && x.route.startsWith('GET /cve/latest'));
  if (paidRow && refRow) {
    console.log(
      `paid calls: the service (optimistic) ${(paidRow.r.rps / refRow.r.rps).toFixed(1)}× the reference's (sync) req/s, p50 ${(refRow.r.p50 / paidRow.r.p50).toFixed(1)}× lower, p99 ${(refRow.r.p99 / paidRow.r.p99).toFixed(1)}× lower`,
    );
  }
  const took = (target: string) => rows.filter((x) => x.target === target && x.client === loadClient && x.r.server);
  for (const target of ['wires']) {
    const [free, paid] = took(target);
    if (free?.r.server && paid?.r.server) {
      console.log(
        `server-side (took_ms in the envelope, same runs): preview p50 ${ms(free.r.server.p50)} p99 ${ms(free.r.server.p99)} ms; paid p50 ${ms(paid.r.server.p50)} p99 ${ms(paid.r.server.p99)} ms: paid − preview p99 ${ms(paid.r.server.p99 - free.r.server.p99)} ms`,
      );
    }
  }
  if (settlement) console.log('settlement state of the service at the end:', JSON.stringify(settlement));
  if (rows.some((x) => x.r.bad)) {
    console.log(`WARNING: some runs had non-200 answers or socket errors (column "bad"); server logs kept in ${dir}`);
    keepDir = true;
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'serve') {
  await serve(rest[0] as Kind, Number(rest[1] ?? 0), rest[2]!);
} else if (mode === 'devnet') {
  await devnetChild();
} else {
  const stop = (signal: string) => {
    console.error(`\n${signal}: stopping the children`);
    void cleanup().then(() => process.exit(130));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  let failed = false;
  try {
    await main();
  } catch (err) {
    failed = true;
    keepDir = true;
    console.error('bench:peers failed:', err instanceof Error ? (err.stack ?? err.message) : err, `\n(logs in ${dir})`);
  } finally {
    await cleanup();
    if (dir && !keepDir) rmSync(dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}
