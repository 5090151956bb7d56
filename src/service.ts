/**
 * Assembles the service from its parts: configuration, the uWebSockets.js runtime, one
 * index per wire, the ingestion scheduler with its worker pool, snapshots and the HTTP front
 * end. Tests start it exactly as `npm start` does.
 */
import { basename } from 'node:path';
import { Piscina } from 'piscina';
import { allocator } from './allocator.js';
import { checkCatalog, SOURCES, wiresPerTier } from './catalog/index.js';
import { DEFAULT_USER_AGENT, type Config } from './config.js';
import { buildSourceList } from './docs/sources.js';
import { createApp, listen, ListenError, type RunningServer } from './http/server.js';
import { type Certificate, CertificateReloader, readCertificate } from './http/tls.js';
import type { StreamEndpoint } from './http/stream.js';
import type { StreamTiming } from './stream/protocol.js';
import { buildRouteRuntimes } from './http/route-runtime.js';
import { loadUws, UwsLoadError, type LoadedUws } from './http/uws.js';
import { fetcherOptions } from './ingest/fetch-options.js';
import { loadOverrides } from './ingest/overrides.js';
import type { PollResult, PollTask } from './ingest/poll-task.js';
import { ConnectionGuard, fdLimit } from './http/connection-guard.js';
import { type PollState, Scheduler } from './ingest/scheduler.js';
import { WebSub } from './ingest/websub.js';
import { saveIndex } from './ingest/snapshot.js';
import { startWarmStart, type WarmStart } from './ingest/warm-start.js';
import { createIndexes, StartupError } from './start.js';
import { log } from './log.js';
import { DataDirLockedError, lockDataDir, type DataLock } from './data-lock.js';
import { HostBudgets } from './ingest/budget.js';
import { TICKER_MAP } from './catalog/reference.js';
import { TickerMapSource } from './tickers/ticker-source.js';
import { MemoryGuard } from './memory-guard.js';
import { createRegistry, type RequestStats } from './metrics.js';
import { privateDir } from './private-files.js';
import { NETWORK, USDC_BASE } from './pay/offer.js';
import { startReplication, type Replication } from './replica/replication.js';
import { setupPayments, type PaymentsSetup } from './pay/setup.js';
import type { WireIndex } from './search/wire-index.js';
import { steadyNow, wallOf } from './clock.js';

export interface Service {
  port: number;
  wires: ReadonlyMap<string, WireIndex>;
  scheduler: Scheduler | null;
  /** Writes every wire's snapshot now. */
  snapshot(): Promise<void>;
  stop(): Promise<void>;
}

export { createIndexes, StartupError } from './start.js';

/**
 * Descriptors a running service needs besides its connections: worker threads, the journal,
 * snapshots, outgoing polls.
 */
const FD_HEADROOM = 1024;

/**
 * Warns when the descriptor limit is within reach of the connections the service accepts:
 * near it, new connections are refused (connection-guard.ts), streams included.
 */
function warnOnLowFdLimit(limit: number | null, streamMaxConnections: number): void {
  if (limit !== null && limit < streamMaxConnections + FD_HEADROOM) {
    log.warn('the file-descriptor limit is within reach of the connections accepted; raise it (LimitNOFILE) or lower STREAM_MAX_CONNECTIONS', {
      limit,
      stream_max_connections: streamMaxConnections,
      wanted: streamMaxConnections + FD_HEADROOM,
    });
  }
}

/** Share of failing sources from which the service reports itself degraded. */
const DEGRADED_FAILING_SHARE = 0.25;

/** Read once: the allocator cannot change while the process runs. */
const runningOn = allocator();

function buildHealth(
  config: Readonly<Config>,
  uws: LoadedUws,
  wires: ReadonlyMap<string, WireIndex>,
  scheduler: Scheduler | null,
  pay: PaymentsSetup | null,
  replication: Replication | null,
  startedAt: number,
  tickerMap: () => TickerMapSource | null,
) {
  return () => {
    const now = steadyNow();
    const perWire: Record<string, { items: number; newest: string | null; by_filter: Record<string, number> }> = {};
    for (const [id, index] of wires) {
      const newest = index.newest();
      perWire[id] = { items: index.size, newest: newest ? new Date(newest.published).toISOString() : null, by_filter: index.countByFilter() };
    }
    const sources = scheduler?.status() ?? [];
    const failing = sources.filter((s) => s.consecutive_failures > 0).length;
    const lastPoll = scheduler?.lastPoll() ?? null;
    // Down: polling is on but nothing has succeeded for three ceilings of the breaking tier
    // (breaking sources poll at least that often, so a live pipeline has a recent success).
    const stale = lastPoll === null ? now - startedAt : now - lastPoll;
    const down = scheduler?.firstRunDone === true && stale > 3 * config.pollIntervalSec * 1000;
    const edgar = sources.find((s) => s.id === 'edgar');
    const degraded = !pay || pay.settlerProblem !== null || !pay.payments.storeAvailable || (sources.length > 0 && failing / sources.length >= DEGRADED_FAILING_SHARE);
    // A replica still reading the item stream does not yet hold what the others serve.
    const starting = replication !== null && !replication.caughtUp;
    return {
      status: starting ? 'starting' : down ? 'down' : degraded ? 'degraded' : 'ok',
      uptime_sec: Math.floor((now - startedAt) / 1000),
      last_poll: lastPoll === null ? null : new Date(wallOf(lastPoll)).toISOString(),
      observed_interval_sec: scheduler?.observedIntervalSec() ?? null,
      polling: scheduler ? { breaking_floor_sec: config.pollFloorSec, breaking_ceiling_sec: config.pollIntervalSec, websub: websubState(config) } : null,
      // EDGAR's lag: the newest acceptance time seen, when it was seen, and how far behind.
      edgar: edgar
        ? {
            newest_accepted: edgar.freshness.newest_item?.published ?? null,
            seen_at: edgar.freshness.newest_item?.seen_at ?? null,
            lag_sec: edgar.freshness.newest_item?.lag_sec ?? null,
            interval_sec: edgar.freshness.interval_sec,
            last_success: edgar.last_success,
          }
        : null,
      tiers: wiresPerTier(),
      wires: perWire,
      sources: { total: sources.length, failing, detail: sources },
      // SEC's ticker map, which the parsers read for tickers (null where this replica does not ingest).
      ticker_map: tickerMap()?.status() ?? null,
      x402: {
        configured: pay !== null,
        problem: config.paymentsProblem ?? pay?.settlerProblem ?? null,
        network: NETWORK,
        asset: USDC_BASE,
        pay_to: config.payTo,
        settlement: pay?.payments.health(now) ?? null,
      },
      // Replica mode: which replica answered, who leads, whether it reaches the shared store, how far behind the leader it applies.
      replica: config.redis ? { id: config.redis.replicaId, store_available: pay?.payments.storeAvailable ?? false, ...replication?.health() } : null,
      server: { uws: { version: uws.version, binary: basename(uws.binary), sha256: uws.sha256, glibc_compat: uws.glibcCompat }, allocator: runningOn },
    };
  };
}

/** Why WebSub is on or off, as /health says it. */
function websubState(config: Readonly<Config>): string {
  if (!config.websub) return 'off (WEBSUB=0)';
  if (config.publicUrlDefaulted) return 'off: PUBLIC_URL is not set, so no hub can reach a callback';
  return `on: callbacks under ${config.publicUrl}/websub/${config.redis ? ' (any replica takes them and relays them to the leader)' : ''}`;
}

/** Loads the native HTTP layer, or refuses to start saying why (there is no slow fallback). */
function startUws(config: Readonly<Config>): LoadedUws {
  let uws: LoadedUws;
  try {
    uws = loadUws({ maxHeaderBytes: config.maxHeaderBytes });
  } catch (err) {
    if (err instanceof UwsLoadError) throw new StartupError(err.message);
    throw err;
  }
  log.info('uWebSockets.js native binary loaded', { version: uws.version, binary: uws.binary, sha256: uws.sha256, glibc_compat: uws.glibcCompat });
  return uws;
}

export interface StartOptions {
  /** Pre-filled wires (tests, demo); when absent, wires start from the snapshot in DATA_DIR. */
  wires?: Map<string, WireIndex>;
  /** A shorter stream clock (tests); by default the documented block of minutes. */
  streamTiming?: StreamTiming;
  /** A warm start already reading DATA_DIR (`start`, which begins it before this module loads). */
  warm?: WarmStart;
}

/** The configured certificate, known to load with its key, or a refusal to start saying why. */
function startCertificate(config: Readonly<Config>): Certificate | null {
  if (!config.tls) return null;
  try {
    return readCertificate(config.tls);
  } catch (err) {
    throw new StartupError(`TLS_CERT_FILE and TLS_KEY_FILE do not load: ${(err as Error).message}`);
  }
}

export async function startService(config: Readonly<Config>, opts: StartOptions = {}): Promise<Service> {
  checkCatalog();
  // The snapshots are read (only read) from here on, while the rest of the start goes on.
  const warm = opts.wires ? null : (opts.warm ?? startWarmStart(config.dataDir, createIndexes()));
  try {
    const certificate = startCertificate(config);
    const uws = startUws(config);
    // Journal and snapshots live here: only the service's user may read them, and only one
    // instance may use them.
    privateDir(config.dataDir);
    let lock: DataLock;
    try {
      lock = lockDataDir(config.dataDir);
    } catch (err) {
      if (err instanceof DataDirLockedError) throw new StartupError(err.message);
      throw err;
    }
    try {
      return await startLocked(config, opts, uws, lock, certificate, warm);
    } catch (err) {
      lock.release();
      throw err;
    }
  } catch (err) {
    warm?.stop();
    throw err;
  }
}

async function startLocked(config: Readonly<Config>, opts: StartOptions, uws: LoadedUws, lock: DataLock, certificate: Certificate | null, warm: WarmStart | null): Promise<Service> {
  let pay: PaymentsSetup | null = null;
  if (config.paymentsProblem) {
    log.warn(`PAYMENTS DISABLED: ${config.paymentsProblem}. Paid routes answer 503 until it is fixed.`);
  } else {
    pay = await setupPayments(config);
  }
  if (config.publicUrlDefaulted && !['127.0.0.1', '::1', 'localhost'].includes(config.host)) {
    log.warn(`PUBLIC_URL is not set: x402 offers name ${config.publicUrl} as their resource; set it to the URL clients use (https://your.host behind the proxy)`);
  }
  const overrides = loadOverrides(config.sourcesFile);
  if (config.ingest && config.userAgent === DEFAULT_USER_AGENT && overrides.size < SOURCES.length) {
    log.warn('USER_AGENT is the default: set it to "Company Name contact@your-domain" before polling the real sources (SEC and NWS refuse anonymous clients)');
  }

  const wires = opts.wires ?? (await warm!.load());

  const fetcher = fetcherOptions(config.userAgent, config.fetchTimeoutSec, config.allowPrivateDestinations);
  let scheduler: Scheduler | null = null;
  // Only a replica that polls subscribes to hubs; a notification goes the way a polled document goes.
  const pushOn = config.websub && !config.publicUrlDefaulted;
  const websub = config.ingest
    ? new WebSub({
        publicUrl: pushOn ? config.publicUrl : null,
        offReason: websubState(config),
        maxBodyBytes: fetcher.maxBodyBytes,
        userAgent: config.userAgent,
        allowPrivateDestinations: config.allowPrivateDestinations,
        deliver: (id, body, type, topic) => void scheduler?.deliver(id, body, type, topic),
      })
    : null;
  // Replica mode: items arrive from the leader's stream, this replica polls only while it
  // leads, and the WebSub callbacks it receives are relayed to the leader's subscriber.
  const replication = config.redis
    ? await startReplication(config.redis, { wires, ingest: config.ingest, failures: pay?.payments.failures, websub: pushOn ? { local: websub, maxBodyBytes: fetcher.maxBodyBytes } : null })
    : null;
  let pool: Piscina | null = null;
  // Every worker, and the ticker map's daily poll, draw from the same request window per host (ingest/budget.ts).
  const budgets = new HostBudgets();
  const tickerMap = new TickerMapSource({ dataDir: config.dataDir, url: overrides.get(TICKER_MAP.id) ?? TICKER_MAP.url, fetcher, budgets });
  // A replica that does not ingest answers /tickers from the map its data dir holds.
  if (!config.ingest) tickerMap.load();
  if (config.ingest) {
    pool = new Piscina({
      filename: new URL('./ingest/poll-task.js', import.meta.url).href,
      minThreads: config.ingestThreads,
      maxThreads: config.ingestThreads,
      // Polls mostly wait on the network (slow sources, retry backoff): let each worker
      // overlap enough of them that one run polls every source at once.
      concurrentTasksPerWorker: 128,
      // The XML reader holds about 30-55 bytes per character of a document's longest text
      // value (test/fuzz-feeds.test.ts): a pathological 32 MB document could take 1.7 GB.
      // A worker that runs out fails its polls (worker_failed) instead of growing further.
      resourceLimits: { maxOldGenerationSizeMb: 1024 },
      workerData: { budgets: budgets.buffer },
    });
    const runner = pool;
    scheduler = new Scheduler({
      run: (task: PollTask) => runner.run(task) as Promise<PollResult>,
      wires,
      overrides,
      breaking: { floorSec: config.pollFloorSec, ceilingSec: config.pollIntervalSec },
      fetcher,
      websub,
      tickers: () => tickerMap.ref,
      ...(replication ? { onApplied: (wire: string, lines: Uint8Array[]) => replication.publish(wire, lines), onPolled: (id: string, state: PollState) => replication.savePollState(id, state) } : {}),
    });
  }

  const startedAt = steadyNow();
  // Node has already raised the soft limit to the hard one.
  const limit = fdLimit();
  const connections = new ConnectionGuard(limit, (refusing, detail) =>
    refusing
      ? log.warn('open descriptors near the limit: new connections are refused with 503 until some close', detail)
      : log.info('open descriptors below the limit again: new connections accepted', detail),
  );
  const deps = {
    config,
    uws,
    wires,
    ...(opts.streamTiming ? { streamTiming: opts.streamTiming } : {}),
    health: buildHealth(config, uws, wires, scheduler, pay, replication, startedAt, () => (config.ingest ? tickerMap : null)),
    companies: () => tickerMap.companies,
    sources: () => buildSourceList(scheduler?.status() ?? [], wires),
    payments: pay?.payments ?? null,
    websub: replication?.websub ?? websub,
    connections,
    runtimes: buildRouteRuntimes(config, wires, pay !== null),
    metrics: (requests: RequestStats, stream: StreamEndpoint) =>
      createRegistry({
        requests,
        streams: () => ({ connections: stream.connections, subscriptions: stream.hub.subscriptions.size, pushed: stream.hub.pushed }),
        ...(pay ? { payments: () => pay!.payments.metrics() } : {}),
        ...(scheduler ? { sources: () => scheduler!.status() } : {}),
        wires: function* () {
          for (const [id, index] of wires) yield { id, items: index.size, newest: index.newest()?.published ?? null };
        },
        ...(pool ? { pool: () => ({ queueSize: pool!.queueSize, threads: pool!.threads.length, utilization: pool!.utilization }) } : {}),
        sheds: () => memory.sheds,
        connections: () => ({ open: connections.open, refused: connections.refused }),
        tables: function* () {
          if (pay) yield* pay.payments.tables();
          yield ['stream_connections', stream.connections];
          yield ['stream_subscriptions', stream.hub.subscriptions.size];
          yield ['stream_grants', stream.hub.grantCount];
          let answers = 0;
          for (const rt of deps.runtimes.values()) answers += rt.cache.size;
          yield ['preview_answers', answers];
        },
      }),
  };
  const memory = new MemoryGuard(config.memoryShedAt, [
    {
      name: 'preview_answers',
      drop: () => {
        let n = 0;
        for (const rt of deps.runtimes.values()) {
          n += rt.cache.size;
          rt.cache.clear();
        }
        return n;
      },
    },
    { name: 'retry_body_bytes', drop: () => pay?.payments.dropRetryBodies() ?? 0 },
  ]);
  let server: RunningServer;
  let certificates: CertificateReloader | null = null;
  try {
    const built = createApp(deps);
    server = await listen(built, deps);
    if (config.tls && certificate) {
      certificates = new CertificateReloader(built.serveCertificate, config.tls, certificate);
      certificates.start();
    }
  } catch (err) {
    tickerMap.stop();
    await pool?.destroy();
    await pay?.payments.stop();
    memory.stop();
    connections.stop();
    throw err instanceof ListenError ? new StartupError(err.message) : err;
  }
  log.info('listening', {
    host: config.host,
    port: server.port,
    tls: certificate ? { names: certificate.names, serial: certificate.serial, not_after: certificate.notAfter } : false,
    pay_to: config.payTo,
    ingest: config.ingest,
    allocator: runningOn,
  });
  warnOnLowFdLimit(limit, config.streamMaxConnections);

  const allWires = wires;
  let saving: Promise<void> = Promise.resolve();
  const snapshot = () => {
    saving = saving.then(async () => {
      for (const [id, index] of allWires) {
        try {
          await saveIndex(config.dataDir, id, index);
        } catch (err) {
          log.error('snapshot failed', { wire: id, error: String(err) });
        }
      }
    });
    return saving;
  };
  const snapshotTimer = setInterval(() => void snapshot(), config.snapshotIntervalSec * 1000);
  snapshotTimer.unref();

  if (scheduler) {
    // The wires' first polls wait for the ticker map (read from the data dir, or fetched once
    // on a first start), so that their items carry tickers.
    await tickerMap.start();
    if (replication) replication.lead(scheduler);
    else scheduler.start();
    void scheduler.firstRun.then(() => {
      if (scheduler!.lastPoll() === null) {
        log.warn('no source was reachable on the first poll; without internet, try `npm run demo`, which serves recorded feeds locally');
      }
    });
  }

  return {
    port: server.port,
    wires,
    scheduler,
    snapshot,
    async stop() {
      clearInterval(snapshotTimer);
      memory.stop();
      connections.stop();
      certificates?.stop();
      server.close();
      scheduler?.stop();
      websub?.stop();
      tickerMap.stop();
      await replication?.stop();
      await snapshot();
      await pool?.destroy();
      await pay?.payments.stop();
      lock.release();
      log.info('stopped');
    },
  };
}
