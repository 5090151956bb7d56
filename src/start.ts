/**
 * The service started as `npm start` starts it: the warm start's worker first, so that it
 * reads the snapshots while this thread loads the rest of the service's modules (about 0.4 s of
 * imports, which would otherwise come first). This module imports only what the worker needs.
 */
import { retentionMs, WIRES } from './catalog/index.js';
import type { Config } from './config.js';
import { startWarmStart } from './ingest/warm-start.js';
import { WireIndex } from './search/wire-index.js';
import type { Service } from './service.js';

/** A start refused for a reason the operator can fix (the message says which). */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** An empty index for each of the catalogue's wires. */
export function createIndexes(): Map<string, WireIndex> {
  return new Map(WIRES.map((w) => [w.id, new WireIndex({ maxAgeMs: retentionMs(w), maxItems: w.maxItems, wire: w.id })]));
}

export async function start(config: Readonly<Config>): Promise<Service> {
  const warm = startWarmStart(config.dataDir, createIndexes());
  let startService: typeof import('./service.js').startService;
  try {
    ({ startService } = await import('./service.js'));
  } catch (err) {
    warm.stop();
    throw err;
  }
  return startService(config, { warm });
}
