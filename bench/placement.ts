/**
 * Where a latency benchmark's threads run (BENCH_PIN): `serving` (default) gives the
 * service's serving thread core 0 alone and everything else (its other threads, load
 * generators, the devnet) core 1; `shared` pins every thread of the service to core 0;
 * `none` leaves all to the scheduler. On one core, or without taskset, nothing is pinned.
 * Import this module first: the pinning applies to the threads that exist or are created
 * afterwards (moveHelpers() moves those created in between).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

export const PIN = (process.env.BENCH_PIN ?? 'serving') as 'serving' | 'shared' | 'none';
const taskset = (cpu: string, tid: number | string, all = false) => spawnSync('taskset', [...(all ? ['-a'] : []), '-p', '-c', cpu, String(tid)]).status === 0;
// Linux threads are tasks: given a pid, taskset without -a moves only the main thread.
export const pinned = PIN !== 'none' && availableParallelism() >= 2 && taskset('0', process.pid, PIN === 'shared');

/** A helper process's command line: on core 1 when pinned, at a lower priority when `nice` > 0. */
export const onCore1 = (args: string[], nice = 0): [string, string[]] => {
  const niced = nice > 0 ? ['nice', '-n', String(nice), process.execPath, ...args] : [process.execPath, ...args];
  return pinned ? ['taskset', ['-c', '1', ...niced]] : [niced[0]!, niced.slice(1)];
};

/** Moves this process's threads other than the serving thread to core 1 (they inherit core 0 when created). */
export function moveHelpers(): void {
  if (!pinned || PIN !== 'serving') return;
  for (const tid of readdirSync('/proc/self/task')) if (tid !== String(process.pid)) taskset('1', tid);
}

const LOAD = fileURLToPath(new URL('./load.js', import.meta.url));

/** What bench/load.ts prints. */
export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  p999: number;
  /** The service's own time (the envelope's took_ms). */
  server_p50: number;
  server_p99: number;
}

/**
 * Runs bench/load.ts on core 1: `node load.js <url> <connections> <seconds> [payments-file] [cycle]`;
 * `pace.intervalMs` paces each connection (open loop), `pace.nice` lowers the generator's priority.
 */
export function runLoad(url: string, connections: number, seconds: number, extra: string[] = [], pace: { intervalMs?: number; nice?: number } = {}): Promise<LoadResult> {
  const [cmd, args] = onCore1([LOAD, url, String(connections), String(seconds), ...extra], pace.nice);
  const env = pace.intervalMs ? { ...process.env, LOAD_INTERVAL_MS: String(pace.intervalMs) } : process.env;
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  return new Promise((resolve, reject) => child.on('exit', () => (out ? resolve(JSON.parse(out)) : reject(new Error('load generator failed')))));
}
