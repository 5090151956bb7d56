/**
 * `npm run devnet`: starts the local chain and facilitator, writes their coordinates to
 * DEVNET_FILE (default ./devnet.json) and runs until SIGTERM or SIGINT.
 */
import { rmSync } from 'node:fs';
import { startDevnet } from './devnet.js';
import { claimDevnetFile, devnetFilePath, writeDevnetFile } from './devnet-file.js';

const file = devnetFilePath();
claimDevnetFile(file);
const devnet = await startDevnet();
writeDevnetFile(file, devnet.info());
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
