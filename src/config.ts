/**
 * Every setting of the service: one table of options with their defaults, read from the
 * environment once at start, validated, and frozen. The configuration table of docs/configuration.md lists
 * the same options (a test checks that none is missing there).
 */
import { hostname } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { usdToAtomic } from './catalog/index.js';
import type { JournalRetention } from './pay/journal.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  port: number;
  host: string;
  /** Base URL clients reach the service at; used in x402 offers' `resource`. */
  publicUrl: string;
  /** PUBLIC_URL was not set: offers name http://localhost:<PORT>. */
  publicUrlDefaulted: boolean;
  /** Recipient of payments; null when unset or invalid (paid routes answer 503). */
  payTo: `0x${string}` | null;
  /** Why payments are off (no valid payTo, or no way to settle), for the start-up log, 503s and /health. */
  paymentsProblem: string | null;
  settlement: SettlementConfig;
  dataDir: string;
  logLevel: LogLevel;
  /** Largest request head uWebSockets.js reads (its UWS_HTTP_MAX_HEADERS_SIZE); longer ones get its 431. */
  maxHeaderBytes: number;
  /** x402 `maxTimeoutSeconds` in every offer. */
  paymentTimeoutSec: number;
  /** Poll the sources at all (off: serve what the snapshot holds). */
  ingest: boolean;
  /** Breaking sources: the longest wait between two polls (the adaptive interval's ceiling). */
  pollIntervalSec: number;
  /** Breaking sources: the shortest wait between two polls (the adaptive interval's floor), at most pollIntervalSec. */
  pollFloorSec: number;
  /** Subscribe to WebSub hubs (needs a PUBLIC_URL the hubs reach). */
  websub: boolean;
  /** Let destinations a feed chose (hubs, redirect targets) be loopback, private, link-local… addresses. */
  allowPrivateDestinations: boolean;
  /** Worker threads for fetching and parsing. */
  ingestThreads: number;
  userAgent: string;
  /** Path of the source overrides file, or null. */
  sourcesFile: string | null;
  /** Seconds between wire snapshots to DATA_DIR. */
  snapshotIntervalSec: number;
  /** Overall deadline of one fetch, retries included. */
  fetchTimeoutSec: number;
  /** Bearer token /metrics requires; null: open. */
  metricsToken: string | null;
  /** HTTPS and WSS on PORT with this certificate and key (PEM files); null: plain HTTP. */
  tls: { cert: string; key: string } | null;
  /** Open /stream connections at most. */
  streamMaxConnections: number;
  /** Failed payments a client address may make in a burst (0: no limit), and refilled per minute. */
  failedPayments: { burst: number; perMinute: number };
  /** When the payment journal is compacted, and how long its archives are kept. */
  journal: JournalRetention;
  /** Share of the heap limit (0–1) past which preview answers and retry bodies are dropped. */
  memoryShedAt: number;
  /** Replica mode (REDIS_URL set): payment state shared in Redis. Null: one process, the local journal. */
  redis: RedisConfig | null;
}

export interface RedisConfig {
  url: string;
  prefix: string;
  /** This replica's name among the others (stable across its restarts). */
  replicaId: string;
  /** A stopped replica's pending settlements are taken over after this long (ms). */
  takeoverMs: number;
  /** Days of payment records the Redis journal stream keeps. */
  journalDays: number;
  /** The ingesting leader's lease (ms): a dead leader is replaced within it. */
  leaseMs: number;
  /** Listen with SO_REUSEPORT beside the box's other replicas: the kernel spreads connections over them. */
  sharedPort: boolean;
}

export interface SettlementConfig {
  mode: 'sync' | 'optimistic';
  /** x402 facilitator base URL; used when no settler key is set. */
  facilitatorUrl: string | null;
  /** The operator's wallet key for self-settlement (secret: never logged). */
  settlerKey: `0x${string}` | null;
  /** JSON-RPC of Base: required for self-settlement; enables balance and nonce checks otherwise. */
  rpcUrl: string | null;
  /** Per payer, atomic USDC units: unsettled value above which optimistic calls settle synchronously. */
  optimisticMaxUnsettled: bigint;
  /** Optimistic mode: data leaves once the accepted authorization is written to the journal, or once it is synced to disk. */
  optimisticRelease: 'written' | 'synced';
  /** Deadline of one settlement attempt (facilitator call or transaction). */
  settleTimeoutSec: number;
}

/** SEC asks for "Company Name admin@domain"; NWS for an application name and a contact. */
export const DEFAULT_USER_AGENT = 'WiresService/0.1 ops@wires.invalid';

interface OptionDef {
  env: string;
  default: string;
  doc: string;
  secret?: boolean;
}

/** The option table. `default` is the text form; parsing happens in loadConfig. */
export const OPTIONS: readonly OptionDef[] = [
  { env: 'PORT', default: '4021', doc: 'TCP port to listen on (0 picks a free port).' },
  { env: 'HOST', default: '0.0.0.0', doc: 'Address to bind.' },
  { env: 'PUBLIC_URL', default: 'http://localhost:<PORT>', doc: 'Base URL clients use; the `resource` of x402 offers.' },
  { env: 'PAY_TO_ADDRESS', default: '', doc: 'EVM address that receives payments. Unset or invalid: paid routes answer 503.' },
  { env: 'DATA_DIR', default: './data', doc: 'Folder for the payment journal and wire snapshots.' },
  { env: 'LOG_LEVEL', default: 'info', doc: 'debug, info, warn or error.' },
  {
    env: 'UWS_HTTP_MAX_HEADERS_SIZE',
    default: '16384',
    doc: "Largest request head, in bytes, that uWebSockets.js reads (4096–65536); a longer one gets its own `431`. Node's default; room for any x402 payment header.",
  },
  { env: 'PAYMENT_TIMEOUT_SEC', default: '300', doc: 'x402 `maxTimeoutSeconds` offered: how long a signed authorization stays valid.' },
  { env: 'SETTLEMENT', default: 'sync', doc: '`sync`: settle before releasing data (x402 semantics). `optimistic`: release after local verification, settle in the background.' },
  { env: 'FACILITATOR_URL', default: '', doc: 'x402 facilitator that settles payments (`POST /settle`, checked with `GET /supported` at start).' },
  { env: 'SETTLER_PRIVATE_KEY', default: '', doc: 'Settle with this wallet instead of a facilitator (it pays the gas); needs BASE_RPC_URL.', secret: true },
  { env: 'BASE_RPC_URL', default: '', doc: 'Base JSON-RPC URL: required with SETTLER_PRIVATE_KEY; with a facilitator it enables balance checks and on-chain nonce checks.' },
  {
    env: 'OPTIMISTIC_RELEASE',
    default: 'written',
    doc: 'Optimistic mode: release the data once the accepted authorization is `written` to the journal (it survives a crash of the service) or `synced` to disk (it also survives a crash of the machine; adds a disk sync to every paid call).',
  },
  { env: 'OPTIMISTIC_MAX_UNSETTLED_USD', default: '0.05', doc: 'Optimistic mode: per-payer unsettled value above which calls settle synchronously.' },
  { env: 'SETTLE_TIMEOUT_SEC', default: '10', doc: 'Deadline of one settlement attempt; an unanswered one is retried in the background.' },
  { env: 'INGEST', default: '1', doc: 'Set to 0 to serve without polling (only what the snapshot holds).' },
  { env: 'POLL_INTERVAL_SEC', default: '60', doc: 'Longest wait between two polls of a breaking source (the ceiling its interval grows to while it does not change).' },
  {
    env: 'POLL_FLOOR_SEC',
    default: '10',
    doc: 'Shortest wait between two polls of a breaking source (its interval after a poll with new items); equal to POLL_INTERVAL_SEC polls at a fixed interval.',
  },
  {
    env: 'WEBSUB',
    default: '1',
    doc: 'Subscribe to the WebSub hubs feeds name (needs PUBLIC_URL reachable by the hubs); 0 polls only. In replica mode the leader subscribes and any replica takes the callbacks.',
  },
  {
    env: 'ALLOW_PRIVATE_DESTINATIONS',
    default: '0',
    doc: "1 lets a feed's WebSub hub and its redirects lead to loopback, private, link-local, unique-local and other non-public addresses (tests, internal mirrors). 0 refuses them; configured source URLs are never checked.",
  },
  { env: 'INGEST_THREADS', default: '1', doc: 'Worker threads that fetch and parse feeds.' },
  { env: 'USER_AGENT', default: DEFAULT_USER_AGENT, doc: 'User-Agent sent to sources; SEC and NWS require a contact address.' },
  { env: 'WIRES_SOURCES', default: '', doc: 'JSON file of source id → URL overrides (mirrors, proxies, fixtures).' },
  { env: 'SNAPSHOT_INTERVAL_SEC', default: '300', doc: 'Seconds between snapshots of the wires to DATA_DIR.' },
  { env: 'FETCH_TIMEOUT_SEC', default: '30', doc: 'Overall deadline of one poll of one source, retries included.' },
  {
    env: 'FAILED_PAYMENTS_BURST',
    default: '20',
    doc: 'Failed payments (bad signature, replay, unreadable…) one client address may make before its payments are answered 429 without being verified; 0 turns the limit off.',
  },
  { env: 'FAILED_PAYMENTS_PER_MIN', default: '60', doc: 'How fast that budget refills, per minute.' },
  { env: 'STREAM_MAX_CONNECTIONS', default: '10000', doc: 'Open `/stream` WebSocket connections the server holds; one more is answered `503 too_many_streams` before any payment is read.' },
  { env: 'JOURNAL_ROTATE_MB', default: '64', doc: 'The live payment journal is compacted once it passes this size: settled and failed records move to `journal/journal-archive/`.' },
  { env: 'JOURNAL_ARCHIVE_DAYS', default: '90', doc: 'Journal archives older than this are deleted; 0 keeps them for ever.' },
  { env: 'JOURNAL_ARCHIVE_MB', default: '1024', doc: 'Beyond this total the oldest journal archives are deleted; 0: no limit.' },
  { env: 'MEMORY_SHED_AT', default: '85', doc: 'Percent of the heap limit past which the service drops what it can rebuild (preview answers, paid answers kept for retries) before it runs out.' },
  {
    env: 'REDIS_URL',
    default: '',
    doc: 'Replica mode: `redis://` or `rediss://` (with `user:password@` for an ACL user). Payment claims, outcomes and the journal are shared there, so any number of replicas serve as one (docs/replicas.md). Unset: one process with the local journal.',
    secret: true,
  },
  { env: 'REDIS_PREFIX', default: 'wires:', doc: 'Prefix of every Redis key, so several services can share one Redis.' },
  {
    env: 'REPLICA_ID',
    default: '<hostname>:<PORT>',
    doc: "This replica's name in replica mode; keep it stable across restarts, so a restarted replica takes back its own pending settlements at once.",
  },
  {
    env: 'SHARED_PORT',
    default: '0',
    doc: "Replica mode: 1 listens on `HOST`:`PORT` beside this box's other replicas (SO_REUSEPORT): the kernel spreads new connections over them, and a replica that dies stops getting any. Needs an explicit `REPLICA_ID` and its own `DATA_DIR` per replica. 0: the port is this process's alone, and a second process on it is refused.",
  },
  { env: 'REDIS_TAKEOVER_SEC', default: '30', doc: 'Replica mode: the pending settlements of a replica that stopped heartbeating are taken over by another after this long.' },
  { env: 'REDIS_LEASE_SEC', default: '10', doc: "Replica mode: the ingesting leader's lease; when the leader dies, another replica starts polling within this time." },
  { env: 'REDIS_JOURNAL_DAYS', default: '7', doc: 'Replica mode: days of payment records the Redis journal stream keeps (about 1 KB each, in Redis memory).' },
  { env: 'METRICS_TOKEN', default: '', doc: 'When set, `GET /metrics` requires `Authorization: Bearer <token>`; unset, it is open (keep it off the public proxy).', secret: true },
  {
    env: 'TLS_CERT_FILE',
    default: '',
    doc: 'With `TLS_KEY_FILE`: the service serves HTTPS and WSS itself with this PEM certificate (chain included), TLS 1.2 and 1.3 only. Reloaded on `SIGHUP` and when either file changes, with no restart (docs/deployment.md#tls-without-a-proxy). A pair that does not load stops the start (exit 2). Unset: plain HTTP, for a proxy in front.',
  },
  { env: 'TLS_KEY_FILE', default: '', doc: "The certificate's PEM private key; set with `TLS_CERT_FILE`." },
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const get = (name: string): string => {
    const value = env[name]?.trim();
    return value ? value : OPTIONS.find((o) => o.env === name)!.default;
  };
  const int = (name: string, min: number, max: number): number => {
    const text = get(name);
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!(n >= min && n <= max)) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${text}"`);
    return n;
  };

  // A strict 0/1: a typo must not quietly open (or close) the private network.
  const flag = (name: string): boolean => {
    const text = get(name);
    if (text !== '0' && text !== '1') throw new ConfigError(`${name} must be 0 or 1, got "${text}"`);
    return text === '1';
  };

  const port = int('PORT', 0, 65535);
  const logLevel = get('LOG_LEVEL');
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, got "${logLevel}"`);
  }
  const publicUrlText = env.PUBLIC_URL?.trim() || `http://localhost:${port}`;
  let publicUrl: string;
  try {
    publicUrl = new URL(publicUrlText).toString().replace(/\/$/, '');
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL, got "${publicUrlText}"`);
  }

  const payToText = get('PAY_TO_ADDRESS');
  let payTo: Config['payTo'] = null;
  let payToProblem: string | null = null;
  if (!payToText) payToProblem = 'PAY_TO_ADDRESS is not set';
  else if (!ADDRESS_RE.test(payToText)) payToProblem = `PAY_TO_ADDRESS is not a valid EVM address: "${payToText}"`;
  else if (/^0x0{40}$/.test(payToText)) payToProblem = 'PAY_TO_ADDRESS is the zero address';
  else payTo = payToText as `0x${string}`;

  const settlement = loadSettlement(get, int);
  const paymentsProblem =
    payToProblem ??
    (settlement.settlerKey && !settlement.rpcUrl
      ? 'SETTLER_PRIVATE_KEY is set but BASE_RPC_URL is not'
      : !settlement.settlerKey && !settlement.facilitatorUrl
        ? 'neither FACILITATOR_URL nor SETTLER_PRIVATE_KEY is set, so payments cannot be settled'
        : null);

  const dataDir = get('DATA_DIR');
  return Object.freeze({
    port,
    host: get('HOST'),
    publicUrl,
    publicUrlDefaulted: !env.PUBLIC_URL?.trim(),
    payTo,
    paymentsProblem,
    settlement,
    dataDir: isAbsolute(dataDir) ? dataDir : resolve(dataDir),
    logLevel: logLevel as LogLevel,
    maxHeaderBytes: int('UWS_HTTP_MAX_HEADERS_SIZE', 4096, 65_536),
    paymentTimeoutSec: int('PAYMENT_TIMEOUT_SEC', 30, 3600),
    ingest: get('INGEST') !== '0',
    pollIntervalSec: int('POLL_INTERVAL_SEC', 1, 3600),
    pollFloorSec: Math.min(int('POLL_FLOOR_SEC', 1, 3600), int('POLL_INTERVAL_SEC', 1, 3600)),
    websub: get('WEBSUB') !== '0',
    allowPrivateDestinations: flag('ALLOW_PRIVATE_DESTINATIONS'),
    ingestThreads: int('INGEST_THREADS', 1, 16),
    userAgent: get('USER_AGENT'),
    sourcesFile: get('WIRES_SOURCES') || null,
    snapshotIntervalSec: int('SNAPSHOT_INTERVAL_SEC', 5, 86_400),
    fetchTimeoutSec: int('FETCH_TIMEOUT_SEC', 1, 300),
    metricsToken: env.METRICS_TOKEN?.trim() || null,
    tls: loadTls(env),
    streamMaxConnections: int('STREAM_MAX_CONNECTIONS', 1, 1_000_000),
    failedPayments: { burst: int('FAILED_PAYMENTS_BURST', 0, 1_000_000), perMinute: int('FAILED_PAYMENTS_PER_MIN', 1, 1_000_000) },
    memoryShedAt: int('MEMORY_SHED_AT', 1, 100) / 100,
    journal: {
      rotateBytes: int('JOURNAL_ROTATE_MB', 1, 65_536) * 1048576,
      archiveDays: int('JOURNAL_ARCHIVE_DAYS', 0, 36_500),
      archiveBytes: int('JOURNAL_ARCHIVE_MB', 0, 1_048_576) * 1048576,
    },
    redis: loadRedis(env, int, port),
  });
}

function loadRedis(env: NodeJS.ProcessEnv, int: (name: string, min: number, max: number) => number, port: number): RedisConfig | null {
  const text = env.REDIS_URL?.trim();
  if (!text) {
    if ((env.SHARED_PORT?.trim() || '0') !== '0') throw new ConfigError('SHARED_PORT needs replica mode (REDIS_URL): one process keeps its port to itself');
    return null;
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // The URL may hold a password: never echoed.
    throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  const sharedPort = env.SHARED_PORT?.trim() || '0';
  if (sharedPort !== '0' && sharedPort !== '1') throw new ConfigError(`SHARED_PORT must be 0 or 1, got "${sharedPort}"`);
  // Replicas sharing a port share hostname:PORT, the default id: each must be named.
  if (sharedPort === '1' && !env.REPLICA_ID?.trim()) throw new ConfigError('SHARED_PORT=1 needs a REPLICA_ID of its own for each replica sharing the port');
  const replicaId = env.REPLICA_ID?.trim() || `${hostname()}:${port}`;
  if (!/^[\w.:@-]{1,100}$/.test(replicaId)) throw new ConfigError(`REPLICA_ID must be 1–100 letters, digits or . : @ _ -, got "${replicaId}"`);
  return {
    url: text,
    prefix: env.REDIS_PREFIX?.trim() || 'wires:',
    replicaId,
    takeoverMs: int('REDIS_TAKEOVER_SEC', 1, 3600) * 1000,
    journalDays: int('REDIS_JOURNAL_DAYS', 1, 3650),
    leaseMs: int('REDIS_LEASE_SEC', 1, 600) * 1000,
    sharedPort: sharedPort === '1',
  };
}

function loadSettlement(get: (name: string) => string, int: (name: string, min: number, max: number) => number): SettlementConfig {
  const mode = get('SETTLEMENT');
  if (mode !== 'sync' && mode !== 'optimistic') throw new ConfigError(`SETTLEMENT must be sync or optimistic, got "${mode}"`);
  const url = (name: string): string | null => {
    const text = get(name);
    if (!text) return null;
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      throw new ConfigError(`${name} must be an http(s) URL, got "${text}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${text}"`);
    return text.replace(/\/$/, '');
  };
  const key = get('SETTLER_PRIVATE_KEY');
  // The key's value never appears in an error message.
  if (key && !/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ConfigError('SETTLER_PRIVATE_KEY must be 0x followed by 64 hex digits');
  const release = get('OPTIMISTIC_RELEASE');
  if (release !== 'written' && release !== 'synced') throw new ConfigError(`OPTIMISTIC_RELEASE must be written or synced, got "${release}"`);
  const capText = get('OPTIMISTIC_MAX_UNSETTLED_USD');
  if (!/^\d+(\.\d{1,6})?$/.test(capText)) throw new ConfigError(`OPTIMISTIC_MAX_UNSETTLED_USD must be a decimal USD amount, got "${capText}"`);
  return {
    mode,
    facilitatorUrl: url('FACILITATOR_URL'),
    settlerKey: key ? (key as `0x${string}`) : null,
    rpcUrl: url('BASE_RPC_URL'),
    optimisticMaxUnsettled: BigInt(usdToAtomic(capText)),
    optimisticRelease: release,
    settleTimeoutSec: int('SETTLE_TIMEOUT_SEC', 1, 120),
  };
}

function loadTls(env: NodeJS.ProcessEnv): Config['tls'] {
  const cert = env.TLS_CERT_FILE?.trim() || '';
  const key = env.TLS_KEY_FILE?.trim() || '';
  if (!cert && !key) return null;
  if (!cert || !key) throw new ConfigError(`TLS_CERT_FILE and TLS_KEY_FILE are set together or not at all; only ${cert ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'} is`);
  return { cert: resolve(cert), key: resolve(key) };
}
