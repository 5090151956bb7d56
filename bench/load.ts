/**
 * A closed-loop HTTP load generator with microsecond latency resolution (autocannon and wrk
 * report whole milliseconds, too coarse for a sub-millisecond service). Runs in its own
 * process: `node load.js <url> <connections> <seconds> [payments-file] [cycle]`, prints one
 * JSON line. With a payments file (one PAYMENT-SIGNATURE value per line), every request
 * carries the next one, and the run ends when they are used up; with `cycle`, they are used
 * round and round until the time is up (forged payments in bench:attack). The answer's
 * statuses are counted. LOAD_INTERVAL_MS paces each connection to one request per interval.
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, connectionsArg, secondsArg, paymentsFile, mode] = process.argv.slice(2);
const cycle = mode === 'cycle';
/** LOAD_INTERVAL_MS: each connection sends at most one request per interval (an open-loop pace) instead of back to back. */
const intervalMs = Number(process.env.LOAD_INTERVAL_MS ?? 0);
const payments = paymentsFile ? readFileSync(paymentsFile, 'utf8').split('\n').filter(Boolean) : null;
let nextPayment = 0;
if (!url) throw new Error('usage: load.js <url> [connections] [seconds]');
const connections = Number(connectionsArg ?? 10);
const deadline = performance.now() + Number(secondsArg ?? 10) * 1000;
const target = new URL(url);
const pool = new Pool(target.origin, { connections, pipelining: 1 });
const path = target.pathname + target.search;

const latencies: number[] = [];
/** The service's own time per request, from the envelope's took_ms. */
const serverTimes: number[] = [];
const TOOK = /"took_ms":([0-9.]+)/;
let errors = 0;
const statuses: Record<number, number> = {};

async function worker(): Promise<void> {
  while (performance.now() < deadline) {
    if (payments && nextPayment >= payments.length) {
      if (!cycle) break;
      nextPayment = 0;
    }
    const headers = payments ? { 'payment-signature': payments[nextPayment++]! } : undefined;
    const start = performance.now();
    try {
      const res = await pool.request({ path, method: 'GET', headers });
      const text = await res.body.text();
      latencies.push(performance.now() - start);
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      if (res.statusCode !== 200 && !cycle) errors++;
      const took = TOOK.exec(text);
      if (took) serverTimes.push(Number(took[1]));
    } catch {
      errors++;
    }
    if (intervalMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, start + intervalMs - performance.now())));
  }
}

await Promise.all(Array.from({ length: connections }, worker));
await pool.close();
const round = (ms: number) => Math.round(ms * 1000) / 1000;
const quantile = (values: number[]) => {
  values.sort((a, b) => a - b);
  return (q: number) => round(values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN);
};
const at = quantile(latencies);
const server = quantile(serverTimes);
process.stdout.write(JSON.stringify({ requests: latencies.length, errors, statuses, p50: at(0.5), p99: at(0.99), p999: at(0.999), server_p50: server(0.5), server_p99: server(0.99) }) + '\n');
