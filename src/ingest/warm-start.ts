/**
 * Warm start: every wire filled from its snapshot before the service listens.
 *
 * Most of a wire's load is checking its file and building its term structures (tokenising
 * every title and summary). A worker thread does both (`TermTable`) while this thread parses
 * the same snapshot and stores the items, so the two halves of the work run on both cores. The
 * worker starts first thing (`startWarmStart`), while this thread still sets up the rest of
 * the service. If the worker fails, or read another version of a file, or its table does not
 * fit, the file is checked and the table built here: slower, never wrong.
 */
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import type { TermTable } from '../search/term-table.js';
import type { WireIndex, WireIndexOptions } from '../search/wire-index.js';
import { cleanTempFiles, SnapshotReader } from './snapshot.js';

/** What the worker is asked: the wires in the order this thread loads them, and one clock. */
export interface WarmStartJob {
  dataDir: string;
  now: number;
  wires: { id: string; options: WireIndexOptions }[];
}

/**
 * What it answers, once per wire: the checksum of the file it read and found intact (null when
 * missing or refused), and the table of its kept items (null when there is none to build).
 */
export interface WarmStartTable {
  id: string;
  sha256: string | null;
  table: TermTable | null;
}

export interface WarmStart {
  /** Fills the wires; call once the data dir is this process's (its temporary files are removed). */
  load(): Promise<Map<string, WireIndex>>;
  /** Stops the worker (a start that fails before loading). */
  stop(): void;
}

/** Starts reading the snapshots into `wires` (empty indexes) at once, in a worker thread. */
export function startWarmStart(dataDir: string, wires: Map<string, WireIndex>): WarmStart {
  const now = Date.now();
  const tables = tablesFromWorker({ dataDir, now, wires: [...wires].map(([id, index]) => ({ id, options: index.options })) });
  return {
    async load() {
      cleanTempFiles(dataDir);
      const reader = new SnapshotReader();
      let total = 0;
      for (const [id, index] of wires) {
        const read = reader.read(dataDir, id, false);
        const answer = await tables.get(id);
        let items = read?.items;
        // Bytes the worker did not find intact (or did not read: it failed, or a save replaced
        // the file between the two reads) are checked here, and that check decides.
        const vouched = read !== undefined && answer !== undefined && answer.sha256 === read.sha256;
        if (read && !vouched) items = reader.read(dataDir, id, true)?.items;
        if (!items) continue;
        index.load(items, now, vouched ? (answer.table ?? undefined) : undefined);
        total += index.size;
      }
      tables.stop();
      if (total) log.info('snapshot loaded', { items: total });
      return wires;
    },
    stop: tables.stop,
  };
}

/** Per wire, a promise of the worker's answer; undefined for every wire not answered once it fails. */
function tablesFromWorker(job: WarmStartJob): { get(id: string): Promise<WarmStartTable | undefined>; stop(): void } {
  const pending = new Map<string, (t: WarmStartTable | undefined) => void>();
  const promises = new Map(job.wires.map(({ id }) => [id, new Promise<WarmStartTable | undefined>((resolve) => pending.set(id, resolve))]));
  const giveUp = (why: string) => {
    if (pending.size > 0) log.warn('warm start worker failed; checking the remaining snapshots and building their term tables here', { error: why });
    for (const resolve of pending.values()) resolve(undefined);
    pending.clear();
  };
  let worker: Worker | undefined;
  try {
    worker = new Worker(new URL('./warm-start-worker.js', import.meta.url), { workerData: job });
    worker.on('message', (answer: WarmStartTable) => {
      pending.get(answer.id)?.(answer);
      pending.delete(answer.id);
    });
    worker.on('error', (err) => giveUp(String(err)));
    worker.on('exit', (code) => giveUp(`exited with code ${code}`));
  } catch (err) {
    giveUp(String(err));
  }
  return {
    get: (id) => promises.get(id) ?? Promise.resolve(undefined),
    stop: () => {
      pending.clear();
      void worker?.terminate();
    },
  };
}
