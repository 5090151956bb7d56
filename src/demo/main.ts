/**
 * `npm run demo`: the whole service, offline. A loopback fixture server plays every public
 * source from the recorded-format feeds in `fixtures/feeds/`, and the service polls it exactly
 * as it polls the real sources in live mode. Payments settle on the local devnet (anvil with
 * USDC at the Base address and a real x402 facilitator), whose funded payer keys are written
 * to DEVNET_FILE (default ./devnet.json), so a newcomer can pay without internet. Same
 * environment as `npm start`; set FACILITATOR_URL or SETTLER_PRIVATE_KEY to settle elsewhere.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { privateDir } from '../private-files.js';
import { claimDevnetFile, devnetFilePath, writeDevnetFile } from '../devnet/devnet-file.js';
import { join } from 'node:path';
import { startDevnet, type Devnet } from '../devnet/devnet.js';
import { loadConfig } from '../config.js';
import { log, setLogLevel } from '../log.js';
import { startService } from '../service.js';
import { startFixtureServer } from './fixture-server.js';

const fixtures = await startFixtureServer();
const base = loadConfig(process.env);
privateDir(base.dataDir);
const overridesFile = join(base.dataDir, 'demo-sources.json');
writeFileSync(overridesFile, JSON.stringify(fixtures.overrides, null, 2));

let devnet: Devnet | null = null;
const devnetFile = devnetFilePath();
const settlement: Record<string, string> = {};
if (!base.settlement.facilitatorUrl && !base.settlement.settlerKey) {
  claimDevnetFile(devnetFile);
  devnet = await startDevnet();
  writeDevnetFile(devnetFile, devnet.info());
  Object.assign(settlement, { PAY_TO_ADDRESS: devnet.payTo, FACILITATOR_URL: devnet.facilitatorUrl, BASE_RPC_URL: devnet.rpcUrl });
}

const config = loadConfig({ ...process.env, ...settlement, WIRES_SOURCES: overridesFile, INGEST: '1' });
setLogLevel(config.logLevel);
const service = await startService(config);
await service.scheduler!.firstRun;
const url = `http://localhost:${service.port}`;
log.info('demo ready: every source is served from local fixtures', {
  fixtures: fixtures.url,
  try: `curl '${url}/news/preview?q=rate'`,
  ...(devnet ? { devnet: devnetFile, pay: `curl -H "PAYMENT-SIGNATURE: $(node dist/scripts/sign-payment.js ${url}/cve/latest)" ${url}/cve/latest` } : {}),
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    await service.stop();
    await fixtures.close();
    if (devnet) {
      await devnet.stop();
      rmSync(devnetFile, { force: true });
    }
    process.exit(0);
  });
}
