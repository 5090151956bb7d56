/**
 * A loopback HTTP server that plays every public source at once: the real capture of
 * `fixtures/real/` wherever one exists for the source (its dates moved so that its newest entry
 * is a few minutes old, see ./real-replay.ts), else the hand-written recorded-format feed of
 * `fixtures/feeds/` (dates rendered relative to the server's start). The offline demo and the
 * end-to-end tests point the sources at it through WIRES_SOURCES.
 *
 * It honours conditional GET (ETag), so the demo shows 304 handling too.
 */
import { TICKER_MAP } from '../catalog/reference.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SOURCES } from '../catalog/index.js';
import { renderFixture } from '../ingest/fixture-template.js';
import { replayRealCaptures } from './real-replay.js';

export const FIXTURES_DIR = new URL('../../../fixtures/feeds/', import.meta.url);

export interface FixtureServer {
  url: string;
  /** When the server started: the "now" its documents' dates are relative to. */
  startedAt: number;
  /** Source id → the file it plays: `real/<file>` (a capture) or `feeds/<file>` (hand-written). */
  played: Record<string, string>;
  /** Source id → URL on this server, ready for a WIRES_SOURCES file. */
  overrides: Record<string, string>;
  close(): Promise<void>;
}

/** The real capture of SEC's ticker map (fixtures/real/PROVENANCE.md). */
export const TICKER_MAP_CAPTURE = 'sec-company_tickers_exchange-2025-12-14.json';

function contentType(file: string): string {
  return file.endsWith('.json') ? 'application/json' : 'application/xml';
}

export async function startFixtureServer(port = 0): Promise<FixtureServer> {
  const index = JSON.parse(readFileSync(new URL('index.json', FIXTURES_DIR), 'utf8')) as Record<string, string>;
  // Dates are rendered relative to the server's start, once: bodies and their ETags then stay
  // stable (as a real feed's do between updates) and items age like real ones.
  const startedAt = Date.now();
  const documents = new Map<string, { body: Buffer; etag: string; type: string }>();
  const played: Record<string, string> = {};
  const etag = (body: Buffer) => '"' + createHash('sha1').update(body).digest('hex') + '"';
  const real = replayRealCaptures(startedAt);
  for (const [source, file] of Object.entries(index)) {
    const capture = real.get(source);
    if (capture) {
      documents.set(source, { body: capture.body, etag: etag(capture.body), type: capture.contentType });
      played[source] = `real/${capture.file}`;
      continue;
    }
    const body = Buffer.from(renderFixture(readFileSync(new URL(file, FIXTURES_DIR)), startedAt, source));
    documents.set(source, { body, etag: etag(body), type: contentType(file) });
    played[source] = `feeds/${file}`;
  }
  // SEC's ticker map, as captured: its tickers, unlike news, do not age.
  const tickerMap = readFileSync(new URL(`../real/${TICKER_MAP_CAPTURE}`, FIXTURES_DIR));
  documents.set(TICKER_MAP.id, { body: tickerMap, etag: etag(tickerMap), type: 'application/json' });
  played[TICKER_MAP.id] = `real/${TICKER_MAP_CAPTURE}`;

  const server: Server = createServer((req, res) => {
    const source = /^\/sources\/([^/?]+)/.exec(req.url ?? '')?.[1];
    const doc = source === undefined ? undefined : documents.get(decodeURIComponent(source));
    if (!doc) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('no such source');
      return;
    }
    const { body, etag } = doc;
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ETag: etag }).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': doc.type, 'Content-Length': body.length, ETag: etag }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const overrides: Record<string, string> = {};
  for (const id of [...SOURCES.map((s) => s.id), TICKER_MAP.id]) if (documents.has(id)) overrides[id] = `${url}/sources/${encodeURIComponent(id)}`;
  return {
    url,
    startedAt,
    played,
    overrides,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
