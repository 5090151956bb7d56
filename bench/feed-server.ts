/**
 * A loopback feed server for benchmarks: every request to /feed/<n> returns a fresh RSS 2.0
 * document of ITEMS items with new guids, so every poll is a full batch of new items.
 * Runs in its own process so it does not compete with the service's serving thread.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const ITEMS = Number(process.env.ITEMS ?? 5000);
const WORDS = (
  'market rate cut inflation bank stocks bond yield oil energy crypto bitcoin tech chip ai model ' +
  'earnings revenue growth jobs report fed ecb policy trade tariff deal merger court ruling outlook week'
).split(' ');

let request = 0;
function feed(n: string): string {
  request++;
  const now = Date.now();
  let items = '';
  for (let i = 0; i < ITEMS; i++) {
    const w = (k: number) => WORDS[(i * 7 + k * 13 + request) % WORDS.length];
    const title = `${w(1)} ${w(2)} ${w(3)} ${w(4)} ${w(5)} ${w(6)} update ${i}`;
    items +=
      `<item><title>${title}</title><link>https://example.com/${n}/${request}/${i}</link>` +
      `<guid isPermaLink="false">${n}-${request}-${i}</guid><pubDate>${new Date(now - i * 20_000).toUTCString()}</pubDate>` +
      `<description>&lt;p&gt;${title} and more about ${w(7)} ${w(8)} ${w(9)} in this report.&lt;/p&gt;</description></item>`;
  }
  return `<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>bench ${n}</title><link>https://example.com/</link>${items}</channel></rss>`;
}

const server = createServer((req, res) => {
  const m = /^\/feed\/(\w+)/.exec(req.url ?? '');
  if (!m) return void res.writeHead(404).end();
  res.writeHead(200, { 'Content-Type': 'application/rss+xml' }).end(feed(m[1]!));
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port }) + '\n');
});
