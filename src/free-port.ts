/** A port free on 127.0.0.1 now, for a process that must be told its port before it listens (anvil, PUBLIC_URL). */
import { type AddressInfo, createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
