/**
 * A loopback server whose endpoints misbehave the ways real sources do: errors, hangs,
 * malformed XML, huge bodies, gzip bombs, redirect loops, non-UTF-8 feeds and duplicates.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

function rss(items: string, encoding = 'UTF-8'): string {
  return `<?xml version="1.0" encoding="${encoding}"?><rss version="2.0"><channel><title>t</title><link>https://example.com/</link>${items}</channel></rss>`;
}
function item(guid: string, title: string, link: string, ageMin: number): string {
  const date = new Date(Date.now() - ageMin * 60_000).toUTCString();
  return `<item><guid isPermaLink="false">${guid}</guid><title>${title}</title><link>${link}</link><pubDate>${date}</pubDate><description>About ${title}</description></item>`;
}

export interface ChaosServer {
  url: string;
  close(): Promise<void>;
}

export async function startChaosServer(): Promise<ChaosServer> {
  // 64 MiB of zeros compress to about 64 KiB: small on the wire, large once decoded.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
  const server: Server = createServer((req, res) => {
    switch (req.url) {
      case '/500':
        res.writeHead(500).end('oops');
        return;
      case '/hang':
        return; // accept, never answer
      case '/malformed':
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end('<rss><channel><item><title>broken');
        return;
      case '/huge': {
        const chunk = Buffer.alloc(1024 * 1024, 'a');
        res.writeHead(200, { 'Content-Type': 'application/rss+xml', 'Content-Length': 50 * chunk.length });
        let sent = 0;
        const pump = () => {
          while (sent < 50) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        pump();
        return;
      }
      case '/bomb':
        res.writeHead(200, { 'Content-Type': 'application/rss+xml', 'Content-Encoding': 'gzip' }).end(bomb);
        return;
      case '/loop':
        res.writeHead(302, { Location: '/loop2' }).end();
        return;
      case '/loop2':
        res.writeHead(302, { Location: '/loop' }).end();
        return;
      case '/latin1':
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end(Buffer.from(rss(item('l1', 'Café société résultats', 'https://example.com/latin1/1', 3), 'ISO-8859-1'), 'latin1'));
        return;
      case '/dupes': {
        let items = '';
        for (let i = 0; i < 10; i++) items += item('same-guid', 'Repeated story', 'https://example.com/dupe/1', 5);
        for (let i = 0; i < 3; i++) items += item(`other-${i}`, `Distinct story ${i}`, `https://example.com/dupe/${i + 2}`, 6 + i);
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end(rss(items));
        return;
      }
      default:
        res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
