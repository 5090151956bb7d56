/**
 * Assembles the service from its parts: configuration, the uWebSockets.js runtime, one
 * index per wire and the HTTP front end. Tests start it exactly as `npm start` does.
 */
import { checkCatalog, retentionMs, WIRES, wiresPerTier } from './catalog/index.js';
import type { Config } from './config.js';
import { createApp, listen, type RunningServer } from './http/server.js';
import { loadUws, type LoadedUws } from './http/uws.js';
import { log } from './log.js';
import { NETWORK, USDC_BASE } from './pay/offer.js';
import { WireIndex } from './search/wire-index.js';

export interface Service {
  port: number;
  wires: ReadonlyMap<string, WireIndex>;
  stop(): Promise<void>;
}

export class StartupError extends Error {
  override name = 'StartupError';
}

export function createIndexes(): Map<string, WireIndex> {
  return new Map(WIRES.map((w) => [w.id, new WireIndex({ maxAgeMs: retentionMs(w), maxItems: w.maxItems })]));
}

export function buildHealth(config: Readonly<Config>, uws: LoadedUws, wires: ReadonlyMap<string, WireIndex>, startedAt: number) {
  return () => {
    const perWire: Record<string, { items: number; newest: string | null; by_filter: Record<string, number> }> = {};
    for (const [id, index] of wires) {
      const newest = index.newest();
      perWire[id] = { items: index.size, newest: newest ? new Date(newest.published).toISOString() : null, by_filter: index.countByFilter() };
    }
    return {
      status: config.payTo ? 'ok' : 'degraded',
      uptime_sec: Math.floor((Date.now() - startedAt) / 1000),
      // Polling arrives with the ingestion layer; until a poll has succeeded these are null.
      last_poll: null,
      observed_interval_sec: null,
      tiers: wiresPerTier(),
      wires: perWire,
      x402: {
        configured: config.payTo !== null,
        problem: config.payToProblem,
        network: NETWORK,
        asset: USDC_BASE,
        pay_to: config.payTo,
      },
      server: { uws_native: uws.native },
    };
  };
}

export async function startService(config: Readonly<Config>, wires: Map<string, WireIndex> = createIndexes()): Promise<Service> {
  checkCatalog();
  const uws = loadUws();
  if (uws.native) {
    log.info('uWebSockets.js native binary loaded', { binary: uws.binary });
  } else if (config.allowUwsFallback) {
    log.warn('uWebSockets.js native binary did NOT load: running on the slow pure-Node fallback (ALLOW_UWS_FALLBACK=1)');
  } else {
    throw new StartupError(
      'uWebSockets.js native binary did not load and only the slow pure-Node fallback is available; refusing to start. Set ALLOW_UWS_FALLBACK=1 to start anyway.',
    );
  }
  if (!config.payTo) {
    log.warn(`PAYMENTS DISABLED: ${config.payToProblem}. Paid routes answer 503 until PAY_TO_ADDRESS is set to a valid address.`);
  }

  const startedAt = Date.now();
  const deps = { config, uws, wires, health: buildHealth(config, uws, wires, startedAt) };
  const server: RunningServer = await listen(createApp(deps), deps);
  log.info('listening', { host: config.host, port: server.port, pay_to: config.payTo });

  return {
    port: server.port,
    wires,
    async stop() {
      server.close();
      log.info('stopped');
    },
  };
}
