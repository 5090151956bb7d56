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
import { readdirSync, readFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { log } from '../log.js';
import { PRIVATE_FILE_MODE, privateDir } from '../private-files.js';
import type { Item, StoredItem } from '../search/item.js';

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

/** A version-2 line's object back into an Item (the served names `category` and `ms`). */
function fromLine(line: string): unknown {
  const x = (JSON.parse(line) ?? {}) as { title?: unknown; url?: unknown; source?: unknown; category?: unknown; ms?: unknown; summary?: unknown; id?: unknown; state?: unknown; data?: unknown };
  return {
    id: x.id,
    title: x.title,
    url: x.url,
    source: x.source,
    filter: x.category,
    published: x.ms,
    summary: x.summary,
    ...(x.state !== undefined && { state: x.state }),
    ...(x.data !== undefined && { data: x.data }),
  };
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
  const path = join(snapshotDir(dataDir), `${wire}.jsonl`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn('snapshot unreadable, ignored', { wire, error: String(err) });
    return undefined;
  }
  const newline = text.indexOf('\n');
  try {
    if (newline === -1) throw new Error('no header line');
    const header = JSON.parse(text.slice(0, newline)) as Header;
    if (header.format !== FORMAT || (header.version !== 1 && header.version !== VERSION) || header.wire !== wire) throw new Error('unknown format');
    const body = text.slice(newline + 1);
    if (createHash('sha256').update(body).digest('hex') !== header.sha256) throw new Error('checksum mismatch');
    const lines = body === '' ? [] : body.slice(0, -1).split('\n');
    const items = header.version === 1 ? lines.map((line) => JSON.parse(line) as unknown) : lines.map(fromLine);
    if (items.length !== header.count) throw new Error('item count mismatch');
    return items.filter(isItem);
  } catch (err) {
    log.warn('snapshot corrupt or partial, ignored', { wire, path, error: (err as Error).message });
    return undefined;
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
