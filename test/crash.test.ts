/**
 * Exactly once across a crash: the real service is killed with SIGKILL while paid calls are
 * in flight, restarted on the same DATA_DIR, and the journal and the chain must agree that
 * every accepted authorization settled once, and that nothing unrecorded was charged.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { ChainReader } from '../src/pay/chain.js';
import { encodePayment, signPayment } from './helpers/payments.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
let devnet: Devnet;
let chain: ChainReader;

before(async () => {
  devnet = await startDevnet({ payers: 1 });
  chain = new ChainReader(devnet.rpcUrl, 10_000);
});
after(() => devnet?.stop());

/** Starts the real service; resolves with its port once it listens. */
function startMain(dataDir: string, mode: 'sync' | 'optimistic'): Promise<{ child: ChildProcess; port: number; logs: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: '0',
        INGEST: '0',
        DATA_DIR: dataDir,
        PAY_TO_ADDRESS: devnet.payTo,
        FACILITATOR_URL: devnet.facilitatorUrl,
        SETTLEMENT: mode,
        // Every call of the one payer takes the optimistic path.
        OPTIMISTIC_MAX_UNSETTLED_USD: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`service did not start: ${stderr}`)), 15_000);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const m = /"msg":"listening".*?"port":(\d+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), logs: () => stderr });
      }
    });
    child.once('exit', (code) => reject(new Error(`service exited (${code}): ${stderr}`)));
  });
}

/** Every journal line ever written: the current file and the archives of earlier runs. */
function journalLines(dataDir: string): any[] {
  const dir = join(dataDir, 'journal');
  const files = [join(dir, 'payments.jsonl')];
  if (existsSync(join(dir, 'journal-archive'))) files.push(...readdirSync(join(dir, 'journal-archive')).map((f) => join(dir, 'journal-archive', f)));
  const lines: any[] = [];
  for (const f of files) {
    for (const line of readFileSync(f, 'utf8').split('\n')) {
      try {
        if (line) lines.push(JSON.parse(line));
      } catch {
        /* a torn last line from the crash */
      }
    }
  }
  return lines;
}

for (const mode of ['sync', 'optimistic'] as const) {
  test(`${mode}: SIGKILL with paid calls in flight, and after a restart every accepted authorization settles exactly once`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'wires-crash-'));
    const payer = devnet.payers[0]!;
    const payments = await Promise.all(Array.from({ length: 40 }, () => signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey })));
    const balance = (a: string) => chain.balanceOf(a);
    const [payer0, payTo0] = [await balance(payer.address), await balance(devnet.payTo)];

    const first = await startMain(dataDir, mode);
    const delivered = new Set<string>();
    let killed = false;
    const calls = payments.map(({ payload }, i) =>
      // Spread the calls out a little so the kill lands among them, not after them.
      new Promise((r) => setTimeout(r, i * 3)).then(() =>
        fetch(`http://127.0.0.1:${first.port}/cve/latest`, { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } }).then(
          async (res) => {
            if (res.status === 200) delivered.add(payload.payload.authorization.nonce);
            if (!killed && delivered.size >= 5) {
              killed = true;
              first.child.kill('SIGKILL');
            }
          },
          () => {},
        ),
      ),
    );
    await Promise.all(calls);
    if (!killed) first.child.kill('SIGKILL');
    await new Promise((r) => (first.child.exitCode !== null || first.child.signalCode !== null ? r(null) : first.child.once('exit', r)));

    const linesBefore = journalLines(dataDir);
    const acceptedBefore = new Set(linesBefore.filter((l) => l.t === 'accepted').map((l) => l.payload.payload.authorization.nonce));
    for (const nonce of delivered) assert.ok(acceptedBefore.has(nonce), 'data is released only after the journal has the authorization');
    const settledBefore = linesBefore.filter((l) => l.t === 'settled').length;
    assert.ok(settledBefore < acceptedBefore.size, `the kill landed with settlements in flight (${settledBefore} of ${acceptedBefore.size} settled)`);

    const second = await startMain(dataDir, mode);
    try {
      const health = async () => ((await (await fetch(`http://127.0.0.1:${second.port}/health`)).json()) as any).x402.settlement;
      const end = Date.now() + 20_000;
      while ((await health()).pending > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      const h = await health();
      assert.equal(h.pending, 0, second.logs());
      assert.equal(h.failed, 0, second.logs());
      assert.equal(h.settled, acceptedBefore.size);
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }

    const lines = journalLines(dataDir);
    const accepted = lines.filter((l) => l.t === 'accepted');
    const ids = new Set(accepted.map((l) => l.id));
    for (const id of ids) {
      const outcomes = lines.filter((l) => l.id === id && (l.t === 'settled' || l.t === 'failed'));
      assert.deepEqual(
        outcomes.map((o) => o.t),
        ['settled'],
        `${id}: one outcome`,
      );
    }
    // The chain agrees: every accepted nonce is used, no other one is.
    for (const { payload } of payments) {
      const auth = payload.payload.authorization;
      const used = await chain.authorizationUsed(auth.from, auth.nonce);
      assert.equal(used, acceptedBefore.has(auth.nonce), auth.nonce);
    }
    const n = BigInt(acceptedBefore.size);
    assert.equal((await balance(payer.address)) - payer0, -5000n * n);
    assert.equal((await balance(devnet.payTo)) - payTo0, 5000n * n);
  });
}
