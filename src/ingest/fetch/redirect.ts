/**
 * Undici's `request` does not follow redirects, and its redirect interceptor
 * neither detects loops nor lets us refuse non-http targets or report which rule stopped us.
 * Feeds do move (CoinDesk `/rss/` → `/rss`, retired hosts for Azure, arXiv, OpenAI), so
 * following a few hops matters, and doing it here keeps every hop under the same deadline,
 * caps and error codes as the first request.
 */
import { FetchFailure } from './errors.js';

export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Headers that must not follow a redirect to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

/** Everything needed to send one hop. Header names are lower-case. */
export interface Hop {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** Parses a URL the fetcher may request: http or https only, otherwise `blocked`. */
export function httpUrl(raw: string | URL, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new FetchFailure('blocked', `not a URL: ${String(raw).slice(0, 80)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchFailure('blocked', `${url.protocol.slice(0, 20)} URLs are not fetched`);
  }
  url.hash = '';
  return url;
}

/**
 * Follows the redirects of one attempt: remembers every URL visited (a repeat is a loop,
 * reported as such rather than as "too many"), counts hops, and derives the next request.
 */
export class RedirectTracker {
  private readonly seen = new Set<string>();
  private hops = 0;

  constructor(
    first: URL,
    private readonly maxRedirects: number,
  ) {
    this.seen.add(first.href);
  }

  /** The request that follows `status` + `location` from `hop`; throws a `FetchFailure` when it may not be followed. */
  next(hop: Hop, status: number, location: string): Hop {
    const url = httpUrl(location, hop.url);
    if (this.seen.has(url.href)) throw new FetchFailure('redirect_loop', `redirect loop back to ${url.href.slice(0, 200)}`);
    if (++this.hops > this.maxRedirects) throw new FetchFailure('too_many_redirects', `more than ${this.maxRedirects} redirects`);
    this.seen.add(url.href);

    const headers = { ...hop.headers };
    if (url.origin !== hop.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
    // As browsers do: 303 always becomes GET, and so do 301/302 answering a POST; 307/308 repeat the request as sent.
    if (status === 303 || ((status === 301 || status === 302) && hop.method === 'POST')) {
      delete headers['content-type'];
      delete headers['content-length'];
      return { url, method: 'GET', headers };
    }
    const next: Hop = { url, method: hop.method, headers };
    if (hop.body !== undefined) next.body = hop.body;
    return next;
  }
}
