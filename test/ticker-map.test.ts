/**
 * SEC's ticker map as a source: fetched over HTTP from a loopback server serving the real
 * capture (as sec.gov serves it: JSON, with an ETag), kept in the data dir so a restart needs
 * no network, refused whole when a document is not the map, and polled again conditionally.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TICKER_MAP_CAPTURE } from '../src/demo/fixture-server.js';
import { HostBudgets } from '../src/ingest/budget.js';
import { fetcherOptions } from '../src/ingest/fetch-options.js';
import { setLogLevel } from '../src/log.js';
import { CompanyMap, CompanyMapError } from '../src/tickers/company-map.js';
import { TickerMapSource } from '../src/tickers/ticker-source.js';

setLogLevel('error');
const CAPTURE = readFileSync(new URL(`../../fixtures/real/${TICKER_MAP_CAPTURE}`, import.meta.url));

describe('the ticker map', () => {
  test('the capture reads as SEC publishes it: a CIK to its listings, a ticker to its company', () => {
    const map = CompanyMap.parse(CAPTURE.toString('utf8'));
    assert.equal(map.size, 10_218);
    assert.deepEqual(map.byTicker('nvda'), { cik: '0001045810', name: 'NVIDIA CORP', ticker: 'NVDA', exchange: 'Nasdaq' });
    assert.deepEqual(
      map.byCik('1652044').map((l) => l.ticker),
      ['GOOGL', 'GOOG'],
    );
    assert.throws(() => CompanyMap.parse('{"fields":["cik","name","ticker","exchange"],"data":[[1,"A","A","NYSE"]]}'), CompanyMapError);
    assert.throws(() => CompanyMap.parse('<html>maintenance</html>'), CompanyMapError);
  });

  describe('polled from its publisher', () => {
    let server: Server;
    let url: string;
    let body: Buffer = CAPTURE;
    const requests: IncomingMessage[] = [];
    before(async () => {
      server = createServer((req, res) => {
        requests.push(req);
        const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
        if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { ETag: etag }).end();
        res.writeHead(200, { 'Content-Type': 'application/json', ETag: etag }).end(body);
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/files/company_tickers_exchange.json`;
    });
    after(() => server.close());

    const source = (dataDir: string) => new TickerMapSource({ dataDir, url, fetcher: fetcherOptions('Test test@example.com', 10), budgets: new HostBudgets() });

    test('a first start fetches it with the User-Agent and keeps it; a restart reads the kept copy without a request', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wires-tickers-'));
      const first = source(dir);
      await first.start();
      first.stop();
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.headers['user-agent'], 'Test test@example.com');
      assert.equal(first.companies?.byTicker('AAPL')?.cik, '0000320193');
      assert.deepEqual(readFileSync(first.file), CAPTURE, 'kept byte for byte');
      assert.equal(first.status().listings, 10_218);
      const second = source(dir);
      await second.start();
      second.stop();
      assert.equal(requests.length, 1, 'no request: the kept map is less than a day old');
      assert.equal(second.companies?.size, 10_218);
      assert.ok(second.ref && second.ref.file === first.file);
    });

    test('a document that is not the map is refused, the map in hand kept and the error shown; an unchanged one costs a 304', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wires-tickers-'));
      const s = source(dir);
      await s.start();
      const kept = statSync(s.file).mtimeMs;
      const version = s.ref!.version;
      await s.poll();
      assert.equal(requests.at(-1)!.headers['if-none-match'] !== undefined, true, 'conditional');
      assert.equal(s.ref!.version, version, 'a 304 changes nothing');
      body = Buffer.from('{"fields":["cik","name","ticker","exchange"],"data":[]}');
      await s.poll();
      s.stop();
      body = CAPTURE;
      assert.equal(s.companies?.size, 10_218, 'the map in hand is kept');
      assert.equal(statSync(s.file).mtimeMs, kept, 'the kept file is not replaced');
      assert.match(s.status().last_error!.message, /not the ticker map: 0 listings/);
    });
  });
});
