/**
 * The warm start's worker thread: reads each wire's snapshot as the serving thread does, checks
 * it against its checksum (which the serving thread then need not do), keeps the same items in
 * the same order (`keptForLoad`, same clock) and builds their term table. The table's typed
 * arrays are transferred, not copied.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../log.js';
import { buildTermTable, frequentMinFor } from '../search/term-table.js';
import { keptForLoad } from '../search/wire-index.js';
import { SnapshotReader } from './snapshot.js';
import type { WarmStartJob, WarmStartTable } from './warm-start.js';

// The serving thread reads the same files and reports what is wrong with them.
setLogLevel('error');
const { dataDir, now, wires } = workerData as WarmStartJob;
const reader = new SnapshotReader();
for (const { id, options } of wires) {
  const read = reader.read(dataDir, id, true);
  const kept = read && keptForLoad(read.items, now, options);
  const table = kept ? buildTermTable(kept, frequentMinFor(options.maxItems)) : null;
  const message: WarmStartTable = { id, sha256: read?.sha256 ?? null, table };
  parentPort!.postMessage(message, table ? ([table.freq.buffer, table.bits.buffer, table.offsets.buffer, table.slots.buffer] as ArrayBuffer[]) : []);
}
