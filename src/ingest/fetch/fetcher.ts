/**
 * Fetches one source document and survives every way a remote server misbehaves: slow,
 * hanging, huge, compressed into a bomb, redirecting in circles, failing. Every failure is a
 * tagged result with a stable code and a short message, never a thrown library error.
 *
 * One undici Agent per Fetcher keeps a keep-alive pool per origin. Each fetch has an overall
 * deadline (retries and backoff included) on top of undici's connect, headers and body
 * timeouts. The raw body is capped while it streams in, and decompression stops at its own
 * cap, so neither a 50 MB answer nor a gzip bomb costs more than the caps in memory.
 */
import { Agent, errors } from 'undici';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

export interface FetchRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Conditional GET validators from the previous success. */
  etag?: string;
  lastModified?: string;
}

export interface FetcherOptions {
  userAgent: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Deadline of the whole fetch, retries and backoff included. */
  totalTimeoutMs: number;
  maxBodyBytes: number;
  maxDecodedBytes: number;
  maxRedirects: number;
  /** Extra attempts after the first, for network errors, timeouts, 429 and 5xx. */
  retries: number;
  retryBaseMs: number;
}

export type FetchErrorCode =
  | 'timeout'
  | 'http_status'
  | 'too_large'
  | 'decoded_too_large'
  | 'bad_encoding'
  | 'redirect_loop'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'network'
  | 'aborted';

export type FetchResult =
  | { kind: 'ok'; status: number; body: Uint8Array; contentType?: string; etag?: string; lastModified?: string; finalUrl: string; bytes: number; attempts: number; ms: number }
  | { kind: 'not-modified'; status: 304; etag?: string; lastModified?: string; attempts: number; ms: number }
  | { kind: 'error'; code: FetchErrorCode; message: string; status?: number; retryAfterMs?: number; attempts: number; ms: number };

/** One attempt's outcome before retry policy is applied. */
type Attempt =
  | Extract<FetchResult, { kind: 'ok' | 'not-modified' }>
  | { kind: 'error'; code: FetchErrorCode; message: string; status?: number; retryAfterMs?: number; retryable: boolean };

class Failure extends Error {
  constructor(
    readonly code: FetchErrorCode,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export class Fetcher {
  private readonly agent: Agent;

  constructor(private readonly opts: FetcherOptions) {
    this.agent = new Agent({
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      connections: 4,
    });
  }

  async fetch(req: FetchRequest, signal?: AbortSignal): Promise<FetchResult> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(this.opts.totalTimeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const ms = () => Math.round(performance.now() - started);
    let attempts = 0;
    for (;;) {
      attempts++;
      const a = await this.attempt(req, combined, signal);
      if (a.kind !== 'error') return { ...a, attempts, ms: ms() };
      const { retryable, ...error } = a;
      if (!retryable || attempts > this.opts.retries || combined.aborted) return { ...error, attempts, ms: ms() };
      // Full jitter: a random wait up to the exponential step, or the server's Retry-After.
      const backoff = a.retryAfterMs ?? Math.random() * this.opts.retryBaseMs * 2 ** (attempts - 1);
      const remaining = this.opts.totalTimeoutMs - (performance.now() - started);
      if (backoff >= remaining) return { ...error, attempts, ms: ms() };
      if (!(await sleep(backoff, combined))) return { ...error, attempts, ms: ms() };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async attempt(req: FetchRequest, signal: AbortSignal, callerSignal: AbortSignal | undefined): Promise<Attempt> {
    try {
      return await this.follow(req, signal);
    } catch (err) {
      if (err instanceof Failure) return { kind: 'error', code: err.code, message: err.message, retryable: err.retryable };
      if (callerSignal?.aborted) return { kind: 'error', code: 'aborted', message: 'aborted by the caller', retryable: false };
      if (signal.aborted) return { kind: 'error', code: 'timeout', message: `no complete answer within ${this.opts.totalTimeoutMs} ms`, retryable: false };
      return { ...classify(err), kind: 'error', retryable: true };
    }
  }

  /** One request, following redirects. */
  private async follow(req: FetchRequest, signal: AbortSignal): Promise<Attempt> {
    let url = new URL(req.url);
    let method = req.method ?? 'GET';
    let body = req.body;
    const seen = new Set<string>([url.href]);
    for (let hop = 0; ; hop++) {
      const headers: Record<string, string> = {
        'user-agent': this.opts.userAgent,
        'accept-encoding': 'gzip, deflate, br',
        accept: '*/*',
        ...req.headers,
      };
      if (req.etag) headers['if-none-match'] = req.etag;
      if (req.lastModified) headers['if-modified-since'] = req.lastModified;
      const res = await this.agent.request({ origin: url.origin, path: url.pathname + url.search, method, headers, body, signal });
      const status = res.statusCode;
      const header = (name: string) => {
        const v = res.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };

      if (status >= 300 && status < 400 && status !== 304) {
        await res.body.dump();
        const location = header('location');
        if (!location) throw new Failure('bad_redirect', `${status} without a Location header`);
        const next = new URL(location, url);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new Failure('bad_redirect', `redirect to ${next.protocol} refused`);
        if (seen.has(next.href)) throw new Failure('redirect_loop', `redirect loop at ${next.href}`);
        if (hop + 1 > this.opts.maxRedirects) throw new Failure('too_many_redirects', `more than ${this.opts.maxRedirects} redirects`);
        seen.add(next.href);
        url = next;
        if (status === 303) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }

      const validators = {
        ...(header('etag') !== undefined && { etag: header('etag')! }),
        ...(header('last-modified') !== undefined && { lastModified: header('last-modified')! }),
      };
      if (status === 304) {
        await res.body.dump();
        return { kind: 'not-modified', status: 304, ...validators, attempts: 0, ms: 0 };
      }
      if (status >= 400) {
        await res.body.dump();
        const retryAfterMs = parseRetryAfter(header('retry-after'));
        return {
          kind: 'error',
          code: 'http_status',
          message: `HTTP ${status}`,
          status,
          ...(retryAfterMs !== undefined && { retryAfterMs }),
          retryable: status === 429 || status >= 500,
        };
      }

      const announced = Number(header('content-length'));
      if (announced > this.opts.maxBodyBytes) {
        res.body.destroy();
        throw new Failure('too_large', `body of ${announced} bytes announced, the cap is ${this.opts.maxBodyBytes}`);
      }
      const raw = await readCapped(res.body, this.opts.maxBodyBytes);
      const decoded = this.decode(raw, header('content-encoding'));
      const contentType = header('content-type');
      return {
        kind: 'ok',
        status,
        body: decoded,
        ...(contentType !== undefined && { contentType }),
        ...validators,
        finalUrl: url.href,
        bytes: raw.length,
        attempts: 0,
        ms: 0,
      };
    }
  }

  /** Undoes Content-Encoding, stopping at the decoded-size cap (a bomb never inflates fully). */
  private decode(raw: Buffer, encoding: string | undefined): Uint8Array {
    const coding = encoding?.trim().toLowerCase();
    if (!coding || coding === 'identity') return raw;
    const opts = { maxOutputLength: this.opts.maxDecodedBytes };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') return gunzipSync(raw, opts);
      if (coding === 'br') return brotliDecompressSync(raw, opts);
      if (coding === 'deflate') {
        // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate.
        try {
          return inflateSync(raw, opts);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw err;
          return inflateRawSync(raw, opts);
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        throw new Failure('decoded_too_large', `decoded body exceeds ${this.opts.maxDecodedBytes} bytes`);
      }
      throw new Failure('bad_encoding', `cannot decode ${coding} body: ${(err as Error).message}`);
    }
    throw new Failure('bad_encoding', `unsupported Content-Encoding ${coding}`);
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > max) {
      body.destroy();
      throw new Failure('too_large', `body exceeds ${max} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function classify(err: unknown): { code: FetchErrorCode; message: string } {
  if (err instanceof errors.ConnectTimeoutError || err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError) {
    return { code: 'timeout', message: (err as Error).message };
  }
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code;
  return { code: 'network', message: code ? `${code}: ${e.message}` : String(e.message ?? err).slice(0, 200) };
}

/** Resolves true after `ms`, false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
