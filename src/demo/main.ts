/**
 * `npm run demo`: the whole service, offline. A loopback fixture server plays every public
 * source from the recorded-format feeds in `fixtures/feeds/`, and the service polls it exactly
 * as it polls the real sources in live mode. Same environment as `npm start`; PAY_TO_ADDRESS
 * defaults to a well-known test address so the 402 offers can be inspected.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { log, setLogLevel } from '../log.js';
import { startService } from '../service.js';
import { startFixtureServer } from './fixture-server.js';

// Anvil's first default account: a public test key, never a real recipient.
const DEMO_PAY_TO = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const fixtures = await startFixtureServer();
const base = loadConfig(process.env);
mkdirSync(base.dataDir, { recursive: true });
const overridesFile = join(base.dataDir, 'demo-sources.json');
writeFileSync(overridesFile, JSON.stringify(fixtures.overrides, null, 2));

const config = loadConfig({ PAY_TO_ADDRESS: DEMO_PAY_TO, ...process.env, WIRES_SOURCES: overridesFile, INGEST: '1' });
setLogLevel(config.logLevel);
const service = await startService(config);
await service.scheduler!.firstRun;
log.info('demo ready: every source is served from local fixtures', {
  fixtures: fixtures.url,
  try: `curl 'http://localhost:${service.port}/news/preview?q=rate'`,
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void service.stop().then(() => fixtures.close()).then(() => process.exit(0)));
}
