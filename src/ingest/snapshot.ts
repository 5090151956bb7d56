/**
 * Warm restart: the items of every wire are written to DATA_DIR periodically and on shutdown,
 * and read back at start, so a restarted service does not serve empty wires while sparse
 * sources wait for their next poll.
 *
 * One file per wire, `snapshots/<wire>.jsonl`: a header line (format, version, count and the
 * SHA-256 of the rest) and one item per line (see VERSION). Writes go to a temporary file that
 * is fsynced and renamed, so a crash leaves either the old or the new snapshot, never half of
 * one. A file that fails its checksum or does not parse is logged and ignored: a bad snapshot
 * costs a cold start, never a crash.
 *
 * Beside each, `snapshots/<wire>.terms`: what the wire's index holds of the saved items, read
 * off it: its term table (search/term-table.ts), and per item its publication time, source,
 * filter value, state and facet values. A warm restart then restores the index without
 * parsing a line or tokenising a title (see TERMS_FORMAT). It names the checksum of the items
 * file it describes: one that does not match is not used.
 *
 * Serialisation yields to the event loop between chunks so a save never stalls requests.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { log } from '../log.js';
import { PRIVATE_FILE_MODE, privateDir } from '../private-files.js';
import type { FacetValues } from '../search/facet-index.js';
import { dataOf, storedItem, summaryOf, titleOf, type CarriesFragments, type Fragments, type Item, type ItemData, type StoredItem } from '../search/item.js';
import type { SlotTermTable } from '../search/term-table.js';
import type { SavedIndex, WireIndex } from '../search/wire-index.js';

const FORMAT = 'wires-snapshot';
/**
 * 2: each line is the item's served JSON (its stored fragments, written as they are, so a
 * save decodes nothing) plus `id`, `ms` (publication, epoch ms) and `state`.
 * 1: each line an `Item`. Still read, so an upgrade keeps the items of the last save.
 */
const VERSION = 2;
const CHUNK = 1000;

interface Header {
  format: string;
  version: number;
  wire: string;
  count: number;
  savedAt: string;
  sha256: string;
}

export function snapshotDir(dataDir: string): string {
  return join(dataDir, 'snapshots');
}

/** The size of a wire's snapshot file (0 when there is none). */
export function snapshotBytes(dataDir: string, wire: string): number {
  return statSync(join(snapshotDir(dataDir), `${wire}.jsonl`), { throwIfNoEntry: false })?.size ?? 0;
}

/** A stored item as a version-2 line: joined from its fragments, without decoding them. */
function itemLine(i: StoredItem): string {
  return [i.jsonHead, i.jsonSummary, i.jsonData, ',"id":', JSON.stringify(i.id), ',"ms":', String(i.published), i.state === undefined ? '' : ',"state":' + JSON.stringify(i.state), '}'].join('');
}

const URL_KEY = Buffer.from(',"url":"');
const SOURCE_KEY = Buffer.from('","source":');
const MS_KEY = Buffer.from('","ms":');
const BACKSLASH = 0x5c;
const SUMMARY_KEY = Buffer.from(',"summary":');
const DATA_KEY = Buffer.from(',"data":');
const ID_KEY = Buffer.from(',"id":');

/**
 * An item read back from a version-2 line: its fragments are the line's own bytes, each decoded
 * into a string of its own (not a slice of the file's text, which would keep the whole file
 * alive for as long as one of its items is stored). The summary and the fields are decoded
 * only when asked for: the serving thread stores the fragments as they are, and only the term
 * table's worker reads the text.
 */
class SnapshotItem implements Item, CarriesFragments {
  constructor(
    readonly id: string,
    readonly url: string,
    readonly source: string,
    readonly filter: string,
    readonly published: number,
    readonly state: string | undefined,
    readonly fragments: Fragments,
  ) {}

  get title(): string {
    return titleOf(this.fragments.jsonHead);
  }

  get summary(): string {
    return summaryOf(this.fragments.jsonSummary);
  }

  get data(): ItemData | undefined {
    return dataOf(this.fragments.jsonData);
  }
}

/**
 * One version-2 line: `{"title":…,"published":"…"` (the head),
 * `,"summary":"…"`, `,"data":{…}` when stated, then `,"id":…,"ms":…` and `,"state":…`. A
 * quote inside a JSON string is escaped, so a key with its quotes cannot occur inside one:
 * the first `,"summary":` ends the head, and the last `,"id":` starts the tail (the fields
 * before it may have an `id` of their own).
 */
function fromLine(line: Buffer, lazy = false): Item {
  const { summaryAt, summaryEnd, idAt } = partsOf(line, 0, line.length);
  let head: { title?: unknown; url?: unknown; source?: unknown; category?: unknown };
  let fragments: Fragments;
  if (lazy) {
    // Read for another thread, which slices the strings it keeps: here only what choosing the
    // kept items needs is decoded, and the rest only if asked for (a term table to build).
    head = headFields(line, summaryAt);
    fragments = new LineFragments(line, summaryAt, summaryEnd, idAt);
  } else {
    const jsonHead = line.toString('utf8', 0, summaryAt);
    head = JSON.parse(jsonHead + '}') as typeof head;
    fragments = { jsonHead, jsonSummary: line.toString('utf8', summaryAt, summaryEnd), jsonData: summaryEnd === idAt ? '' : line.toString('utf8', summaryEnd, idAt) };
  }
  const tail = JSON.parse('{' + line.toString('utf8', idAt + 1)) as { id?: unknown; ms?: unknown; state?: unknown };
  const { title, url, source, category } = head;
  const { id, ms, state } = tail;
  if (
    typeof title !== 'string' ||
    typeof url !== 'string' ||
    typeof source !== 'string' ||
    typeof category !== 'string' ||
    typeof id !== 'string' ||
    typeof ms !== 'number' ||
    !(state === undefined || typeof state === 'string')
  )
    throw new Error('malformed line');
  return new SnapshotItem(id, url, source, category, ms, state, fragments);
}

/**
 * Where the parts of the line `buf[start … end - 1]` begin: its summary, its fields (or its
 * tail, when it has none) and its tail. Searched within the line only: a key missing from it
 * must not be found in the next one.
 */
function partsOf(buf: Buffer, start: number, end: number): { summaryAt: number; summaryEnd: number; idAt: number } {
  const summaryAt = buf.indexOf(SUMMARY_KEY, start);
  const idAt = buf.lastIndexOf(ID_KEY, end - ID_KEY.length);
  if (summaryAt === -1 || idAt < start || summaryAt >= idAt) throw new Error('malformed line');
  const dataAt = buf.indexOf(DATA_KEY, summaryAt);
  return { summaryAt: summaryAt - start, summaryEnd: (dataAt !== -1 && dataAt < idAt ? dataAt : idAt) - start, idAt: idAt - start };
}

const HEAD_KEYS = [',"url":', ',"source":', ',"category":', ',"published":'].map((k) => Buffer.from(k));

/** The head's url, source and category, each parsed from its own bytes (the title is left undecoded: a string placeholder). */
function headFields(line: Buffer, headEnd: number): { title: string; url: unknown; source: unknown; category: unknown } {
  const at = HEAD_KEYS.map((k) => line.indexOf(k));
  if (at.some((p, i) => p === -1 || p >= headEnd || (i > 0 && p < at[i - 1]!))) throw new Error('malformed line');
  const value = (i: number) => JSON.parse(line.toString('utf8', at[i]! + HEAD_KEYS[i]!.length, at[i + 1]!)) as unknown;
  return { title: '', url: value(0), source: value(1), category: value(2) };
}

/** A line's fragments, decoded from its bytes when read. */
class LineFragments implements Fragments {
  constructor(
    private readonly line: Buffer,
    private readonly summaryAt: number,
    private readonly summaryEnd: number,
    private readonly idAt: number,
  ) {}

  get jsonHead(): string {
    return this.line.toString('utf8', 0, this.summaryAt);
  }

  get jsonSummary(): string {
    return this.line.toString('utf8', this.summaryAt, this.summaryEnd);
  }

  get jsonData(): string {
    return this.summaryEnd === this.idAt ? '' : this.line.toString('utf8', this.summaryEnd, this.idAt);
  }
}

/**
 * What a warm start knows of each item of a snapshot, in file order, before it keeps any: its
 * publication time; its source, filter value and state (`nameIds`, three per item, into
 * `names`; a state of -1: none); and its facet values (null: the wire has none, or they are
 * worked out from the items' fields). Saved with the term table, or taken from parsed items.
 */
export interface SavedItems {
  published: Float64Array;
  names: string[];
  nameIds: Int32Array;
  facets: FacetValues | null;
}

/** The `SavedItems` of `items`. */
export function savedItemsOf(items: readonly Item[], facets: FacetValues | null = null): SavedItems {
  const values = new ItemValues(items.length);
  items.forEach((item, i) => values.add(i, item));
  return values.done(facets);
}

/** `SavedItems` taken item by item (a save takes each as it writes its line, between turns of the event loop). */
class ItemValues {
  private readonly ids = new Map<string, number>();
  private readonly published: Float64Array;
  private readonly nameIds: Int32Array;

  constructor(count: number) {
    this.published = new Float64Array(count);
    this.nameIds = new Int32Array(count * 3);
  }

  add(i: number, item: Item): void {
    this.published[i] = item.published;
    this.nameIds[i * 3] = this.id(item.source);
    this.nameIds[i * 3 + 1] = this.id(item.filter);
    this.nameIds[i * 3 + 2] = this.id(item.state);
  }

  done(facets: FacetValues | null): SavedItems {
    return { published: this.published, names: [...this.ids.keys()], nameIds: this.nameIds, facets };
  }

  private id(name: string | undefined): number {
    if (name === undefined) return -1;
    let k = this.ids.get(name);
    if (k === undefined) this.ids.set(name, (k = this.ids.size));
    return k;
  }
}

/**
 * A wire's snapshot as another thread read it: its bytes, and per item where each part lies
 * (LAYOUT numbers), so that this thread builds the items by slicing the bytes into strings,
 * without parsing a line (`itemsFromLayout`). Names (sources, filter values, states) come
 * decoded once.
 */
export interface SnapshotLayout {
  bytes: Uint8Array;
  spans: Int32Array;
  published: Float64Array;
  names: string[];
}

/** Per item: its line's start, summary, data (or tail), tail and end; its URL's and id's text (id -1: the URL; -2: parse the line); its source, filter value and state (-1: none) in `names`. */
const LAYOUT = 12;
const SAME_AS_URL = -1;
const ESCAPED = -2;

/**
 * The layout of the items of `file` at the positions `kept`, in that order, each line scanned
 * for where its parts begin (no line is parsed): a URL or id without escapes is its bytes
 * between its quotes; a line with an escaped one is parsed by the receiver. Throws on a line
 * without its keys, or a file of another count of lines than `saved` describes.
 */
export function layoutAt(file: SnapshotFile, kept: Int32Array, saved: SavedItems): SnapshotLayout {
  const { buf } = file;
  const count = saved.published.length;
  // Line p is starts[p] … starts[p + 1] - 2, then its newline (the last may have none).
  const starts = new Int32Array(count + 1);
  starts[0] = file.bodyStart;
  for (let p = 0; p < count; p++) {
    if (starts[p]! >= buf.length) throw new Error('item count mismatch');
    const newline = buf.indexOf(10, starts[p]!);
    starts[p + 1] = newline === -1 ? buf.length + 1 : newline + 1;
  }
  if (starts[count]! < buf.length) throw new Error('item count mismatch');
  const escaped = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (buf[i] === BACKSLASH) return true;
    return false;
  };
  const spans = new Int32Array(kept.length * LAYOUT);
  for (let k = 0; k < kept.length; k++) {
    const p = kept[k]!;
    const start = starts[p]!;
    const end = starts[p + 1]! - 1;
    const { summaryAt, summaryEnd, idAt } = partsOf(buf, start, end);
    const tail = start + idAt;
    // The keys cannot occur inside a JSON string (its quotes are escaped): each is the field's.
    const url = buf.indexOf(URL_KEY, start) + URL_KEY.length;
    const urlEnd = buf.indexOf(SOURCE_KEY, url);
    const idQuote = tail + ID_KEY.length;
    const idEnd = buf.indexOf(MS_KEY, idQuote);
    if (url < start + URL_KEY.length || urlEnd === -1 || urlEnd > start + summaryAt || idEnd === -1 || idEnd > end) throw new Error('malformed line');
    let id = idQuote + 1;
    if (escaped(url, urlEnd) || escaped(id, idEnd)) id = ESCAPED;
    else if (idEnd - id === urlEnd - url && buf.compare(buf, url, urlEnd, id, idEnd) === 0) id = SAME_AS_URL;
    const o = k * LAYOUT;
    spans[o] = start;
    spans[o + 1] = start + summaryAt;
    spans[o + 2] = start + summaryEnd;
    spans[o + 3] = tail;
    spans[o + 4] = end;
    spans[o + 5] = url;
    spans[o + 6] = urlEnd;
    spans[o + 7] = id;
    spans[o + 8] = idEnd;
    spans.set(saved.nameIds.subarray(p * 3, p * 3 + 3), o + 9);
  }
  return { bytes: buf, spans, published: Float64Array.from(kept, (p) => saved.published[p]!), names: saved.names };
}

/**
 * The items of a layout, built from its bytes (see `layoutAt`): stored items already, under
 * the sequence numbers an empty `WireIndex` gives them as it loads them, in this order.
 */
export function itemsFromLayout({ bytes, spans, published, names }: SnapshotLayout): Item[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const items: Item[] = new Array(published.length);
  const text = (from: number, to: number) => buf.toString('utf8', from, to);
  for (let k = 0, o = 0; k < items.length; k++, o += LAYOUT) {
    const start = spans[o]!;
    const id = spans[o + 7]!;
    if (id === ESCAPED) {
      items[k] = fromLine(buf.subarray(start, spans[o + 4]!));
      continue;
    }
    const summary = spans[o + 1]!;
    const data = spans[o + 2]!;
    const tail = spans[o + 3]!;
    const url = spans[o + 5]!;
    const urlEnd = spans[o + 6]!;
    const fragments: Fragments = { jsonHead: text(start, summary), jsonSummary: text(summary, data), jsonData: data === tail ? '' : text(data, tail) };
    const u = text(url, urlEnd);
    const state = spans[o + 11]!;
    items[k] = storedItem(id === SAME_AS_URL ? u : text(id, spans[o + 8]!), u, names[spans[o + 9]!]!, names[spans[o + 10]!]!, published[k]!, state < 0 ? undefined : names[state], fragments, k + 1);
  }
  return items;
}

/**
 * Saves a wire's items, oldest first as `WireIndex.items()` gives them, and with them what its
 * index holds of them (`WireIndex.savedIndex()`, taken at the same moment: item i is position i).
 */
export async function saveWire(dataDir: string, wire: string, items: readonly StoredItem[], saved?: SavedIndex): Promise<void> {
  const dir = snapshotDir(dataDir);
  privateDir(dir);
  const hash = createHash('sha256');
  const chunks: string[] = [];
  const values = new ItemValues(items.length);
  for (let i = 0; i < items.length; i += CHUNK) {
    let text = '';
    const end = Math.min(items.length, i + CHUNK);
    for (let j = i; j < end; j++) {
      text += itemLine(items[j]!) + '\n';
      values.add(j, items[j]!);
    }
    hash.update(text);
    chunks.push(text);
    if (end < items.length) await yieldToLoop();
  }
  const header: Header = { format: FORMAT, version: VERSION, wire, count: items.length, savedAt: new Date().toISOString(), sha256: hash.digest('hex') };
  await writeAtomically(join(dir, `${wire}.jsonl`), [JSON.stringify(header) + '\n', ...chunks]);
  // After the items: a crash between the two renames leaves a file naming the old items'
  // checksum, which the next start does not use.
  if (saved && saved.table.count === items.length) await writeAtomically(join(dir, `${wire}.terms`), termsFile(wire, header.sha256, saved.table, values.done(saved.facets)));
}

/**
 * Saves a wire as its index holds it: its items, and what its index holds of them, copied in
 * steps between turns of the event loop (a 20,000-item wire's table at its cap is 35-45 ms of
 * copying). A copy the index changed during is taken again with the items, twice at most;
 * then the items are saved without it (the file left from an earlier save names other items
 * and is not used: a restart indexes that wire's text).
 */
export async function saveIndex(dataDir: string, wire: string, index: WireIndex): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const items = index.items();
    const steps = index.savedSteps();
    let step = steps.next();
    while (!step.done) {
      await yieldToLoop();
      step = steps.next();
    }
    if (step.value || attempt === 2) return saveWire(dataDir, wire, items, step.value ?? undefined);
  }
}

/** Writes a file in full under a temporary name, fsyncs it and renames it into place. */
async function writeAtomically(finalPath: string, parts: readonly (string | Uint8Array)[]): Promise<void> {
  const tmpPath = `${finalPath}.${process.pid}.tmp`;
  const fh = await open(tmpPath, 'w', PRIVATE_FILE_MODE);
  try {
    await fh.chmod(PRIVATE_FILE_MODE);
    for (const part of parts) await (typeof part === 'string' ? fh.write(part) : fh.write(part));
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmpPath).catch(() => {});
    throw err;
  }
  await fh.close();
  await rename(tmpPath, finalPath);
}

/**
 * A term table file: a header line, then typed arrays as they lie in memory (the header names
 * the byte order), then a JSON object of texts. The arrays, in `TERMS_ARRAYS` order: per saved
 * item its publication time and `min` facet number, the table's `freq`, `bits`, `offsets`,
 * `slots` and `position`, then per item its three name ids and its tags' offsets, and the tag
 * ids; the texts: the table's terms, the names and the tags (`SavedItems`). The header holds
 * each array's length, the SHA-256 of everything after it, and the digest of the facet code
 * the facet values were worked out with.
 */
const TERMS_FORMAT = 'wires-terms';
/** 2: with the items' `SavedItems`. 1 (the table alone) is not read: the text is indexed again, once. */
const TERMS_VERSION = 2;
/** 8-byte arrays first: every array is then aligned where the body is. */
const TERMS_ARRAYS = [
  ['published', Float64Array],
  ['numbers', Float64Array],
  ['freq', Int32Array],
  ['bits', Uint32Array],
  ['offsets', Int32Array],
  ['slots', Int32Array],
  ['position', Int32Array],
  ['names', Int32Array],
  ['tag_offsets', Int32Array],
  ['tag_ids', Int32Array],
] as const;
type TermsArray = (typeof TERMS_ARRAYS)[number][0];

interface TermsHeader {
  format: string;
  version: number;
  wire: string;
  /** The checksum of the items file this table indexes (its header's `sha256`). */
  items_sha256: string;
  endian: string;
  count: number;
  frequent_min: number;
  words: number;
  /** The digest of the facet code (`facetCode`) the facet values were worked out with. */
  facets: string;
  lengths: Record<TermsArray, number>;
  sha256: string;
}

interface TermsTexts {
  terms: string[];
  names: string[];
  tags: string[];
}

/**
 * A digest of catalog/facets.ts, where an article's fields become its facet values: values saved
 * by a build that works them out otherwise would filter wrongly, and are worked out again.
 */
let facetDigest: string | undefined;
function facetCode(): string {
  return (facetDigest ??= createHash('sha256')
    .update(readFileSync(new URL('../catalog/facets.js', import.meta.url)))
    .digest('hex'));
}

function termsFile(wire: string, itemsSha256: string, t: SlotTermTable, saved: SavedItems): Uint8Array[] {
  const none = new Int32Array(0);
  const f = saved.facets;
  const arrays: Record<TermsArray, Float64Array | Int32Array | Uint32Array> = {
    published: saved.published,
    numbers: f?.numbers ?? new Float64Array(0),
    freq: t.freq,
    bits: t.bits,
    offsets: t.offsets,
    slots: t.slots,
    position: t.position,
    names: saved.nameIds,
    tag_offsets: f?.offsets ?? none,
    tag_ids: f?.ids ?? none,
  };
  const texts: TermsTexts = { terms: t.terms, names: saved.names, tags: f?.tags ?? [] };
  const body = [...TERMS_ARRAYS.map(([name]) => new Uint8Array(arrays[name].buffer, arrays[name].byteOffset, arrays[name].byteLength)), Buffer.from(JSON.stringify(texts))];
  const hash = createHash('sha256');
  for (const part of body) hash.update(part);
  const header: TermsHeader = {
    format: TERMS_FORMAT,
    version: TERMS_VERSION,
    wire,
    items_sha256: itemsSha256,
    endian: endianness(),
    count: t.count,
    frequent_min: t.frequentMin,
    words: t.words,
    facets: facetCode(),
    lengths: Object.fromEntries(TERMS_ARRAYS.map(([name]) => [name, arrays[name].length])) as Record<TermsArray, number>,
    sha256: hash.digest('hex'),
  };
  return [Buffer.from(JSON.stringify(header) + '\n'), ...body];
}

/** Whether a table's arrays have the lengths its terms imply (a bitset pair per frequent term, two lists per rare one), and name only its slots and positions. */
function fitsLayout(t: SlotTermTable): boolean {
  let frequent = 0;
  for (const f of t.freq) if (f >= t.frequentMin) frequent++;
  const rare = t.terms.length - frequent;
  return (
    t.terms.length === t.freq.length &&
    t.bits.length === frequent * 2 * t.words &&
    t.offsets.length === rare * 2 + 1 &&
    t.offsets[rare * 2] === t.slots.length &&
    t.position.length <= t.words * 32 &&
    t.slots.every((slot) => slot >= 0 && slot < t.position.length) &&
    t.position.every((p) => p >= -1 && p < t.count)
  );
}

/** Whether the items' values fit: one of each per item, every id naming a text. */
function fitsItems(s: SavedItems, count: number): boolean {
  const { published, names, nameIds, facets: f } = s;
  if (published.length !== count || nameIds.length !== count * 3 || !published.every(Number.isFinite)) return false;
  for (let i = 0; i < nameIds.length; i++) if (nameIds[i]! < (i % 3 === 2 ? -1 : 0) || nameIds[i]! >= names.length) return false;
  if (!f) return true;
  if (f.numbers.length !== count || f.offsets.length !== count + 1 || f.offsets[0] !== 0 || f.offsets[count] !== f.ids.length) return false;
  for (let i = 0; i < count; i++) if (f.offsets[i + 1]! < f.offsets[i]!) return false;
  return f.ids.every((id) => id >= 0 && id < f.tags.length);
}

/**
 * What a wire's index held of its items file (by its checksum): its term table and the items'
 * values; or why there is none to use: missing, written for other items, or damaged. Either
 * way the caller works them out itself. The file is read into the buffer `into` gives, and the
 * arrays are views of it, not copies: valid until that buffer is written again. A warm start
 * reads every wire's file into one buffer (`reusedBuffer`), where a fresh one per file would
 * touch fresh memory twice. Facet values saved with other facet code come back as null.
 */
export function readTermTable(dataDir: string, wire: string, itemsSha256: string, into: (size: number) => Buffer): { table: SlotTermTable; items: SavedItems } | { missing: string } {
  let buf: Buffer;
  try {
    buf = readInto(join(snapshotDir(dataDir), `${wire}.terms`), into);
  } catch (err) {
    return { missing: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no saved table' : String(err) };
  }
  try {
    const newline = buf.indexOf(10);
    if (newline === -1) throw new Error('no header line');
    const h = JSON.parse(buf.toString('utf8', 0, newline)) as TermsHeader;
    if (h.format !== TERMS_FORMAT || h.wire !== wire) throw new Error('unknown format');
    if (h.version !== TERMS_VERSION) return { missing: `saved in format ${h.version}` };
    if (h.items_sha256 !== itemsSha256) return { missing: 'saved for other items' };
    if (h.endian !== endianness()) return { missing: `saved in ${h.endian} byte order` };
    let body = buf.subarray(newline + 1);
    if (createHash('sha256').update(body).digest('hex') !== h.sha256) throw new Error('checksum mismatch');
    // The header is outside the checksum: its lengths must fit the bytes before anything is allocated for them.
    const lengths = TERMS_ARRAYS.map(([name]) => h.lengths?.[name]);
    if (!lengths.every((n) => Number.isSafeInteger(n) && n! >= 0) || TERMS_ARRAYS.reduce((sum, [, Ctor], i) => sum + lengths[i]! * Ctor.BYTES_PER_ELEMENT, 0) > body.length) {
      throw new Error('lengths do not match');
    }
    // Views need the arrays aligned: the body is moved back over the header, parsed by now.
    const misaligned = body.byteOffset % 8;
    if (misaligned) body = buf.copyWithin(newline + 1 - misaligned, newline + 1).subarray(newline + 1 - misaligned, buf.length - misaligned);
    let at = 0;
    const a = {} as Record<TermsArray, Float64Array | Int32Array | Uint32Array>;
    TERMS_ARRAYS.forEach(([name, Ctor], i) => {
      a[name] = new Ctor(body.buffer as ArrayBuffer, body.byteOffset + at, lengths[i]!);
      at += a[name].byteLength;
    });
    const texts = JSON.parse(body.toString('utf8', at)) as TermsTexts;
    if (![texts.terms, texts.names, texts.tags].every(Array.isArray)) throw new Error('lengths do not match');
    const table: SlotTermTable = {
      count: h.count,
      frequentMin: h.frequent_min,
      terms: texts.terms,
      freq: a.freq as Int32Array,
      words: h.words,
      bits: a.bits as Uint32Array,
      offsets: a.offsets as Int32Array,
      slots: a.slots as Int32Array,
      position: a.position as Int32Array,
    };
    const facets = a.tag_offsets.length === 0 ? null : { tags: texts.tags, offsets: a.tag_offsets as Int32Array, ids: a.tag_ids as Int32Array, numbers: a.numbers as Float64Array };
    const items: SavedItems = { published: a.published as Float64Array, names: texts.names, nameIds: a.names as Int32Array, facets };
    if (!fitsLayout(table) || !fitsItems(items, h.count)) throw new Error('lengths do not match');
    if (h.facets !== facetCode()) items.facets = null;
    return { table, items };
  } catch (err) {
    return { missing: `damaged: ${(err as Error).message}` };
  }
}

/** The checksum a wire's snapshot states in its header line (null: missing or unreadable), without reading the rest. */
export function statedChecksum(dataDir: string, wire: string): string | null {
  try {
    const fd = openSync(join(snapshotDir(dataDir), `${wire}.jsonl`), 'r');
    try {
      const head = Buffer.alloc(1024);
      const n = readSync(fd, head, 0, head.length, 0);
      const newline = head.subarray(0, n).indexOf(10);
      return newline === -1 ? null : ((JSON.parse(head.toString('utf8', 0, newline)) as Header).sha256 ?? null);
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

/** Reads one wire's snapshot; undefined (and a log line) when it is missing, corrupt or partial. */
export function loadWire(dataDir: string, wire: string): Item[] | undefined {
  return new SnapshotReader().read(dataDir, wire);
}

/** A snapshot file as read, checked against the checksum its header states. */
export interface SnapshotFile {
  wire: string;
  path: string;
  /** The file's bytes. */
  buf: Buffer;
  /** Where the first item's line starts. */
  bodyStart: number;
  version: number;
  count: number;
  sha256: string;
}

/**
 * Reads snapshots one after another into one buffer that grows to the largest, so a warm start
 * touches fresh memory once rather than once per file (every string of an item is decoded into
 * a copy of its own, so the buffer is free again once a file is read).
 */
export class SnapshotReader {
  private readonly scratch = reusedBuffer();

  /** One wire's snapshot, its items parsed; undefined (and a log line) when it is missing, corrupt or partial. */
  read(dataDir: string, wire: string): Item[] | undefined {
    const file = this.file(dataDir, wire);
    return file && itemsOf(file);
  }

  /**
   * One wire's snapshot file, checked against the checksum its header states; undefined (and a
   * log line) when it is missing or corrupt. `into`: read it into the buffer it gives (one the
   * caller may hand to another thread).
   */
  file(dataDir: string, wire: string, into = this.scratch): SnapshotFile | undefined {
    const path = join(snapshotDir(dataDir), `${wire}.jsonl`);
    let buf: Buffer;
    try {
      buf = readInto(path, into);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('snapshot unreadable, ignored', { wire, error: String(err) });
      return undefined;
    }
    const newline = buf.indexOf(10);
    try {
      if (newline === -1) throw new Error('no header line');
      const header = JSON.parse(buf.toString('utf8', 0, newline)) as Header;
      if (header.format !== FORMAT || (header.version !== 1 && header.version !== VERSION) || header.wire !== wire || !Number.isSafeInteger(header.count)) throw new Error('unknown format');
      // The bytes, not their text: hashing a string encodes it again first.
      if (
        createHash('sha256')
          .update(buf.subarray(newline + 1))
          .digest('hex') !== header.sha256
      )
        throw new Error('checksum mismatch');
      return { wire, path, buf, bodyStart: newline + 1, version: header.version, count: header.count, sha256: header.sha256 };
    } catch (err) {
      log.warn('snapshot corrupt or partial, ignored', { wire, path, error: (err as Error).message });
      return undefined;
    }
  }
}

/**
 * The items of a snapshot file, each line parsed and checked; undefined (and a log line) when
 * one is malformed, or they are not as many as its header states. `lazy`: a version-2 line's
 * title, summary and fields are decoded only when read (another thread slices the strings it
 * keeps from the bytes).
 */
export function itemsOf(file: SnapshotFile, lazy = false): Item[] | undefined {
  const { buf, version, count } = file;
  try {
    const items: unknown[] = [];
    for (let start = file.bodyStart; start < buf.length; ) {
      let end = buf.indexOf(10, start);
      if (end === -1) end = buf.length;
      if (items.length === count) throw new Error('item count mismatch');
      items.push(version === 1 ? JSON.parse(buf.toString('utf8', start, end)) : fromLine(buf.subarray(start, end), lazy));
      start = end + 1;
    }
    if (items.length !== count) throw new Error('item count mismatch');
    // A version-2 line was checked as it was read.
    return items.filter((i): i is Item => i instanceof SnapshotItem || isItem(i));
  } catch (err) {
    log.warn('snapshot corrupt or partial, ignored', { wire: file.wire, path: file.path, error: (err as Error).message });
    return undefined;
  }
}

/**
 * One buffer, grown to the largest size asked for, given for each read in turn (each read
 * overwrites the last): reading files one after another touches fresh memory once.
 */
export function reusedBuffer(): (size: number) => Buffer {
  let buf = Buffer.alloc(0);
  return (size) => (buf.length >= size ? buf : (buf = Buffer.allocUnsafeSlow(size))).subarray(0, size);
}

/** Reads a file into the buffer `into` gives for its size; the bytes read. */
function readInto(path: string, into: (size: number) => Buffer): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const target = into(size);
    let length = 0;
    for (let n = -1; length < size && n !== 0; length += n) n = readSync(fd, target, length, size - length, length);
    return target.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

function isItem(x: unknown): x is Item {
  const i = x as Item;
  return (
    typeof i === 'object' &&
    i !== null &&
    typeof i.id === 'string' &&
    typeof i.title === 'string' &&
    typeof i.url === 'string' &&
    typeof i.source === 'string' &&
    typeof i.filter === 'string' &&
    Number.isFinite(i.published) &&
    typeof i.summary === 'string' &&
    (i.data === undefined || (typeof i.data === 'object' && i.data !== null && !Array.isArray(i.data)))
  );
}

/** Removes temporary files a crash during a save may have left. */
export function cleanTempFiles(dataDir: string): void {
  const dir = snapshotDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.endsWith('.tmp')) void unlink(join(dir, name)).catch(() => {});
}
