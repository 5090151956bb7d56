/**
 * A data dir whose filesystem fills while serving: a 4 MiB tmpfs that the test mounts (root
 * only; CI runs as root), filled to the last byte by a file of zeros. Paid calls then answer
 * 503 with nothing charged on chain, previews keep serving, a snapshot that cannot be written
 * leaves the previous one intact, and no journal line is left corrupt. Once the file is
 * removed, payments resume without a restart; after a restart every accepted authorization
 * is still spent.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { loadWire } from '../src/ingest/snapshot.js';
import { ChainReader } from '../src/pay/chain.js';
import { JOURNAL_FILE } from '../src/pay/journal.js';
import { encodePayment, signPayment } from './helpers/payments.js';
import { startTestService, type TestService } from './helpers/service.js';

/** Why the test cannot run here (mounting needs root and CAP_SYS_ADMIN), or false. */
let SKIP: string | false = process.getuid?.() === 0 ? false : 'mounting a small filesystem needs root (CI runs as root)';

let mount: string;
let devnet: Devnet;
let chain: ChainReader;
let svc: TestService;

before(async () => {
  if (SKIP) return;
  const dir = join(mkdtempSync(join(tmpdir(), 'wires-full-')), 'data');
  mkdirSync(dir);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
    mount = dir;
  } catch (err) {
    SKIP = `cannot mount a tmpfs here: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
    return;
  }
  devnet = await startDevnet({ payers: 1 });
  chain = new ChainReader(devnet.rpcUrl, 10_000);
});

after(async () => {
  await svc?.stop().catch(() => {});
  await devnet?.stop();
  if (mount) execFileSync('umount', ['-l', mount]);
});

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Writes zeros until the filesystem refuses: nothing is left for anyone. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    for (let size = 32 * 1024; size >= 1; size >>= 1) {
      try {
        for (;;) writeSync(fd, block, 0, size);
      } catch {}
    }
  } finally {
    closeSync(fd);
  }
}

test('a full data dir: paid calls 503 and charge nothing, previews serve, snapshots and journal stay whole, service resumes by itself', { timeout: 120_000 }, async (t) => {
  if (SKIP) return t.skip(SKIP);
  svc = await startTestService({ DATA_DIR: mount, PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
  const payer = devnet.payers[0]!;
  const pay = async (paymentId: string) => (await signPayment({ amount: '5000', payTo: devnet.payTo, privateKey: payer.privateKey, paymentId })).payload;
  const call = (payload: unknown) => svc.get('/cve/latest?src=cisa', { headers: { 'PAYMENT-SIGNATURE': encodePayment(payload) } });
  const balance = () => chain.balanceOf(payer.address);

  const first = await pay('full_disk_first_0001');
  assert.equal((await call(first)).status, 200);
  await svc.snapshot();
  const snapshots = join(mount, 'snapshots');
  const before = Object.fromEntries(readdirSync(snapshots).map((f) => [f, sha(join(snapshots, f))]));
  const charged = await balance();

  fill(join(mount, 'filler'));
  // The journal's last page may still have room for a record or two (a filesystem allocates
  // whole pages): those payments are recorded, so they are served and charged.
  let recorded = 0;
  let second = await pay('full_disk_second_000');
  let refused = await call(second);
  while (refused.status === 200 && recorded < 8) {
    recorded++;
    second = await pay(`full_disk_second_00${recorded}`);
    refused = await call(second);
  }
  assert.equal(refused.status, 503, `${recorded} payments fitted on the journal's last page`);
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'payments_unavailable');
  const afterRecorded = charged - BigInt(recorded) * 5000n;
  assert.equal((await svc.get('/cve/preview?src=cisa')).status, 200, 'previews keep serving');

  await svc.snapshot(); // fails: logged, never thrown
  assert.deepEqual(Object.fromEntries(readdirSync(snapshots).map((f) => [f, sha(join(snapshots, f))])), before, 'the previous snapshots, untouched, no temporary file left');
  assert.ok(loadWire(mount, 'cve')!.length > 0, 'and still loadable');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await balance(), afterRecorded, 'nothing charged for what could not be recorded');

  rmSync(join(mount, 'filler'));
  const resumed = await call(second);
  assert.equal(resumed.status, 200, 'the same payment goes through once there is room, without a restart');
  assert.equal((await balance()) - afterRecorded, -5000n, 'charged once');

  const lines = readFileSync(join(mount, 'journal', JOURNAL_FILE), 'utf8')
    .split('\n')
    .filter(Boolean);
  for (const line of lines) JSON.parse(line); // no torn or corrupt line
  await svc.stop();

  svc = await startTestService({ DATA_DIR: mount, PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl });
  const { extensions: _, ...published } = first;
  const replay = await call(published);
  assert.equal(replay.status, 402, 'after a restart the first authorization is still spent');
  assert.equal(((await replay.json()) as { error: { code: string } }).error.code, 'replay');
  assert.equal((await balance()) - afterRecorded, -5000n);
});
