/**
 * Every setting of the service: one table of options with their defaults, read from the
 * environment once at start, validated, and frozen. The README's configuration table lists
 * the same options (a test checks that none is missing there).
 */
import { isAbsolute, resolve } from 'node:path';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  port: number;
  host: string;
  /** Base URL clients reach the service at; used in x402 offers' `resource`. */
  publicUrl: string;
  /** Recipient of payments; null when unset or invalid (paid routes answer 503). */
  payTo: `0x${string}` | null;
  /** Why payTo is null, for the start-up log and /health. */
  payToProblem: string | null;
  dataDir: string;
  logLevel: LogLevel;
  allowUwsFallback: boolean;
  /** x402 `maxTimeoutSeconds` in every offer. */
  paymentTimeoutSec: number;
  /** Poll the sources at all (off: serve what the snapshot holds). */
  ingest: boolean;
  /** Seconds between scheduler runs; breaking wires poll on every run. */
  pollIntervalSec: number;
  /** Worker threads for fetching and parsing. */
  ingestThreads: number;
  userAgent: string;
  /** Path of the source overrides file, or null. */
  sourcesFile: string | null;
  /** Seconds between wire snapshots to DATA_DIR. */
  snapshotIntervalSec: number;
  /** Overall deadline of one fetch, retries included. */
  fetchTimeoutSec: number;
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
  { env: 'ALLOW_UWS_FALLBACK', default: '0', doc: 'Set to 1 to start even if the native uWebSockets.js binary did not load.' },
  { env: 'PAYMENT_TIMEOUT_SEC', default: '60', doc: 'x402 `maxTimeoutSeconds` offered to clients.' },
  { env: 'INGEST', default: '1', doc: 'Set to 0 to serve without polling (only what the snapshot holds).' },
  { env: 'POLL_INTERVAL_SEC', default: '60', doc: 'Seconds between scheduler runs; breaking wires poll every run.' },
  { env: 'INGEST_THREADS', default: '1', doc: 'Worker threads that fetch and parse feeds.' },
  { env: 'USER_AGENT', default: DEFAULT_USER_AGENT, doc: 'User-Agent sent to sources; SEC and NWS require a contact address.' },
  { env: 'WIRES_SOURCES', default: '', doc: 'JSON file of source id → URL overrides (mirrors, proxies, fixtures).' },
  { env: 'SNAPSHOT_INTERVAL_SEC', default: '300', doc: 'Seconds between snapshots of the wires to DATA_DIR.' },
  { env: 'FETCH_TIMEOUT_SEC', default: '30', doc: 'Overall deadline of one poll of one source, retries included.' },
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

  const dataDir = get('DATA_DIR');
  return Object.freeze({
    port,
    host: get('HOST'),
    publicUrl,
    payTo,
    payToProblem,
    dataDir: isAbsolute(dataDir) ? dataDir : resolve(dataDir),
    logLevel: logLevel as LogLevel,
    allowUwsFallback: get('ALLOW_UWS_FALLBACK') === '1',
    paymentTimeoutSec: int('PAYMENT_TIMEOUT_SEC', 10, 3600),
    ingest: get('INGEST') !== '0',
    pollIntervalSec: int('POLL_INTERVAL_SEC', 1, 3600),
    ingestThreads: int('INGEST_THREADS', 1, 16),
    userAgent: get('USER_AGENT'),
    sourcesFile: get('WIRES_SOURCES') || null,
    snapshotIntervalSec: int('SNAPSHOT_INTERVAL_SEC', 5, 86_400),
    fetchTimeoutSec: int('FETCH_TIMEOUT_SEC', 1, 300),
  });
}
