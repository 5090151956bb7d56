/**
 * A publisher over loopback HTTP: an RSS 2.0 feed whose stories a test or a benchmark adds,
 * answering conditional GETs with 304 and, when given a hub, naming it and its own URL as
 * WebSub discovery links (`<atom:link rel="hub">`, `rel="self"`), as WordPress feeds do.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublisherOptions {
  /** A WebSub hub the feed names. */
  hub?: string;
  /** Extra response headers (Cache-Control …). */
  headers?: Record<string, string>;
  /** Every request finds a new story (a feed that changes on every poll). */
  newOnEveryRequest?: boolean;
  /** Every request is refused with this status and a Retry-After (a publisher asking to be left alone). */
  refuse?: { status: number; retryAfterSec: number };
}

export interface Publisher {
  /** The feed's URL, also its WebSub topic. */
  url: string;
  /** The stories, oldest first; the feed lists the newest 30. */
  items: { title: string; at: number }[];
  add(title: string): void;
  /** Every request: when (monotonic ms and wall-clock ms), its path, User-Agent and If-None-Match. */
  requests: { at: number; wall: number; path: string; userAgent: string | undefined; ifNoneMatch: string | undefined }[];
  close(): Promise<void>;
}

export async function startPublisher(opts: PublisherOptions = {}): Promise<Publisher> {
  const items: { title: string; at: number }[] = [{ title: 'Opening item', at: Date.now() - 60_000 }];
  const requests: Publisher['requests'] = [];
  let url = '';
  const server: Server = createServer((req, res) => {
    requests.push({ at: performance.now(), wall: Date.now(), path: req.url ?? '', userAgent: req.headers['user-agent'], ifNoneMatch: req.headers['if-none-match'] });
    if (opts.refuse) return void res.writeHead(opts.refuse.status, { 'Retry-After': String(opts.refuse.retryAfterSec) }).end();
    if (opts.newOnEveryRequest) items.push({ title: `Story ${requests.length}`, at: Date.now() });
    const etag = `"${items.length}"`;
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { ETag: etag, ...opts.headers }).end();
    const links = opts.hub ? `<atom:link rel="hub" href="${opts.hub}"/><atom:link rel="self" href="${url}"/>` : '';
    const body = items
      .slice(-30)
      .map((i) => `<item><title>${i.title}</title><link>https://example.com/${encodeURIComponent(i.title)}</link><guid>${i.title}</guid><pubDate>${new Date(i.at).toUTCString()}</pubDate></item>`)
      .join('');
    res
      .writeHead(200, { 'Content-Type': 'application/rss+xml', ETag: etag, ...opts.headers })
      .end(`<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>p</title><link>https://example.com/</link>${links}${body}</channel></rss>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`;
  return {
    url,
    items,
    requests,
    add: (title) => items.push({ title, at: Date.now() }),
    close: () => new Promise((r) => server.close(() => r())),
  };
}
