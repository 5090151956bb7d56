/** Small pieces the loopback test servers share. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Listens on 127.0.0.1 at a free port and answers malformed HTTP with a bare 400 instead of
 * dropping the socket, as a real server does; resolves with the port.
 */
export async function listenLoopback(server: Server): Promise<number> {
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

export { freePort } from '../../src/free-port.js';

/** mulberry32: a small seeded PRNG, so generated data repeats from run to run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
