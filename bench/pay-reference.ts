/**
 * Our paid call against the reference seller middleware, same devnet, same facilitator, same
 * run (`npm run bench:pay-reference`). The baseline is an Express app guarded by
 * `@x402/express` with `@x402/core`'s HTTP facilitator client and `@x402/evm`'s exact scheme,
 * serving the same envelope bytes. Both settle before releasing the data (our `sync` mode,
 * x402's semantics); ours is also measured in `optimistic` mode.
 *
 * One client calls each server in turn, one call at a time, each with a fresh authorization
 * that the official client signed ahead of time for that server's own offer (signing is the
 * client's cost). Reported: latency at the client and the ratio to the baseline. Then two
 * concurrent copies of one authorization go to each server: how many times the route's
 * handler ran, and how many transfers were made.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { x402Client } from '@x402/core/client';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClient } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import { request } from 'undici';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config.js';
import type { DevnetInfo } from '../src/devnet/devnet.js';
import { setLogLevel } from '../src/log.js';
import { ChainReader } from '../src/pay/chain.js';
import { NETWORK } from '../src/pay/offer.js';
import { createIndexes, startService, type Service } from '../src/service.js';
import { seedAll } from '../test/helpers/sample-items.js';

const CALLS = 200;
const PATH = '/cve/latest?q=vulnerability&limit=3';
const DEVNET = fileURLToPath(new URL('../src/devnet/main.js', import.meta.url));

setLogLevel('error');
const dir = mkdtempSync(join(tmpdir(), 'wires-bench-ref-'));
const devnetFile = join(dir, 'devnet.json');
const devnetProcess = spawn(process.execPath, [DEVNET], { env: { ...process.env, DEVNET_FILE: devnetFile }, stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve) => devnetProcess.stdout!.once('data', resolve));
const devnet = JSON.parse(readFileSync(devnetFile, 'utf8')) as DevnetInfo;
const chain = new ChainReader(devnet.rpcUrl, 10_000);
const balance = (a: string) => chain.balanceOf(a);

const wires = createIndexes();
const now = Date.now();
for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
async function ours(mode: 'sync' | 'optimistic'): Promise<Service> {
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: mkdtempSync(join(dir, mode)),
    INGEST: '0',
    PAY_TO_ADDRESS: devnet.payTo,
    FACILITATOR_URL: devnet.facilitatorUrl,
    SETTLEMENT: mode,
    OPTIMISTIC_MAX_UNSETTLED_USD: '1000',
  });
  return startService(config, { wires });
}
const sync = await ours('sync');
const optimistic = await ours('optimistic');

// The baseline serves the envelope our service gives for the same query.
const envelope = await (await fetch(`http://127.0.0.1:${sync.port}/cve/preview?q=vulnerability`)).text();
let handlerRuns = 0;
const app = express();
const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: devnet.facilitatorUrl })).register(NETWORK, new ExactEvmServer());
app.use(paymentMiddleware({ 'GET /cve/latest': { accepts: { scheme: 'exact', price: '$0.005', network: NETWORK, payTo: devnet.payTo } } }, resourceServer));
app.get('/cve/latest', (_req, res) => {
  handlerRuns++;
  res.type('application/json').send(envelope);
});
const reference = await new Promise<import('node:http').Server>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});

const servers = {
  'x402 reference (@x402/express)': `http://127.0.0.1:${(reference.address() as AddressInfo).port}`,
  'wires, sync': `http://127.0.0.1:${sync.port}`,
  'wires, optimistic': `http://127.0.0.1:${optimistic.port}`,
};
const payer = devnet.payers[0]!;
const client = new x402Client().register('eip155:*', new ExactEvmClient(privateKeyToAccount(payer.privateKey)));

/** Payment headers for `base`, signed by the official client for the offer that server makes. */
async function sign(base: string, count: number, signer = client): Promise<string[]> {
  const offer = await request(base + PATH);
  await offer.body.dump();
  const required = decodePaymentRequiredHeader(String(offer.headers['payment-required']));
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(encodePaymentSignatureHeader(await signer.createPaymentPayload(required)));
  return out;
}

async function call(base: string, header: string): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  const res = await request(base + PATH, { headers: { 'payment-signature': header } });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - start };
}

const quantile = (values: number[], q: number) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const rows: Record<string, { calls: number; errors: number; p50_ms: number; p99_ms: number }> = {};
for (const [name, base] of Object.entries(servers)) {
  const headers = await sign(base, CALLS + 10);
  for (const h of headers.slice(0, 10)) await call(base, h); // warm-up
  const times: number[] = [];
  let errors = 0;
  for (const h of headers.slice(10)) {
    const r = await call(base, h);
    if (r.status !== 200) errors++;
    times.push(r.ms);
  }
  rows[name] = { calls: times.length, errors, p50_ms: +quantile(times, 0.5).toFixed(2), p99_ms: +quantile(times, 0.99).toFixed(2) };
}

// Two concurrent copies of one authorization: one transfer, and the data computed once?
const duplicates: Record<string, { statuses: string; transferred_usdc: number; handler_runs?: number }> = {};
// Another payer, so the optimistic server's background settlements do not move this balance.
const duplicatePayer = devnet.payers[1]!;
const duplicateClient = new x402Client().register('eip155:*', new ExactEvmClient(privateKeyToAccount(duplicatePayer.privateKey)));
for (const [name, base] of Object.entries(servers).slice(0, 2)) {
  const [header] = await sign(base, 1, duplicateClient);
  const runsBefore = handlerRuns;
  const paidBefore = await balance(duplicatePayer.address);
  const results = await Promise.all([call(base, header!), call(base, header!)]);
  await new Promise((r) => setTimeout(r, 1000));
  duplicates[name] = {
    statuses: results.map((r) => r.status).join(', '),
    transferred_usdc: Number(paidBefore - (await balance(duplicatePayer.address))) / 1e6,
    ...(name.startsWith('x402') ? { handler_runs: handlerRuns - runsBefore } : {}),
  };
}

const baseline = rows['x402 reference (@x402/express)']!;
console.log(`one paid call at a time, ${CALLS} calls each, fresh authorization per call; devnet mines each transfer at once`);
console.table(rows);
for (const name of ['wires, sync', 'wires, optimistic']) {
  const r = rows[name]!;
  console.log(`${name}: p50 ${(baseline.p50_ms / r.p50_ms).toFixed(1)}× faster than the reference, p99 ${(baseline.p99_ms / r.p99_ms).toFixed(1)}×`);
}
console.log('two concurrent copies of one authorization (our own handler count is covered by test/payments.test.ts):');
console.table(duplicates);

await new Promise((r) => reference.close(r));
await sync.stop();
await optimistic.stop();
devnetProcess.kill('SIGTERM');
