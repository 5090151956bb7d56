/**
 * deploy/serve.sh, the systemd units' start command: the service's stderr without
 * uWebSockets.js's one non-JSON line, and nothing else lost, also when the stop signal reaches
 * every process of the unit as systemd sends it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { type Devnet, startDevnet } from '../src/devnet/devnet.js';
import { encodePayment, signPayment } from './helpers/payments.js';

const SERVE = fileURLToPath(new URL('../../deploy/serve.sh', import.meta.url));
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const WARNING = 'Warning: uWS.HttpResponse writes must be made from within a corked callback.';

let devnet: Devnet;
before(async () => {
  devnet = await startDevnet({ payers: 2 });
});
after(async () => {
  await devnet?.stop();
});

/**
 * Starts the service with `argv`, buys one stream block in the upgrade request (its payment
 * waits on the facilitator), then sends SIGTERM to the whole process group, as systemd does,
 * and returns all that reached stderr once every writer has closed it.
 */
async function buyAStreamAndStop(argv: string[], payer: Devnet['payers'][number]): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(argv[0]!, argv.slice(1), {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      INGEST: '0',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-serve-')),
      PAY_TO_ADDRESS: devnet.payTo,
      FACILITATOR_URL: devnet.facilitatorUrl,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const kill = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
  try {
    let port = 0;
    while (!port) {
      port = Number(/"msg":"listening".*?"port":(\d+)/.exec(stderr)?.[1] ?? 0);
      if (child.exitCode !== null) throw new Error(`the service did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const url = `http://127.0.0.1:${port}`;
    const prices = (await (await fetch(`${url}/.well-known/x402`)).json()) as { streams: { path: string; accepts: { amount: string }[] }[] };
    const amount = prices.streams.find((s) => s.path === '/stream?wire=news')!.accepts[0]!.amount;
    const { payload } = await signPayment({ amount, payTo: devnet.payTo, privateKey: payer.privateKey });
    const ws = new WebSocket(`ws://127.0.0.1:${port}/stream?wire=news`, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
    const first = await new Promise<{ type: string }>((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data))));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('close', (code) => reject(new Error(`closed ${code} before any message`)));
      ws.once('error', reject);
    });
    assert.equal(first.type, 'paid');
    ws.close();
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
  }
  const code = await closed;
  clearTimeout(kill);
  return { code, lines: stderr.split('\n').filter((line) => line !== '') };
}

test('through deploy/serve.sh every stderr line is JSON, the service’s own lines all arrive, and the exit status is node’s', async () => {
  const direct = await buyAStreamAndStop([process.execPath, MAIN], devnet.payers[0]!);
  const served = await buyAStreamAndStop([SERVE], devnet.payers[1]!);
  // Run directly, uWebSockets.js writes its line once for the one purchase.
  assert.deepEqual(
    direct.lines.filter((line) => line.startsWith(WARNING)),
    [`${WARNING} See documentation for uWS.HttpResponse.cork and consult the user manual.`],
  );
  const messages = (lines: string[]) => lines.filter((l) => !l.startsWith(WARNING)).map((l) => (JSON.parse(l) as { msg: string }).msg);
  assert.deepEqual(
    served.lines.filter((line) => !line.startsWith('{')),
    [],
    served.lines.join('\n'),
  );
  // The same messages in the same order, the last ones (written after the SIGTERM that the
  // filter received too) included.
  assert.deepEqual(messages(served.lines), messages(direct.lines));
  assert.ok(messages(served.lines).includes('shutting down'));
  assert.deepEqual([direct.code, served.code], [0, 0]);
});
