/**
 * The ingestion layer polls ~60 public feeds, and each fetch must survive
 * every way a remote server can misbehave (slow, hanging, huge, a compression bomb, redirect
 * loops, resets, 5xx storms, rate limiting) while never throwing: every outcome is a tagged
 * result the scheduler can act on (`ok`, `not-modified`, or `error` with a stable code and a
 * one-line message).
 *
 * One undici Agent per Fetcher keeps a keep-alive pool per origin with a bounded number of
 * connections, so a slow host occupies at most its own connections and never delays another
 * host. Each fetch runs under an overall deadline (retries, redirects and backoff included)
 * on top of undici's connect, headers and body-gap timeouts; the caller's signal stops it at
 * once. Bodies are read under a raw cap and a decoded cap (body.ts), redirects are followed
 * by hand (redirect.ts), retries use full-jitter backoff or the server's Retry-After (retry.ts).
 *
 * Politeness across fetches (host spacing, per-source backoff) lives in the scheduler on
 * the serving thread, since each worker has its own Fetcher.
 */
import { Agent, type Dispatcher } from 'undici';
import { codingsOf, destroyQuietly, readBody } from './body.js';
import { Deadline } from './deadline.js';
import { publicOnlyConnector } from './destination.js';
import { FetchFailure, toFailure, type FetchErrorCode } from './errors.js';
import { parseLinkHeader } from './link-header.js';
import { REDIRECT_STATUSES, RedirectTracker, httpUrl, type Hop } from './redirect.js';
import { backoffMs, isRetryableStatus, parseRetryAfter } from './retry.js';

export type { FetchErrorCode } from './errors.js';
export { parseRetryAfter } from './retry.js';

export interface FetchRequest {
  url: string;
  method?: 'GET' | 'POST';
  /** Extra headers; they override the defaults (a source may send its own User-Agent or Accept). */
  headers?: Record<string, string>;
  body?: string;
  /** Conditional GET validators from the previous success. */
  etag?: string;
  lastModified?: string;
  /** Extra attempts for this request, instead of the fetcher's (0 where every request counts against a host's budget). */
  retries?: number;
}

/** What the response's headers ask of the next poll and say about push delivery. */
export interface ResponseHints {
  /** How long the answer stays fresh: `Cache-Control: max-age` less `Age`. */
  maxAgeMs?: number;
  /** WebSub discovery from `Link` headers (RFC 8288): hub links, and the self link. */
  linkHubs?: string[];
  linkSelf?: string;
}

export interface FetcherOptions {
  userAgent: string;
  /** TCP + TLS (and DNS) handshake, per connection. */
  connectTimeoutMs: number;
  /** From sending the request to the last response header. */
  headersTimeoutMs: number;
  /** Longest silence between two body chunks (not the whole body: `totalTimeoutMs` bounds that). */
  bodyTimeoutMs: number;
  /** Deadline of the whole fetch: every attempt, redirect and backoff sleep. */
  totalTimeoutMs: number;
  /** Cap on bytes received (compressed); also refused up front when Content-Length announces more. */
  maxBodyBytes: number;
  /** Cap on bytes after Content-Encoding is undone (gzip bombs). */
  maxDecodedBytes: number;
  maxRedirects: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  /** First backoff step; each further retry doubles it (full jitter: a uniform wait up to the step). */
  retryBaseMs: number;
  /** Connections kept per origin (default 4): concurrent fetches to one host beyond this queue. */
  connectionsPerOrigin?: number;
  /** Let redirects lead to loopback, private, link-local… addresses (ALLOW_PRIVATE_DESTINATIONS); default false. */
  allowPrivateDestinations?: boolean;
}

export type FetchResult =
  | ({ kind: 'ok'; status: number; body: Uint8Array; contentType?: string; etag?: string; lastModified?: string; finalUrl: string; bytes: number; attempts: number; ms: number } & ResponseHints)
  | ({ kind: 'not-modified'; status: 304; etag?: string; lastModified?: string; attempts: number; ms: number } & ResponseHints)
  | { kind: 'error'; code: FetchErrorCode; message: string; status?: number; retryAfterMs?: number; attempts: number; ms: number };

type Done<K extends FetchResult['kind']> = Omit<Extract<FetchResult, { kind: K }>, 'attempts' | 'ms'>;

/** One attempt's outcome, before the retry policy looks at it. */
type Outcome = Done<'ok'> | Done<'not-modified'> | (Done<'error'> & { retryable: boolean });

/** How much of an error or redirect body is read to keep the connection reusable; beyond it the connection is closed. */
const DISCARD_LIMIT = 64 * 1024;

export class Fetcher {
  /** For the URL the caller asked for: the operator configured it, so it goes wherever it says. */
  private readonly agent: Agent;
  /** For redirect targets on other origins, which the publisher chose: public addresses only, unless allowed (destination.ts). */
  private readonly redirectAgent: Agent;
  private readonly active = new Set<Deadline>();
  private closed = false;

  constructor(private readonly opts: FetcherOptions) {
    const pool = {
      connections: opts.connectionsPerOrigin ?? 4,
      pipelining: 1,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs,
    };
    // Happy eyeballs: a host whose IPv6 address is unreachable from here still connects over IPv4.
    const connect = { timeout: opts.connectTimeoutMs, autoSelectFamily: true };
    this.agent = new Agent({ ...pool, connect });
    this.redirectAgent = opts.allowPrivateDestinations ? this.agent : new Agent({ ...pool, connect: publicOnlyConnector('redirect to', connect) });
  }

  /** Never rejects: every failure is an `error` result. */
  async fetch(req: FetchRequest, signal?: AbortSignal): Promise<FetchResult> {
    const deadline = new Deadline(this.opts.totalTimeoutMs, signal);
    if (this.closed) deadline.stop('aborted');
    this.active.add(deadline);
    const ms = () => Math.round(deadline.elapsedMs());
    try {
      for (let attempts = 1; ; attempts++) {
        const outcome = await this.attempt(req, deadline);
        if (outcome.kind !== 'error') return { ...outcome, attempts, ms: ms() };
        const { retryable, ...error } = outcome;
        const result = (): FetchResult => ({ ...error, attempts, ms: ms() });
        if (!retryable || attempts > (req.retries ?? this.opts.retries) || deadline.stopped) return result();
        // The server's Retry-After wins over our own backoff; if it reaches past the deadline,
        // give up now and let the scheduler wait it out (it gets retryAfterMs).
        const wait = error.retryAfterMs ?? backoffMs(attempts, this.opts.retryBaseMs);
        if (wait >= deadline.remainingMs()) return result();
        if (!(await deadline.sleep(wait))) {
          return deadline.stopped === 'aborted' ? { ...this.stoppedError(deadline), attempts, ms: ms() } : result();
        }
      }
    } finally {
      deadline.dispose();
      this.active.delete(deadline);
    }
  }

  /** Stops fetches in flight (they resolve as `aborted`) and closes every connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const d of this.active) d.stop('aborted');
    await Promise.all([this.agent.destroy(), this.redirectAgent !== this.agent && this.redirectAgent.destroy()]);
  }

  /** One attempt, redirects included; converts everything thrown into an outcome. */
  private async attempt(req: FetchRequest, deadline: Deadline): Promise<Outcome> {
    try {
      const outcome = await this.follow(req, deadline);
      // A caller abort that lands while an error body is discarded is reported as the abort;
      // a deadline there keeps the (more informative) HTTP status, and the loop stops anyway.
      return outcome.kind === 'error' && deadline.stopped === 'aborted' ? { ...this.stoppedError(deadline), retryable: false } : outcome;
    } catch (err) {
      if (deadline.stopped) return { ...this.stoppedError(deadline), retryable: false };
      const f = toFailure(err);
      return { kind: 'error', code: f.code, message: f.message, retryable: f.retryable };
    }
  }

  private stoppedError(deadline: Deadline): Done<'error'> {
    return deadline.stopped === 'timeout'
      ? { kind: 'error', code: 'timeout', message: `no complete answer within ${this.opts.totalTimeoutMs} ms` }
      : { kind: 'error', code: 'aborted', message: this.closed ? 'fetcher closed' : 'aborted by the caller' };
  }

  private async follow(req: FetchRequest, deadline: Deadline): Promise<Outcome> {
    const first = httpUrl(req.url);
    let hop: Hop = { url: first, method: req.method ?? 'GET', headers: this.headersFor(req) };
    if (req.body !== undefined) hop.body = req.body;
    const redirects = new RedirectTracker(first, this.opts.maxRedirects);

    for (;;) {
      // The configured URL's origin is the operator's choice, redirects within it too; any
      // other origin a redirect names is the publisher's.
      const res = await (hop.url.origin === first.origin ? this.agent : this.redirectAgent).request({
        origin: hop.url.origin,
        path: hop.url.pathname + hop.url.search,
        method: hop.method,
        headers: hop.headers,
        body: hop.body ?? null,
        signal: deadline.signal,
      });
      const status = res.statusCode;
      const header = (name: string): string | undefined => {
        const v = res.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };

      const location = header('location');
      if (REDIRECT_STATUSES.has(status) && location) {
        await discard(res.body);
        hop = redirects.next(hop, status, location);
        continue;
      }

      const validators = {
        ...(header('etag') !== undefined && { etag: header('etag')! }),
        ...(header('last-modified') !== undefined && { lastModified: header('last-modified')! }),
        ...responseHints(res.headers, hop.url),
      };
      if (status === 304) {
        await discard(res.body);
        // A 304 may omit the validators; echo the ones sent so the caller keeps them.
        return {
          kind: 'not-modified',
          status: 304,
          ...(req.etag !== undefined && { etag: req.etag }),
          ...(req.lastModified !== undefined && { lastModified: req.lastModified }),
          ...validators,
        };
      }
      if (status < 200 || status > 299) {
        await discard(res.body);
        const retryAfterMs = parseRetryAfter(header('retry-after'));
        return {
          kind: 'error',
          code: 'http_status',
          message: `HTTP ${status}${res.statusText ? ' ' + res.statusText.slice(0, 60) : ''}`,
          status,
          ...(retryAfterMs !== undefined && { retryAfterMs }),
          retryable: isRetryableStatus(status),
        };
      }

      const announced = Number(header('content-length'));
      if (announced > this.opts.maxBodyBytes) {
        destroyQuietly(res.body);
        throw new FetchFailure('too_large', `Content-Length ${announced} exceeds the ${this.opts.maxBodyBytes}-byte cap`);
      }
      let codings: string[];
      try {
        codings = codingsOf(header('content-encoding'));
      } catch (err) {
        destroyQuietly(res.body);
        throw err;
      }
      const { body, bytes } = await readBody(res.body, codings, this.opts);
      const contentType = header('content-type');
      return {
        kind: 'ok',
        status,
        body,
        ...(contentType !== undefined && { contentType }),
        ...validators,
        finalUrl: hop.url.href,
        bytes,
      };
    }
  }

  /** Defaults, then the request's own headers (case-insensitively), then the validators. */
  private headersFor(req: FetchRequest): Record<string, string> {
    const headers: Record<string, string> = {
      'user-agent': this.opts.userAgent,
      'accept-encoding': 'gzip, deflate, br',
      accept: '*/*',
    };
    for (const [name, value] of Object.entries(req.headers ?? {})) headers[name.toLowerCase()] = value;
    if (req.etag) headers['if-none-match'] = req.etag;
    if (req.lastModified) headers['if-modified-since'] = req.lastModified;
    return headers;
  }
}

/** Longest max-age believed: a year-long one must not stop a source being polled. */
const MAX_AGE_CAP_MS = 24 * 3_600_000;

/** `Cache-Control: max-age` (less `Age`) and WebSub `Link` headers of a response. */
export function responseHints(headers: Record<string, string | string[] | undefined>, url: URL): ResponseHints {
  const all = (name: string) => {
    const v = headers[name];
    return v === undefined ? '' : Array.isArray(v) ? v.join(', ') : v;
  };
  const out: ResponseHints = {};
  const cc = all('cache-control').toLowerCase();
  const m = /(?:^|[,\s])max-age\s*=\s*"?(\d+)/.exec(cc);
  if (m && !/(?:^|[,\s])no-(?:cache|store)\b/.test(cc)) {
    const age = Number(/^\s*(\d+)/.exec(all('age'))?.[1] ?? 0);
    out.maxAgeMs = Math.min(MAX_AGE_CAP_MS, Math.max(0, Number(m[1]) - age) * 1000);
  }
  for (const link of parseLinkHeader(all('link'))) {
    if (link.rels.includes('hub')) (out.linkHubs ??= []).push(link.href);
    if (link.rels.includes('self') && out.linkSelf === undefined && URL.canParse(link.href, url)) out.linkSelf = new URL(link.href, url).href;
  }
  return out;
}

/**
 * Reads and drops a body we do not want (redirect, 304, error page). Up to 64 KiB is read so
 * the connection can be reused; a bigger one makes undici close the connection instead.
 * Never rejects: a stalled or aborted body simply ends.
 */
async function discard(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: DISCARD_LIMIT });
  } catch {
    destroyQuietly(body);
  }
}
