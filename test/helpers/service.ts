/** Starts the real service on a loopback port for a test, with seeded wires. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { setLogLevel } from '../../src/log.js';
import { createIndexes, startService, type Service, type StartOptions } from '../../src/service.js';
import { seedAll } from './sample-items.js';

export const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

export interface TestService extends Service {
  base: string;
  get(path: string, init?: RequestInit): Promise<Response>;
}

export async function startTestService(env: Record<string, string> = {}, seed = true, opts: Omit<StartOptions, 'wires'> = {}): Promise<TestService> {
  setLogLevel('error');
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    PAY_TO_ADDRESS: PAY_TO,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'wires-test-')),
    INGEST: '0',
    // Nothing listens there: offers are made and payments verified, but none can settle.
    FACILITATOR_URL: 'http://127.0.0.1:9',
    // Every test client is 127.0.0.1: tests that send many bad payments would share one
    // budget. test/attack.test.ts turns it on.
    FAILED_PAYMENTS_BURST: '0',
    ...env,
  });
  let wires: ReturnType<typeof createIndexes> | undefined;
  if (seed) {
    wires = createIndexes();
    const now = Date.now();
    for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
  }
  const service = await startService(config, wires ? { ...opts, wires } : opts);
  const base = `http://127.0.0.1:${service.port}`;
  return { ...service, base, get: (path, init) => fetch(base + path, { redirect: 'manual', ...init }) };
}

export interface PollingService {
  service: Service;
  base: string;
  dataDir: string;
}

/**
 * Overall deadline of one poll where no test waits for it to expire. Far above what fixture
 * polls take even when the low-priority worker is starved by other load (seconds).
 */
const GENEROUS_FETCH_TIMEOUT_SEC = '60';

/** The real service polling the sources at `overrides` (source id → URL), as `npm start` polls. */
export async function startPollingService(overrides: Record<string, string>, env: Record<string, string> = {}, dataDir?: string): Promise<PollingService> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'wires-polling-'));
  const file = join(dir, 'sources.json');
  writeFileSync(file, JSON.stringify(overrides));
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    PAY_TO_ADDRESS: PAY_TO,
    FACILITATOR_URL: 'http://127.0.0.1:9',
    DATA_DIR: dir,
    WIRES_SOURCES: file,
    // One poll of each source unless a test asks for more (EDGAR keeps its own 2 s).
    POLL_INTERVAL_SEC: '3600',
    POLL_FLOOR_SEC: '3600',
    FETCH_TIMEOUT_SEC: GENEROUS_FETCH_TIMEOUT_SEC,
    // Test publishers, hubs and redirect targets are all on loopback (test/ssrf.test.ts turns it off).
    ALLOW_PRIVATE_DESTINATIONS: '1',
    ...env,
  });
  const service = await startService(config);
  return { service, base: `http://127.0.0.1:${service.port}`, dataDir: dir };
}
