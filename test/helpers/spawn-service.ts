/** Runs the service as a child process (service-process.ts) and waits until it listens. */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./service-process.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** What it wrote to stderr (its log), for assertion messages. */
  logs(): string;
  /** Sends a signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [ENTRY], {
    // Test publishers and hubs are on loopback: let the feeds name them.
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', ALLOW_PRIVATE_DESTINATIONS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr = (stderr + d).slice(-20_000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const first = await Promise.race([createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next(), exited.then(() => null)]);
  if (!first || first.done) throw new Error(`the service did not start: ${stderr}`);
  const port = (JSON.parse(first.value as string) as { port: number }).port;
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    logs: () => stderr,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
