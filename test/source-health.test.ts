/**
 * No silent empty wire: a document that holds entries but yields no item is a failed poll
 * with its reason, whatever removed them (no usable link, or the source's own rule, such as
 * EDGAR's form filter), a source that starts skipping most of its entries is a warning, and
 * /sources says per source what its last document gave and what the wire holds from it.
 * The real entry point polls a loopback server, as it polls the real sources.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SOURCES } from '../src/catalog/index.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

function rss(items: string[]): string {
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>https://example.com/</link>${items.join('')}</channel></rss>`;
}
const pubDate = (i: number) => new Date(Date.now() - (i + 1) * 60_000).toUTCString();
const linked = (tag: string, i: number) => `<item><title>${tag} story ${i}</title><link>https://example.com/${tag}/${i}</link><pubDate>${pubDate(i)}</pubDate></item>`;
// An opaque guid is no link: such an entry has nowhere to send a reader.
const unlinked = (tag: string, i: number) => `<item><title>${tag} story ${i}</title><guid isPermaLink="false">${tag}-${i}</guid><pubDate>${pubDate(i)}</pubDate></item>`;

const STALE_AT = Date.now() - 10 * 86_400_000;

const REAL = (file: string) => readFileSync(new URL(`../../fixtures/real/${file}`, import.meta.url));
/** EDGAR's 10-K listing without its form categories: what a change of EDGAR's format would look like. */
const EDGAR_NO_FORMS = Buffer.from(
  REAL('edgar-getcurrent-10-K-2016-02-25.xml')
    .toString('utf8')
    .replace(/<category [^>]*\/>/g, ''),
);

let server: Server;
let url: string;
let degradingPolls = 0;
before(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/rss+xml');
    if (req.url === '/no-links') return void res.end(rss([0, 1, 2].map((i) => unlinked('nolink', i))));
    // A feed whose newest story is ten days old, polled for a wire that keeps seven.
    if (req.url === '/stale') return void res.end(rss([0, 1, 2].map((i) => linked('stale', i).replace(pubDate(i), new Date(STALE_AT - i * 60_000).toUTCString()))));
    if (req.url === '/edgar-no-forms') return void res.setHeader('content-type', 'application/atom+xml').end(EDGAR_NO_FORMS);
    if (req.url === '/degrading') {
      // First document: 10 good entries. Later ones: 7 of 10 without a link.
      const n = degradingPolls++;
      return void res.end(rss(Array.from({ length: 10 }, (_, i) => (n > 0 && i >= 3 ? unlinked('late', i) : linked(n > 0 ? 'late' : 'early', i)))));
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

test('entries but no item: a failed poll with its reason in /sources and /health; a rising share of skips: a warning', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wires-source-health-'));
  const file = join(dir, 'sources.json');
  // Two breaking-tier Hacker News sources (polled on every run); every other source at a closed port.
  const overrides: Record<string, string> = Object.fromEntries(SOURCES.map((s) => [s.id, 'http://127.0.0.1:9/']));
  overrides['hn-show'] = `${url}/no-links`;
  overrides['hn-rising'] = `${url}/degrading`;
  overrides.edgar = `${url}/edgar-no-forms`;
  overrides['hn-frontpage'] = `${url}/stale`;
  writeFileSync(file, JSON.stringify(overrides));

  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', INGEST: '1', POLL_INTERVAL_SEC: '1', FETCH_TIMEOUT_SEC: '5', DATA_DIR: dir, WIRES_SOURCES: file },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const deadline = Date.now() + 60_000;
    const until = async <T>(what: string, fn: () => Promise<T | undefined>): Promise<T> => {
      for (;;) {
        const v = await fn().catch(() => undefined);
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${stderr.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const port = await until('listening', async () => /"msg":"listening".*?"port":(\d+)/.exec(stderr)?.[1]);
    const base = `http://127.0.0.1:${port}`;
    const sourceState = async (id: string) => ((await (await fetch(`${base}/sources`)).json()) as any[]).find((s) => s.id === id)?.state;

    const failed = await until('the no-link source to fail', async () => {
      const st = await sourceState('hn-show');
      return st?.last_error ? st : undefined;
    });
    assert.equal(failed.last_error.code, 'parse_no_items');
    assert.equal(failed.last_error.message, '3 of 3 entries skipped: no usable link');
    assert.equal(failed.items_held, 0);
    // Entries, all older than the wire keeps: a source gone stale, not a quiet zero.
    const stale = await until('the stale source to fail', async () => {
      const st = await sourceState('hn-frontpage');
      return st?.last_error ? st : undefined;
    });
    assert.equal(stale.last_error.code, 'parse_no_items');
    assert.equal(stale.last_error.message, `3 of 3 items older than the wire's 7d retention; the newest is from ${new Date(Math.floor(STALE_AT / 1000) * 1000).toISOString()}`);
    // The source's own rule removed every entry (a change of EDGAR's format): as loud as a missing link.
    const noForms = await until('EDGAR to fail on entries without a form', async () => {
      const st = await sourceState('edgar');
      return st?.last_error ? st : undefined;
    });
    assert.equal(noForms.last_error.code, 'parse_no_items');
    assert.equal(noForms.last_error.message, '40 of 40 entries dropped: no form category');
    const health = (await (await fetch(`${base}/health`)).json()) as any;
    assert.ok(health.sources.detail.find((s: any) => s.id === 'edgar').consecutive_failures >= 1, 'EDGAR counted as failing in /health');
    const detail = health.sources.detail.find((s: any) => s.id === 'hn-show');
    assert.ok(detail.consecutive_failures >= 1, 'counted as failing in /health');

    const degraded = await until('the degrading source to be polled twice', async () => {
      const st = await sourceState('hn-rising');
      return st?.last_document?.skipped === 7 ? st : undefined;
    });
    assert.deepEqual(degraded.last_document, { entries: 10, items: 3, dropped: 0, drop_reason: null, skipped: 7, skip_reason: '7 of 10 entries skipped: no usable link' });
    assert.equal(degraded.last_error, null, 'some items: not a failure');
    assert.ok(degraded.entries_skipped >= 7);
    assert.ok(degraded.items_held >= 10, `the first document's items are still held (${degraded.items_held})`);
    await until('the warning', async () => (/"msg":"a source skips a much larger share of its entries".*"source":"hn-rising"/.test(stderr) ? true : undefined));
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
