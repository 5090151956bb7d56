/**
 * A host's request budget holds across threads: real worker threads share one window through
 * the SharedArrayBuffer the serving thread creates, as the poll workers do, and however their
 * takes interleave, no window of one second holds more starts than the host's limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { HOST_BUDGETS } from '../src/catalog/index.js';
import { HostBudgets } from '../src/ingest/budget.js';

const BUDGET = new URL('../src/ingest/budget.js', import.meta.url).href;

/** A worker that takes the host's budget `n` times and reports when each take returned (absolute ms). */
function taker(buffer: SharedArrayBuffer, host: string, n: number): Promise<number[]> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.module).then(async ({ HostBudgets }) => {
      const budgets = new HostBudgets(workerData.buffer);
      const at = [];
      for (let i = 0; i < workerData.n; i++) {
        await budgets.take(workerData.host);
        at.push(performance.timeOrigin + performance.now());
      }
      parentPort.postMessage(at);
    });`;
  const worker = new Worker(code, { eval: true, workerData: { module: BUDGET, buffer, host, n } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

test('three threads taking sec.gov’s budget together never start more than its limit in any second', { timeout: 30_000 }, async () => {
  const perSecond = HOST_BUDGETS['sec.gov']!.perSecond;
  const budgets = new HostBudgets();
  const starts = (await Promise.all([0, 1, 2].map(() => taker(budgets.buffer, 'sec.gov', perSecond)))).flat().sort((a, b) => a - b);
  assert.equal(starts.length, 3 * perSecond);
  for (let i = perSecond; i < starts.length; i++) {
    const span = starts[i]! - starts[i - perSecond]!;
    assert.ok(span >= 999, `starts ${i - perSecond} and ${i} are ${span.toFixed(1)} ms apart: ${perSecond + 1} in one second`);
  }
  const seconds = (starts.at(-1)! - starts[0]!) / 1000;
  assert.ok(seconds < 2.5, `not slower than the limit needs: ${seconds.toFixed(2)} s for ${starts.length}`);
});
