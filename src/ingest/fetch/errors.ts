/**
 * A remote server can fail in dozens of ways, and undici and Node report them
 * as dozens of error classes with long messages. The scheduler, /health and the logs need a
 * handful of stable codes and one short line each. This module is the only place that knows
 * the library's error codes; everything else sees a `FetchFailure`.
 */

export type FetchErrorCode =
  | 'timeout'
  | 'http_status'
  | 'too_large'
  | 'decoded_too_large'
  | 'bad_encoding'
  | 'redirect_loop'
  | 'too_many_redirects'
  | 'network'
  | 'aborted'
  /** The fetcher refused to send: not an http(s) URL, a redirect to another scheme, an unsendable request. */
  | 'blocked'
  /** A redirect led to a loopback, private, link-local… address (destination.ts) while ALLOW_PRIVATE_DESTINATIONS is off. */
  | 'blocked_destination';

/** A failure the fetcher understood. `retryable` is a property of the failure, not of the attempt count. */
export class FetchFailure extends Error {
  override readonly name = 'FetchFailure';
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** Network errors that another attempt a moment later will not cure. */
const PERMANENT_NETWORK = new Set([
  'ENOTFOUND',
  'UND_ERR_HEADERS_OVERFLOW',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const TIMEOUTS: Readonly<Record<string, string>> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'response body stalled',
};

const NETWORK: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'body shorter or longer than its Content-Length',
  UND_ERR_HEADERS_OVERFLOW: 'response headers too large',
  ECONNRESET: 'connection reset',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed temporarily',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed while sending',
};

/**
 * Turns anything thrown by undici, node:net/tls or node:zlib during one attempt into a
 * `FetchFailure`. Stop reasons (deadline, caller abort) are decided by the caller before
 * this is consulted, so an abort error reaching here is treated as a network failure.
 */
export function toFailure(err: unknown): FetchFailure {
  if (err instanceof FetchFailure) return err;
  const e = (err ?? {}) as { code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : undefined;
  // Its message already says where, why, and which setting allows it.
  if (code === 'ERR_BLOCKED_DESTINATION') {
    const source = (e.code === code ? e : e.cause) as { message?: unknown };
    return new FetchFailure('blocked_destination', String(source.message).slice(0, 300), false);
  }
  if (code && TIMEOUTS[code]) return new FetchFailure('timeout', TIMEOUTS[code], true);
  // A server speaking broken HTTP will not mend in the next second.
  if (code?.startsWith('HPE_') || e.name === 'HTTPParserError') return new FetchFailure('network', `malformed HTTP response${code ? ` (${code})` : ''}`, false);
  if (code === 'UND_ERR_INVALID_ARG' || code === 'ERR_INVALID_ARG_TYPE' || code === 'ERR_INVALID_URL') {
    return new FetchFailure('blocked', `request refused by the HTTP client: ${short(e.message)}`, false);
  }
  if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED') return new FetchFailure('aborted', 'fetcher closed', false);
  const known = code ? NETWORK[code] : undefined;
  const message = known ? `${known} (${code})` : code ? `${code}: ${short(e.message)}` : `network error: ${short(e.message)}`;
  return new FetchFailure('network', message, !isPermanent(code));
}

function isPermanent(code: string | undefined): boolean {
  return code !== undefined && (PERMANENT_NETWORK.has(code) || code.startsWith('ERR_TLS_') || code.includes('CERT'));
}

/** One line, bounded: library messages can embed whole socket descriptions. */
function short(message: unknown): string {
  const text = typeof message === 'string' ? message : String(message ?? 'unknown');
  const line = text.split('\n', 1)[0]!;
  return line.length > 120 ? line.slice(0, 117) + '...' : line;
}
