/**
 * How long a thread waits for a CPU while it is runnable: the probe behind docs/benchmarks.md's
 * remark that a serving thread sharing its core waits behind other threads for whole
 * scheduler time slices.
 *
 *   node dist/bench/schedstat.js <pid> [seconds=10] [tid=pid]
 *
 * Run it beside a benchmark (for example `BENCH_PIN=shared npm run bench:pay-latency`, whose
 * serving thread is the main thread of its process). It reads
 * `/proc/<pid>/task/<tid>/schedstat` (time on CPU, time runnable but waiting, in ns) every
 * 5 ms and reports, over those windows, how often and how long the thread waited.
 */
import { readFileSync } from 'node:fs';

const [pidText, secondsText = '10', tidText = pidText] = process.argv.slice(2);
if (!pidText || !/^\d+$/.test(pidText)) {
  console.error('usage: node dist/bench/schedstat.js <pid> [seconds=10] [tid=pid]');
  process.exit(2);
}
const path = `/proc/${pidText}/task/${tidText}/schedstat`;
const WINDOW_MS = 5;

function read(): { run: number; wait: number } | null {
  try {
    const [run, wait] = readFileSync(path, 'utf8').split(' ').map(Number);
    return { run: run!, wait: wait! };
  } catch {
    return null; // the process has exited
  }
}

const waits: number[] = [];
let last = read();
if (!last) {
  console.error(`cannot read ${path}`);
  process.exit(1);
}
const end = Date.now() + Number(secondsText) * 1000;
const timer = setInterval(() => {
  const now = read();
  if (!now || Date.now() > end) {
    clearInterval(timer);
    report();
    return;
  }
  waits.push((now.wait - last!.wait) / 1e6);
  last = now;
}, WINDOW_MS);

function report(): void {
  const sorted = [...waits].sort((a, b) => a - b);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  const over = (ms: number) => waits.filter((w) => w > ms).length;
  console.log(`${path}: ${waits.length} windows of ${WINDOW_MS} ms`);
  console.log(`runnable but waiting per window: p50 ${q(0.5).toFixed(3)} ms, p99 ${q(0.99).toFixed(3)} ms, max ${(sorted.at(-1) ?? 0).toFixed(3)} ms`);
  console.log(`windows with more than 1 ms of waiting: ${over(1)} (${((100 * over(1)) / Math.max(1, waits.length)).toFixed(1)} %)`);
}
