/**
 * The warm start's worker thread: reads each wire's snapshot, checks it against its checksum,
 * parses it, keeps the items the wire will keep in the order it keeps them (`keptForLoad`, same
 * clock), and hands the serving thread the file's bytes and their layout (transferred, not
 * copied), the kept items' facet values, and their term table: the one saved with them, less
 * the items dropped since (always the oldest: a snapshot is saved oldest first), or, without a
 * usable saved table, one built by tokenising them.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../log.js';
import { buildTermTable, frequentMinFor, keptTable, type TermTable } from '../search/term-table.js';
import { facetValues } from '../search/facet-index.js';
import { keptForLoad } from '../search/wire-index.js';
import { layoutOf, readTermTable, reusedBuffer, SnapshotReader } from './snapshot.js';
import type { WarmStartJob, WarmStartTable } from './warm-start.js';

// A file this thread finds missing or damaged, the serving thread reads and reports.
setLogLevel('error');
const { dataDir, now, wires, returns } = workerData as WarmStartJob;
const reader = new SnapshotReader();
/**
 * Files are read into buffers the serving thread gives back once it has sliced them: memory a
 * fresh process touches for the first time costs a page fault per page, about as much as
 * reading the file itself.
 */
const spare: ArrayBuffer[] = [];
const bufferOf = (size: number): Buffer => {
  for (let m = receiveMessageOnPort(returns); m; m = receiveMessageOnPort(returns)) spare.push(m.message as ArrayBuffer);
  const i = spare.findIndex((b) => b.byteLength >= size);
  return i === -1 ? Buffer.from(new ArrayBuffer(size)) : Buffer.from(spare.splice(i, 1)[0]!, 0, size);
};
/** Each wire's saved term table is read into this one buffer: only the table kept from it leaves the thread. */
const tableBufferOf = reusedBuffer();
for (const { id, options } of wires) {
  const read = reader.read(dataDir, id, bufferOf);
  const kept = read && keptForLoad(read.items, now, options);
  let table: TermTable | null = null;
  let rebuilt: string | undefined;
  if (read && kept) {
    const frequentMin = frequentMinFor(options.maxItems);
    const saved = readTermTable(dataDir, id, read.sha256, tableBufferOf);
    const from = read.items.length - kept.length;
    if ('missing' in saved) rebuilt = saved.missing;
    else if (saved.table.count !== read.items.length || saved.table.frequentMin !== frequentMin) rebuilt = 'saved for another size of wire';
    else if (!kept.every((item, i) => item === read.items[from + i])) rebuilt = 'items not saved oldest first';
    else table = keptTable(saved.table, from);
    table ??= buildTermTable(kept, frequentMin);
  }
  const layout = read?.spans ? layoutOf(read, kept ?? read.items) : null;
  // The kept items' facet values, with the table (the serving thread then need not decode their fields).
  const facets = table && kept ? facetValues(id, kept) : null;
  const message: WarmStartTable = { id, sha256: read?.sha256 ?? null, layout, table, facets, rebuilt };
  const buffers = [layout?.bytes, layout?.spans, layout?.published, table?.freq, table?.bits, table?.offsets, table?.slots, facets?.offsets, facets?.ids, facets?.numbers].map((a) => a?.buffer);
  parentPort!.postMessage(message, [...new Set(buffers.filter((b) => b !== undefined))] as ArrayBuffer[]);
}
