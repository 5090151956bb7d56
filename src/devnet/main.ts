/**
 * `npm run devnet`: starts the local chain and facilitator, writes their coordinates to
 * DEVNET_FILE (default ./devnet.json) and runs until SIGTERM or SIGINT.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startDevnet } from './devnet.js';

const file = resolve(process.env.DEVNET_FILE || './devnet.json');
const devnet = await startDevnet();
writeFileSync(file, JSON.stringify(devnet.info(), null, 2) + '\n', { mode: 0o600 });
console.log(`devnet up: chain 8453 at ${devnet.rpcUrl}, x402 facilitator at ${devnet.facilitatorUrl}`);
console.log(`payTo ${devnet.payTo}; ${devnet.payers.length} payers with 100 USDC each; details in ${file}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await devnet.stop();
  rmSync(file, { force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
