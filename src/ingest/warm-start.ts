/**
 * Warm start: every wire filled from its snapshot before the service listens.
 *
 * A worker thread reads each wire's file and checks it, and hands this thread the file's bytes
 * with where each kept item's parts lie (`SnapshotLayout`), the wire's term table and the
 * items' facet values: restored from the index file saved with them, or, without one, from
 * parsing every line (warm-start-worker.ts). This thread then only slices the bytes into the
 * items' strings and stores them, while the worker goes on to the next wire: the two run on
 * both cores. The worker starts first thing (`startWarmStart`), while this thread still sets
 * up the rest of the service. If the worker fails, or finds a file missing or damaged, this
 * thread reads the file itself (and says what is wrong with it), and so it does when a file's
 * header names other bytes than the worker read (saved again since): slower, never wrong.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { log } from '../log.js';
import type { FacetValues } from '../search/facet-index.js';
import type { Item } from '../search/item.js';
import type { TermTable } from '../search/term-table.js';
import type { WireIndex, WireIndexOptions } from '../search/wire-index.js';
import { cleanTempFiles, itemsFromLayout, SnapshotReader, snapshotBytes, statedChecksum, type SnapshotLayout } from './snapshot.js';

/** What the worker is asked: the wires in the order this thread loads them, and one clock. */
export interface WarmStartJob {
  dataDir: string;
  now: number;
  wires: { id: string; options: WireIndexOptions }[];
  /** Where this thread gives back a file's buffer once it has sliced it, for the next file. */
  returns: MessagePort;
}

/**
 * What it answers, once per wire: the checksum of the file it read; the file's bytes with the
 * layout of the items the wire keeps, oldest first (all of them in file order when some repeat
 * an id or URL, for `WireIndex.load` to reconcile; null when the file is missing, damaged or
 * of format 1: then this thread reads it); and the kept items' term table and facet values
 * (null when there are none to work out).
 */
export interface WarmStartTable {
  id: string;
  /** The checksum of the file it read. */
  sha256: string | null;
  layout: SnapshotLayout | null;
  table: TermTable | null;
  /** The kept items' facet values, with the table. */
  facets: FacetValues | null;
  /** Why the table was built by tokenising rather than taken from the snapshot (a restart that took longer). */
  rebuilt?: string;
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
  // Largest first: this thread stores a wire while the worker reads the next, so what is left
  // once the worker is done is storing the last wire, the smallest.
  const order = [...wires].map(([id, index]) => ({ id, index, bytes: snapshotBytes(dataDir, id) })).sort((a, b) => b.bytes - a.bytes);
  const tables = tablesFromWorker(
    dataDir,
    now,
    order.map(({ id, index }) => ({ id, options: index.options })),
  );
  return {
    async load() {
      cleanTempFiles(dataDir);
      const reader = new SnapshotReader();
      let total = 0;
      /** Wires whose text index came saved with the snapshot, and those indexed from their text. */
      const termTables = { saved: 0, built: 0 };
      for (const { id, index } of order) {
        const answer = await tables.get(id);
        let items: Item[] | undefined;
        let table: TermTable | undefined;
        let facets: FacetValues | null = null;
        // The worker may have read the file before this process held the data dir, while the
        // instance it replaces still saved: a file whose header names other bytes now is read here.
        if (answer?.layout && statedChecksum(dataDir, id) === answer.sha256) {
          items = itemsFromLayout(answer.layout);
          table = answer.table ?? undefined;
          facets = answer.facets;
          tables.giveBack(answer.layout.bytes.buffer as ArrayBuffer);
          if (answer.rebuilt && answer.rebuilt !== 'no saved table') log.info('term table rebuilt from the snapshot text', { wire: id, why: answer.rebuilt });
        } else items = reader.read(dataDir, id);
        if (!items) continue;
        index.load(items, now, table, facets);
        if (index.size > 0) termTables[table && !answer?.rebuilt ? 'saved' : 'built']++;
        total += index.size;
      }
      tables.stop();
      if (total) log.info('snapshot loaded', { items: total, term_tables: termTables });
      return wires;
    },
    stop: tables.stop,
  };
}

/** Per wire, a promise of the worker's answer; undefined for every wire not answered once it fails. */
function tablesFromWorker(dataDir: string, now: number, wires: WarmStartJob['wires']): { get(id: string): Promise<WarmStartTable | undefined>; giveBack(buffer: ArrayBuffer): void; stop(): void } {
  const pending = new Map<string, (t: WarmStartTable | undefined) => void>();
  const promises = new Map(wires.map(({ id }) => [id, new Promise<WarmStartTable | undefined>((resolve) => pending.set(id, resolve))]));
  const { port1, port2 } = new MessageChannel();
  const giveUp = (why: string) => {
    if (pending.size > 0) log.warn('warm start worker failed; checking the remaining snapshots and building their term tables here', { error: why });
    for (const resolve of pending.values()) resolve(undefined);
    pending.clear();
  };
  let worker: Worker | undefined;
  try {
    const job: WarmStartJob = { dataDir, now, wires, returns: port2 };
    worker = new Worker(new URL('./warm-start-worker.js', import.meta.url), { workerData: job, transferList: [port2] });
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
    giveBack: (buffer) => port1.postMessage(buffer, [buffer]),
    stop: () => {
      pending.clear();
      port1.close();
      void worker?.terminate();
    },
  };
}
