/**
 * Warm start: every wire filled from its snapshot before the service listens.
 *
 * Most of a wire's load is building its term structures (tokenising every title and summary).
 * A worker thread builds them (`TermTable`) while this thread parses the same snapshot and
 * stores the items, so the two halves of the work run on both cores. If the worker fails, or
 * its table does not fit, the table is built here: slower, never wrong.
 */
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import type { TermTable } from '../search/term-table.js';
import type { WireIndex, WireIndexOptions } from '../search/wire-index.js';
import { cleanTempFiles, loadWire } from './snapshot.js';

/** What the worker is asked: the wires in the order this thread loads them, and one clock. */
export interface WarmStartJob {
  dataDir: string;
  now: number;
  wires: { id: string; options: WireIndexOptions }[];
}

/** What it answers, once per wire: the table, or null when the snapshot is missing or unusable. */
export interface WarmStartTable {
  id: string;
  table: TermTable | null;
}

export async function loadSnapshots(dataDir: string, wires: Map<string, WireIndex>): Promise<void> {
  cleanTempFiles(dataDir);
  const now = Date.now();
  const job: WarmStartJob = { dataDir, now, wires: [...wires].map(([id, index]) => ({ id, options: index.options })) };
  const tables = tablesFromWorker(job);
  let total = 0;
  for (const [id, index] of wires) {
    const items = loadWire(dataDir, id);
    const table = await tables.get(id);
    if (!items) continue;
    index.load(items, now, table ?? undefined);
    total += index.size;
  }
  tables.stop();
  if (total) log.info('snapshot loaded', { items: total });
}

/** Per wire, a promise of the worker's table; undefined for every wire not answered once it fails. */
function tablesFromWorker(job: WarmStartJob): { get(id: string): Promise<TermTable | null | undefined>; stop(): void } {
  const pending = new Map<string, (t: TermTable | null | undefined) => void>();
  const promises = new Map(job.wires.map(({ id }) => [id, new Promise<TermTable | null | undefined>((resolve) => pending.set(id, resolve))]));
  const giveUp = (why: string) => {
    if (pending.size > 0) log.warn('warm start worker failed; building the remaining term tables here', { error: why });
    for (const resolve of pending.values()) resolve(undefined);
    pending.clear();
  };
  let worker: Worker | undefined;
  try {
    worker = new Worker(new URL('./warm-start-worker.js', import.meta.url), { workerData: job });
    worker.on('message', ({ id, table }: WarmStartTable) => {
      pending.get(id)?.(table);
      pending.delete(id);
    });
    worker.on('error', (err) => giveUp(String(err)));
    worker.on('exit', (code) => giveUp(`exited with code ${code}`));
  } catch (err) {
    giveUp(String(err));
  }
  return {
    get: (id) => promises.get(id) ?? Promise.resolve(undefined),
    stop: () => void worker?.terminate(),
  };
}
