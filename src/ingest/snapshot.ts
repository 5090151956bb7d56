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
 * Beside each, `snapshots/<wire>.terms`: the wire's term table (search/term-table.ts) over
 * the saved items, read off the index, so that a warm restart restores the text index
 * instead of tokenising every title and summary again (see TERMS_FORMAT). It names the
 * checksum of the items file it indexes: a table that does not match is not used.
 *
 * Serialisation yields to the event loop between chunks so a save never stalls requests.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { log } from '../log.js';
import { PRIVATE_FILE_MODE, privateDir } from '../private-files.js';
import type { CarriesFragments, Fragments, Item, ItemData, StoredItem } from '../search/item.js';
import type { SlotTermTable } from '../search/term-table.js';
import type { WireIndex } from '../search/wire-index.js';

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

const TITLE_KEY = Buffer.from('{"title":');
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
    const { jsonHead } = this.fragments;
    return JSON.parse(jsonHead.slice(TITLE_KEY.length, jsonHead.indexOf(',"url":', TITLE_KEY.length))) as string;
  }

  get summary(): string {
    return JSON.parse(this.fragments.jsonSummary.slice(SUMMARY_KEY.length)) as string;
  }

  get data(): ItemData | undefined {
    const { jsonData } = this.fragments;
    return jsonData === '' ? undefined : (JSON.parse(jsonData.slice(DATA_KEY.length)) as ItemData);
  }
}

/**
 * One version-2 line: `{"title":…,"published":"…"` (the head),
 * `,"summary":"…"`, `,"data":{…}` when stated, then `,"id":…,"ms":…` and `,"state":…`. A
 * quote inside a JSON string is escaped, so a key with its quotes cannot occur inside one:
 * the first `,"summary":` ends the head, and the last `,"id":` starts the tail (the fields
 * before it may have an `id` of their own).
 */
function fromLine(line: Buffer, spans?: Int32Array, at = 0, start = 0): Item {
  // Searched within the line only: a key missing from it must not be found in the next one.
  const summaryAt = line.indexOf(SUMMARY_KEY);
  const idAt = line.lastIndexOf(ID_KEY);
  if (summaryAt === -1 || summaryAt >= idAt) throw new Error('malformed line');
  const dataAt = line.indexOf(DATA_KEY, summaryAt);
  const summaryEnd = dataAt !== -1 && dataAt < idAt ? dataAt : idAt;
  let head: { title?: unknown; url?: unknown; source?: unknown; category?: unknown };
  let fragments: Fragments;
  if (spans) {
    // Read for another thread, which slices the strings it keeps: here only what choosing the
    // kept items needs is decoded, and the rest only if asked for (a term table to build).
    spans[at] = start;
    spans[at + 1] = start + summaryAt;
    spans[at + 2] = start + summaryEnd;
    spans[at + 3] = start + idAt;
    spans[at + 4] = start + line.length;
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
 * A wire's snapshot as another thread read and parsed it: its bytes, and per item where each
 * part lies (LAYOUT numbers), so that this thread builds the items by slicing the bytes into
 * strings, without parsing a line (`itemsFromLayout`). Names (sources, filter values, states)
 * come decoded once.
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
 * The layout of `items` (read with `spans` by `SnapshotReader.read`; all of them, or the ones a
 * wire keeps): a URL or id without escapes is its bytes between its quotes; a line with an
 * escaped one is parsed again by the receiver.
 */
export function layoutOf(read: ReadSnapshot, items: readonly Item[]): SnapshotLayout {
  const { bytes, spans: lines, items: all } = read;
  if (!bytes || !lines) throw new Error('read without spans');
  // Kept items are the newest, the end of the file (saved oldest first); else each is looked up.
  const first = all.length - items.length;
  const lineOf = items.every((item, k) => item === all[first + k]) ? null : new Map(all.map((item, i) => [item, i]));
  const names = new Map<string, number>();
  const name = (n: string | undefined) => {
    if (n === undefined) return -1;
    let k = names.get(n);
    if (k === undefined) names.set(n, (k = names.size));
    return k;
  };
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const escaped = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (buf[i] === BACKSLASH) return true;
    return false;
  };
  const spans = new Int32Array(items.length * LAYOUT);
  const published = new Float64Array(items.length);
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    const at = (lineOf ? lineOf.get(item)! : first + k) * 5;
    const start = lines[at]!;
    const tail = lines[at + 3]!;
    // The keys cannot occur inside a JSON string (its quotes are escaped): each is the field's.
    const url = buf.indexOf(URL_KEY, start) + URL_KEY.length;
    const urlEnd = buf.indexOf(SOURCE_KEY, url);
    const idQuote = tail + ID_KEY.length;
    const idEnd = buf.indexOf(MS_KEY, idQuote);
    let id = idQuote + 1;
    if (escaped(url, urlEnd) || escaped(id, idEnd)) id = ESCAPED;
    else if (idEnd - id === urlEnd - url && buf.compare(buf, url, urlEnd, id, idEnd) === 0) id = SAME_AS_URL;
    const o = k * LAYOUT;
    spans[o] = start;
    spans[o + 1] = lines[at + 1]!;
    spans[o + 2] = lines[at + 2]!;
    spans[o + 3] = tail;
    spans[o + 4] = lines[at + 4]!;
    spans[o + 5] = url;
    spans[o + 6] = urlEnd;
    spans[o + 7] = id;
    spans[o + 8] = idEnd;
    spans[o + 9] = name(item.source);
    spans[o + 10] = name(item.filter);
    spans[o + 11] = name(item.state);
    published[k] = item.published;
  }
  return { bytes, spans, published, names: [...names.keys()] };
}

/** The items of a layout, built from its bytes (see `layoutOf`). */
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
    items[k] = new SnapshotItem(id === SAME_AS_URL ? u : text(id, spans[o + 8]!), u, names[spans[o + 9]!]!, names[spans[o + 10]!]!, published[k]!, state < 0 ? undefined : names[state], fragments);
  }
  return items;
}

/** A snapshot as read: its items, the checksum its header states, and, when asked for, its bytes and each line's spans (start, summary, data, tail, end). */
export interface ReadSnapshot {
  items: Item[];
  sha256: string;
  bytes?: Uint8Array;
  spans?: Int32Array;
}

/**
 * Saves a wire's items, oldest first as `WireIndex.items()` gives them, and with them their
 * term table (`WireIndex.termTable()`, taken at the same moment: item i is its slot i).
 */
export async function saveWire(dataDir: string, wire: string, items: readonly StoredItem[], table?: SlotTermTable): Promise<void> {
  const dir = snapshotDir(dataDir);
  privateDir(dir);
  const hash = createHash('sha256');
  const chunks: string[] = [];
  for (let i = 0; i < items.length; i += CHUNK) {
    let text = '';
    const end = Math.min(items.length, i + CHUNK);
    for (let j = i; j < end; j++) text += itemLine(items[j]!) + '\n';
    hash.update(text);
    chunks.push(text);
    if (end < items.length) await yieldToLoop();
  }
  const header: Header = { format: FORMAT, version: VERSION, wire, count: items.length, savedAt: new Date().toISOString(), sha256: hash.digest('hex') };
  await writeAtomically(join(dir, `${wire}.jsonl`), [JSON.stringify(header) + '\n', ...chunks]);
  // After the items: a crash between the two renames leaves a table naming the old items'
  // checksum, which the next start does not use.
  if (table && table.count === items.length) await writeAtomically(join(dir, `${wire}.terms`), termsFile(wire, header.sha256, table));
}

/**
 * Saves a wire as its index holds it: its items, and its term table copied in steps between
 * turns of the event loop (a 20,000-item wire's table at its cap is 35-45 ms of copying). A
 * copy the index changed during is taken again with the items, twice at most; then the items
 * are saved without it (the table left from an earlier save names other items and is not
 * used: a restart indexes that wire's text).
 */
export async function saveIndex(dataDir: string, wire: string, index: WireIndex): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const items = index.items();
    const steps = index.termTableSteps();
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
 * A term table file: a header line, then the table's typed arrays as they lie in memory
 * (`freq`, `bits`, `offsets`, `slots`, `position`; the header names the byte order), then its
 * terms as a JSON array. The header holds each array's length and the SHA-256 of everything after it.
 */
const TERMS_FORMAT = 'wires-terms';
const TERMS_VERSION = 1;

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
  lengths: { freq: number; bits: number; offsets: number; slots: number; position: number };
  sha256: string;
}

function termsFile(wire: string, itemsSha256: string, t: SlotTermTable): Uint8Array[] {
  const arrays = [t.freq, t.bits, t.offsets, t.slots, t.position].map((a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  const body = [...arrays, Buffer.from(JSON.stringify(t.terms))];
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
    lengths: { freq: t.freq.length, bits: t.bits.length, offsets: t.offsets.length, slots: t.slots.length, position: t.position.length },
    sha256: hash.digest('hex'),
  };
  return [Buffer.from(JSON.stringify(header) + '\n'), ...body];
}

/** Whether a table's arrays have the lengths its terms imply (a bitset pair per frequent term, two lists per rare one). */
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
    t.slots.every((slot) => slot >= 0 && slot < t.position.length)
  );
}

/**
 * The saved term table of a wire's items file (by its checksum), or why there is none to use:
 * missing, written for other items, or damaged. Either way the caller builds the table itself.
 * The file is read into the buffer `into` gives, and the table's arrays are views of it, not
 * copies: valid until that buffer is written again. A warm start reads every wire's table into
 * one buffer (`reusedBuffer`), where a fresh one per table would touch fresh memory twice.
 */
export function readTermTable(dataDir: string, wire: string, itemsSha256: string, into: (size: number) => Buffer): { table: SlotTermTable } | { missing: string } {
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
    if (h.format !== TERMS_FORMAT || h.version !== TERMS_VERSION || h.wire !== wire) throw new Error('unknown format');
    if (h.items_sha256 !== itemsSha256) return { missing: 'saved for other items' };
    if (h.endian !== endianness()) return { missing: `saved in ${h.endian} byte order` };
    let body = buf.subarray(newline + 1);
    if (createHash('sha256').update(body).digest('hex') !== h.sha256) throw new Error('checksum mismatch');
    // The header is outside the checksum: its lengths must fit the bytes before anything is allocated for them.
    const lengths = Object.values(h.lengths ?? {});
    if (lengths.length !== 5 || !lengths.every((n) => Number.isSafeInteger(n) && n >= 0) || 4 * lengths.reduce((a, b) => a + b, 0) > body.length) {
      throw new Error('lengths do not match');
    }
    // Views need the arrays 4-byte aligned: the body is moved back over the header, parsed by now.
    const misaligned = body.byteOffset % 4;
    if (misaligned) body = buf.copyWithin(newline + 1 - misaligned, newline + 1).subarray(newline + 1 - misaligned, buf.length - misaligned);
    let at = 0;
    const take = <T extends Int32Array | Uint32Array>(Ctor: new (b: ArrayBufferLike, offset: number, n: number) => T, n: number): T => {
      const view = new Ctor(body.buffer, body.byteOffset + at, n);
      at += n * 4;
      return view;
    };
    const freq = take(Int32Array, h.lengths.freq);
    const bits = take(Uint32Array, h.lengths.bits);
    const offsets = take(Int32Array, h.lengths.offsets);
    const slots = take(Int32Array, h.lengths.slots);
    const position = take(Int32Array, h.lengths.position);
    const terms = JSON.parse(body.toString('utf8', at)) as string[];
    const table: SlotTermTable = { count: h.count, frequentMin: h.frequent_min, terms, freq, words: h.words, bits, offsets, slots, position };
    if (!Array.isArray(terms) || !fitsLayout(table)) throw new Error('lengths do not match');
    return { table };
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
  return new SnapshotReader().read(dataDir, wire)?.items;
}

/**
 * Reads snapshots one after another into one buffer that grows to the largest, so a warm start
 * touches fresh memory once rather than once per file (every string of an item is decoded into
 * a copy of its own, so the buffer is free again once a file is read).
 */
export class SnapshotReader {
  private readonly scratch = reusedBuffer();

  /**
   * One wire's snapshot, checked against the checksum its header states, with that checksum;
   * undefined (and a log line) when it is missing, corrupt or partial. `into`: read the file into the buffer it gives
   * (one the caller may hand to another thread), and give its bytes and where each line's parts
   * lie (version 2).
   */
  read(dataDir: string, wire: string, into?: (size: number) => Buffer): ReadSnapshot | undefined {
    const path = join(snapshotDir(dataDir), `${wire}.jsonl`);
    let buf: Buffer;
    try {
      buf = readInto(path, into ?? this.scratch);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('snapshot unreadable, ignored', { wire, error: String(err) });
      return undefined;
    }
    const newline = buf.indexOf(10);
    try {
      if (newline === -1) throw new Error('no header line');
      const header = JSON.parse(buf.toString('utf8', 0, newline)) as Header;
      if (header.format !== FORMAT || (header.version !== 1 && header.version !== VERSION) || header.wire !== wire) throw new Error('unknown format');
      // The bytes, not their text: hashing a string encodes it again first.
      if (
        createHash('sha256')
          .update(buf.subarray(newline + 1))
          .digest('hex') !== header.sha256
      )
        throw new Error('checksum mismatch');
      const items: unknown[] = [];
      const lines = into && header.version === VERSION ? new Int32Array(header.count * 5) : undefined;
      for (let start = newline + 1; start < buf.length; ) {
        let end = buf.indexOf(10, start);
        if (end === -1) end = buf.length;
        if (items.length === header.count) throw new Error('item count mismatch');
        items.push(header.version === 1 ? JSON.parse(buf.toString('utf8', start, end)) : fromLine(buf.subarray(start, end), lines, items.length * 5, start));
        start = end + 1;
      }
      if (items.length !== header.count) throw new Error('item count mismatch');
      // A version-2 line was checked as it was read (and its summary and fields stay undecoded).
      const read: ReadSnapshot = { items: items.filter((i): i is Item => i instanceof SnapshotItem || isItem(i)), sha256: header.sha256 };
      if (lines) Object.assign(read, { bytes: buf, spans: lines });
      return read;
    } catch (err) {
      log.warn('snapshot corrupt or partial, ignored', { wire, path, error: (err as Error).message });
      return undefined;
    }
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
