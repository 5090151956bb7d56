/**
 * The wall clock stepping under a running service, for real: the service runs as its own
 * process under libfaketime (LD_PRELOAD), whose wall clock the test steps by rewriting a file,
 * while its monotonic clock runs on untouched, as when NTP or an operator steps a box's clock.
 * A publisher feeds it new stories; a client holds a paid stream of one 10 s block on the
 * devnet (its spend limit allows no renewal).
 *
 * An hour forward: previews keep their items (none evicted), /health does not call polling stalled, and the paid
 * stream keeps receiving. Then an hour behind: polling goes on (a schedule on the wall clock
 * would wait an hour), ages are never negative, and the paid stream ends when its block ends,
 * not an hour later.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { WiresClient } from '../src/client/client.js';
import type { StreamItem } from '../src/client/stream.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { startPublisher, type Publisher } from './helpers/publisher.js';

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
const SKIP = !existsSync(LIBFAKETIME) && !process.env.CI ? `libfaketime is not installed (${LIBFAKETIME}); bash scripts/install-system-deps.sh installs it` : false;
const ENTRY = fileURLToPath(new URL('./helpers/service-process.js', import.meta.url));
const BLOCK_MS = 10_000;

let devnet: Devnet;
let publisher: Publisher;
let child: ChildProcess;
let base: string;
let clockFile: string;

/** Sets the service's wall clock to real time plus `offsetSec`; libfaketime reads it within a second. */
async function step(offsetSec: number): Promise<void> {
  writeFileSync(clockFile, `${offsetSec >= 0 ? '+' : ''}${offsetSec}\n`);
  await new Promise((r) => setTimeout(r, 1500));
}

before(async () => {
  if (SKIP) return;
  devnet = await startDevnet({ payers: 1 });
  publisher = await startPublisher({ newOnEveryRequest: true });
  const dir = mkdtempSync(join(tmpdir(), 'wires-clock-'));
  clockFile = join(dir, 'clock');
  writeFileSync(clockFile, '+0\n');
  writeFileSync(join(dir, 'sources.json'), JSON.stringify({ 'yahoo-finance': publisher.url }));
  child = spawn(process.execPath, [ENTRY], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: join(dir, 'data'),
      WIRES_SOURCES: join(dir, 'sources.json'),
      POLL_FLOOR_SEC: '1',
      POLL_INTERVAL_SEC: '2',
      SETTLEMENT: 'optimistic',
      PAY_TO_ADDRESS: devnet.payTo,
      FACILITATOR_URL: devnet.facilitatorUrl,
      STREAM_BLOCK_MS: String(BLOCK_MS),
      LOG_LEVEL: 'error',
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: clockFile,
      FAKETIME_CACHE_DURATION: '1',
      DONT_FAKE_MONOTONIC: '1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  base = `http://127.0.0.1:${(JSON.parse(first.value as string) as { port: number }).port}`;
});

after(async () => {
  child?.kill('SIGKILL');
  await publisher?.close();
  await devnet?.stop();
});

const get = async (path: string) => {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as any };
};
const stories = async () => (await get('/news/preview?q=story&limit=3&since=72h')).body;

test('wall-clock steps of an hour forward and back: serving, polling and paid time run on', { skip: SKIP, timeout: 90_000 }, async () => {
  for (let i = 0; i < 100 && (await stories()).count === 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok((await stories()).count > 0, 'the publisher’s stories are served');

  const block = (await (await fetch(`${base}/.well-known/x402`)).json()) as { streams: { path: string; accepts: { amount: string }[] }[] };
  const blockUsd = Number(block.streams.find((s) => s.path === '/stream?wire=news')!.accepts[0]!.amount) / 1e6;
  const client = new WiresClient({ url: base, privateKey: devnet.payers[0]!.privateKey, maxSpendUsd: blockUsd });
  const stream = client.stream('news', { q: 'story' });
  await stream.ready;
  const paidAt = performance.now();
  const received: { item: StreamItem; at: number }[] = [];
  const reading = (async () => {
    for await (const item of stream) received.push({ item, at: performance.now() });
  })().catch(() => {});

  // An hour forward.
  const itemsBefore = ((await get('/health')).body as { wires: Record<string, { items: number }> }).wires.news!.items;
  await step(3600);
  const health = (await get('/health')).body;
  assert.notEqual(health.status, 'down', 'polling is not thought stalled (the other sources fail here: degraded)');
  assert.ok(health.wires.news.items >= itemsBefore, `no item evicted: ${health.wires.news.items} of ${itemsBefore}`);
  assert.equal((await get('/news/preview?q=story')).status, 200);
  const steppedAt = performance.now();
  for (let i = 0; i < 40 && !received.some((r) => r.at > steppedAt); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(
    received.some((r) => r.at > steppedAt),
    'the paid stream still receives after the step',
  );
  assert.equal(stream.closed, false, 'and its paid time did not end with the step');

  // An hour behind real time.
  await step(-3600);
  const polled = publisher.requests.length;
  for (let i = 0; i < 50 && publisher.requests.length === polled; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(publisher.requests.length > polled, 'polling goes on');
  for (const a of (await stories()).articles) assert.ok(a.age_minutes >= 0, `age ${a.age_minutes}`);

  for (let i = 0; i < 150 && !stream.closed; i++) await new Promise((r) => setTimeout(r, 100));
  const endedAfter = performance.now() - paidAt;
  assert.equal(stream.closed, true, 'the stream ends when its block is over, not an hour later');
  assert.ok(endedAfter < BLOCK_MS + 3000, `ended ${Math.round(endedAfter)} ms after the payment`);
  await reading;
  await step(0);
});
