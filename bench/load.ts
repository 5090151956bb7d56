/**
 * A closed-loop HTTP load generator with microsecond latency resolution (autocannon and wrk
 * report whole milliseconds, too coarse for a sub-millisecond service). Runs in its own
 * process: `node load.js <url> <connections> <seconds>`, prints one JSON line.
 */
import { Pool } from 'undici';

const [url, connectionsArg, secondsArg] = process.argv.slice(2);
if (!url) throw new Error('usage: load.js <url> [connections] [seconds]');
const connections = Number(connectionsArg ?? 10);
const deadline = performance.now() + Number(secondsArg ?? 10) * 1000;
const target = new URL(url);
const pool = new Pool(target.origin, { connections, pipelining: 1 });
const path = target.pathname + target.search;

const latencies: number[] = [];
let errors = 0;

async function worker(): Promise<void> {
  while (performance.now() < deadline) {
    const start = performance.now();
    try {
      const res = await pool.request({ path, method: 'GET' });
      await res.body.dump();
      if (res.statusCode !== 200) errors++;
      latencies.push(performance.now() - start);
    } catch {
      errors++;
    }
  }
}

await Promise.all(Array.from({ length: connections }, worker));
await pool.close();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
const round = (ms: number) => Math.round(ms * 1000) / 1000;
process.stdout.write(JSON.stringify({ requests: latencies.length, errors, p50: round(at(0.5)), p99: round(at(0.99)), p999: round(at(0.999)) }) + '\n');
