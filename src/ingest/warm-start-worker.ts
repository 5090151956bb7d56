/**
 * The warm start's worker thread: reads each wire's snapshot, checks it against its checksum,
 * and hands the serving thread the file's bytes with the layout of the items the wire will keep,
 * in the order it keeps them (`keptPositions`, same clock), transferred, not copied; with them
 * their term table and facet values.
 *
 * The index's file saved beside the items (`readTermTable`) gives every item's publication
 * time, names and facet values, and the term table: then no line is parsed and no text
 * tokenised, only the lines scanned for where their parts lie. Without a usable one, each line
 * is parsed, and the table built by tokenising the kept items.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { setLogLevel } from '../log.js';
import { buildTermTable, frequentMinFor, keptTable, type TermTable } from '../search/term-table.js';
import { facetValues, pickFacets, type FacetValues } from '../search/facet-index.js';
import type { Item } from '../search/item.js';
import { keptForLoad, keptPositions, type WireIndexOptions } from '../search/wire-index.js';
import { itemsOf, layoutAt, readTermTable, reusedBuffer, savedItemsOf, SnapshotReader, type SnapshotFile, type SnapshotLayout } from './snapshot.js';
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
/** Each wire's saved index file is read into this one buffer: only what is kept from it leaves the thread. */
const tableBufferOf = reusedBuffer();

type Restored = Pick<WarmStartTable, 'layout' | 'table' | 'facets' | 'rebuilt'>;

/** A wire restored from its saved index file, or why not. */
function fromSaved(file: SnapshotFile, options: WireIndexOptions): Restored | string {
  const saved = file.version === 1 ? { missing: 'items saved in format 1' } : readTermTable(dataDir, file.wire, file.sha256, tableBufferOf);
  if ('missing' in saved) return saved.missing;
  if (saved.table.count !== file.count || saved.table.frequentMin !== frequentMinFor(options.maxItems)) return 'saved for another size of wire';
  const kept = keptPositions(saved.items.published, now, options);
  let layout: SnapshotLayout;
  try {
    layout = layoutAt(file, kept, saved.items);
  } catch (err) {
    return `lines do not scan: ${(err as Error).message}`;
  }
  // Facet values saved with other facet code are null: the serving thread works them out from the fields.
  const { facets } = saved.items;
  return { layout, table: keptTable(saved.table, kept), facets: facets && pickFacets(facets, kept) };
}

/**
 * A wire restored by parsing every line; null for the serving thread to read and report: a
 * malformed line, or a file of format 1, whose lines have no layout to hand over.
 */
function fromLines(file: SnapshotFile, options: WireIndexOptions, rebuilt: string | undefined): Restored | null {
  const items = file.version === 1 ? undefined : itemsOf(file, true);
  if (!items) return null;
  const kept = keptForLoad(items, now, options);
  // Repeats (an id or URL twice under one filter value): every item, for `WireIndex.load` to reconcile.
  const positionOf = new Map<Item, number>(items.map((item, p) => [item, p]));
  let layout: SnapshotLayout;
  try {
    layout = layoutAt(
      file,
      Int32Array.from(kept ?? items, (item) => positionOf.get(item)!),
      savedItemsOf(items),
    );
  } catch {
    return null;
  }
  if (!kept) return { layout, table: null, facets: null, rebuilt };
  const table: TermTable = buildTermTable(kept, frequentMinFor(options.maxItems));
  // The kept items' facet values, with the table (the serving thread then need not decode their fields).
  const facets: FacetValues | null = facetValues(file.wire, kept);
  return { layout, table, facets, rebuilt };
}

for (const { id, options } of wires) {
  const file = reader.file(dataDir, id, bufferOf);
  let restored: Restored | null = null;
  if (file) {
    const saved = fromSaved(file, options);
    restored = typeof saved === 'string' ? fromLines(file, options, saved) : saved;
  }
  const message: WarmStartTable = { id, sha256: file?.sha256 ?? null, layout: restored?.layout ?? null, table: restored?.table ?? null, facets: restored?.facets ?? null, rebuilt: restored?.rebuilt };
  const { layout, table, facets } = message;
  const buffers = [layout?.bytes, layout?.spans, layout?.published, table?.freq, table?.bits, table?.offsets, table?.slots, facets?.offsets, facets?.ids, facets?.numbers].map((a) => a?.buffer);
  parentPort!.postMessage(message, [...new Set(buffers.filter((b) => b !== undefined))] as ArrayBuffer[]);
}
