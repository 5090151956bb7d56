/**
 * `npm run demo`: the service with sample items in every wire, so a newcomer without
 * internet sees every preview answer. Same environment as `npm start`; PAY_TO_ADDRESS
 * defaults to a well-known test address so the 402 offers can be inspected.
 */
import { loadConfig } from '../config.js';
import { log, setLogLevel } from '../log.js';
import { createIndexes, startService } from '../service.js';
import { seedAll } from './sample-items.js';

// Anvil's first default account: a public test key, never a real recipient.
const DEMO_PAY_TO = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const config = loadConfig({ PAY_TO_ADDRESS: DEMO_PAY_TO, ...process.env });
setLogLevel(config.logLevel);
const wires = createIndexes();
const now = Date.now();
for (const [id, items] of seedAll(now)) wires.get(id)!.add(items, now);
const service = await startService(config, wires);
log.info('demo: sample items loaded in every wire', { try: `curl 'http://localhost:${service.port}/news/preview?q=rate'` });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void service.stop().then(() => process.exit(0)));
}
