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
 * Serialisation yields to the event loop between chunks so a save never stalls requests.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { log } from '../log.js';
import { PRIVATE_FILE_MODE, privateDir } from '../private-files.js';
import type { CarriesFragments, Fragments, Item, ItemData, StoredItem } from '../search/item.js';

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

/** A stored item as a version-2 line: joined from its fragments, without decoding them. */
function itemLine(i: StoredItem): string {
  return [i.jsonHead, i.jsonSummary, i.jsonData, ',"id":', JSON.stringify(i.id), ',"ms":', String(i.published), i.state === undefined ? '' : ',"state":' + JSON.stringify(i.state), '}'].join('');
}

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
    readonly title: string,
    readonly url: string,
    readonly source: string,
    readonly filter: string,
    readonly published: number,
    readonly state: string | undefined,
    readonly fragments: Fragments,
  ) {}

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
function fromLine(line: Buffer): Item {
  // Searched within the line only: a key missing from it must not be found in the next one.
  const summaryAt = line.indexOf(SUMMARY_KEY);
  const idAt = line.lastIndexOf(ID_KEY);
  if (summaryAt === -1 || summaryAt >= idAt) throw new Error('malformed line');
  const dataAt = line.indexOf(DATA_KEY, summaryAt);
  const summaryEnd = dataAt !== -1 && dataAt < idAt ? dataAt : idAt;
  const jsonHead = line.toString('utf8', 0, summaryAt);
  const head = JSON.parse(jsonHead + '}') as { title?: unknown; url?: unknown; source?: unknown; category?: unknown };
  const tail = JSON.parse('{' + line.toString('utf8', idAt + 1)) as { id?: unknown; ms?: unknown; state?: unknown };
  const fragments: Fragments = { jsonHead, jsonSummary: line.toString('utf8', summaryAt, summaryEnd), jsonData: summaryEnd === idAt ? '' : line.toString('utf8', dataAt, idAt) };
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
  return new SnapshotItem(id, title, url, source, category, ms, state, fragments);
}

export async function saveWire(dataDir: string, wire: string, items: readonly StoredItem[]): Promise<void> {
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
  const finalPath = join(dir, `${wire}.jsonl`);
  const tmpPath = `${finalPath}.${process.pid}.tmp`;
  const fh = await open(tmpPath, 'w', PRIVATE_FILE_MODE);
  try {
    await fh.chmod(PRIVATE_FILE_MODE);
    await fh.write(JSON.stringify(header) + '\n');
    for (const chunk of chunks) await fh.write(chunk);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmpPath).catch(() => {});
    throw err;
  }
  await fh.close();
  await rename(tmpPath, finalPath);
}

/** Reads one wire's snapshot; undefined (and a log line) when it is missing, corrupt or partial. */
export function loadWire(dataDir: string, wire: string): Item[] | undefined {
  return new SnapshotReader().read(dataDir, wire, true)?.items;
}

/**
 * Reads snapshots one after another into one buffer that grows to the largest, so a warm start
 * touches fresh memory once rather than once per file (every string of an item is decoded into
 * a copy of its own, so the buffer is free again once a file is read).
 */
export class SnapshotReader {
  private scratch = Buffer.alloc(0);

  /**
   * One wire's snapshot, with the checksum its header states; undefined (and a log line) when
   * it is missing, corrupt or partial. `verify` false skips checking the bytes against the
   * checksum: only for a reader another thread vouches for, having checked the file with that
   * same checksum (the warm start's worker).
   */
  read(dataDir: string, wire: string, verify: boolean): { items: Item[]; sha256: string } | undefined {
    const path = join(snapshotDir(dataDir), `${wire}.jsonl`);
    let buf: Buffer;
    try {
      buf = this.readFile(path);
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
        verify &&
        createHash('sha256')
          .update(buf.subarray(newline + 1))
          .digest('hex') !== header.sha256
      )
        throw new Error('checksum mismatch');
      const items: unknown[] = [];
      for (let start = newline + 1; start < buf.length; ) {
        let end = buf.indexOf(10, start);
        if (end === -1) end = buf.length;
        items.push(header.version === 1 ? JSON.parse(buf.toString('utf8', start, end)) : fromLine(buf.subarray(start, end)));
        start = end + 1;
      }
      if (items.length !== header.count) throw new Error('item count mismatch');
      // A version-2 line was checked as it was read (and its summary and fields stay undecoded).
      return { items: items.filter((i): i is Item => i instanceof SnapshotItem || isItem(i)), sha256: header.sha256 };
    } catch (err) {
      log.warn('snapshot corrupt or partial, ignored', { wire, path, error: (err as Error).message });
      return undefined;
    }
  }

  private readFile(path: string): Buffer {
    const fd = openSync(path, 'r');
    try {
      const size = fstatSync(fd).size;
      if (this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(size);
      let length = 0;
      for (let n = -1; length < size && n !== 0; length += n) n = readSync(fd, this.scratch, length, size - length, length);
      return this.scratch.subarray(0, length);
    } finally {
      closeSync(fd);
    }
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
