/**
 * The payment journal: an append-only file of JSON lines in DATA_DIR. Every accepted
 * authorization is written before its data is released, and on disk before any settlement
 * of it is submitted; settlement outcomes are written as they arrive. At start the journal is
 * read back, every accepted authorization without an outcome is handed back as pending, and
 * the file is compacted: the old one moves to `journal-archive/` and the new one starts with
 * the running totals, the pending entries, and the spent ones that are still valid as
 * `spent` records (a restart must not make a published authorization new again; their
 * outcomes are already in the totals).
 *
 * The same compaction runs while serving once the live file passes its rotation size
 * (`rotate`, with the state the payment core holds), so settled and failed records leave the
 * live file and it stays small. Archives are kept for a time and up to a total size; within
 * that, they hold every accepted authorization and its outcome, so who paid what can be
 * rebuilt from them.
 *
 * Records are written on the serving thread (a few microseconds into the page cache, where
 * they survive a crash of the service) and made durable by a sync thread (journal-sync.ts)
 * with group commit: sync requests posted while an fdatasync is in flight share the next
 * one. Outcome records need no sync of their own (a lost one only means the payment is
 * resumed and found settled on chain): they reach the disk with the next sync, at the
 * latest a second later.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { dirname, join } from 'node:path';
import { log } from '../log.js';
import { openPrivate, privateDir, writePrivateFile } from '../private-files.js';
import type { PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';
import type { SyncAck, SyncRequest } from './journal-sync.js';

export interface AcceptedRecord {
  t: 'accepted';
  /** payer:nonce, lower case. */
  id: string;
  at: number;
  payer: string;
  amount: string;
  requestKey: string;
  mode: 'sync' | 'optimistic';
  payload: PaymentPayload;
  requirements: PaymentRequirements;
}

export type JournalRecord =
  | AcceptedRecord
  | { t: 'submitted'; id: string; at: number; tx: string }
  | { t: 'settled'; id: string; at: number; tx: string | null }
  | { t: 'failed'; id: string; at: number; reason: string }
  | { t: 'totals'; at: number; settled: number; failed: number }
  /** Carried over by a compaction: an outcome already counted in the totals, kept while the authorization is valid. */
  | ({ t: 'spent' } & SpentPayment);

export interface PendingPayment {
  record: AcceptedRecord;
  /** The last transaction hash submitted for it, if any: an attempt may have landed. */
  tx: string | null;
}

/** An authorization with an outcome that has not expired yet: a repeat of it is no new payment. */
export interface SpentPayment {
  record: AcceptedRecord;
  outcome: { t: 'settled'; id: string; at: number; tx: string | null } | { t: 'failed'; id: string; at: number; reason: string };
}

export interface JournalState {
  pending: PendingPayment[];
  spent: SpentPayment[];
  settled: number;
  failed: number;
}

export const JOURNAL_FILE = 'payments.jsonl';
export const ARCHIVE_DIR = 'journal-archive';

/** When the live file is compacted, and how long its archives are kept. */
export interface JournalRetention {
  /** The live file is compacted once it passes this size. */
  rotateBytes: number;
  /** Archives older than this are deleted (0: kept for ever). */
  archiveDays: number;
  /** Beyond this total, the oldest archives are deleted (0: no limit). */
  archiveBytes: number;
}

export const DEFAULT_RETENTION: JournalRetention = { rotateBytes: 64 << 20, archiveDays: 90, archiveBytes: 1 << 30 };
/** After a failed rotation (a full disk), the next try waits for this much more journal. */
const ROTATE_RETRY_BYTES = 1 << 20;

/**
 * Reads a journal file into its pending entries, its spent entries still valid at `nowMs`,
 * and totals. A torn last line (crash mid-write) is skipped.
 */
export function readJournal(path: string, nowMs = Date.now()): JournalState {
  const state: JournalState = { pending: [], spent: [], settled: 0, failed: 0 };
  if (!existsSync(path)) return state;
  const pending = new Map<string, PendingPayment>();
  const lines = readFileSync(path, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (!line) return;
    let rec: JournalRecord;
    try {
      rec = JSON.parse(line) as JournalRecord;
    } catch {
      log.warn('journal: unreadable line skipped', { path, line: i + 1, last: i >= lines.length - 2 });
      return;
    }
    switch (rec.t) {
      case 'totals':
        state.settled += rec.settled;
        state.failed += rec.failed;
        break;
      case 'spent':
        if (stillValid(rec.record, nowMs)) state.spent.push({ record: rec.record, outcome: rec.outcome });
        break;
      case 'accepted':
        if (!pending.has(rec.id)) pending.set(rec.id, { record: rec, tx: null });
        break;
      case 'submitted': {
        const p = pending.get(rec.id);
        if (p) p.tx = rec.tx;
        break;
      }
      case 'settled':
      case 'failed': {
        // An outcome without a pending entry is a duplicate line: counted once.
        const p = pending.get(rec.id);
        if (!p) break;
        pending.delete(rec.id);
        rec.t === 'settled' ? state.settled++ : state.failed++;
        if (stillValid(p.record, nowMs)) state.spent.push({ record: p.record, outcome: rec });
        break;
      }
    }
  });
  state.pending = [...pending.values()];
  return state;
}

/** Is the authorization still valid? A record without one (written by hand, or damaged) is not. */
function stillValid(record: AcceptedRecord, nowMs: number): boolean {
  return Number(record.payload?.payload?.authorization?.validBefore ?? 0) * 1000 > nowMs;
}

export class Journal {
  /** Opened for appending on the serving thread: a record written here is in the OS at once. */
  private fd: number;
  private readonly syncer: Worker;
  private seq = 0;
  /** Sync request → its waiter; acknowledged in order. */
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  /** A failed write could not be cut off: the next record starts on a new line, so only the torn one is unreadable. */
  private torn = false;
  private lazy: NodeJS.Timeout | null = null;
  private closed = false;

  private bytes: number;
  /** The live file's size at which the next rotation is due. */
  private rotateAt: number;

  private constructor(
    readonly path: string,
    readonly retention: JournalRetention,
  ) {
    this.fd = openPrivate(path, 'a');
    this.bytes = statSync(path).size;
    this.rotateAt = retention.rotateBytes;
    this.syncer = new Worker(new URL('./journal-sync.js', import.meta.url), { workerData: { path } });
    this.syncer.on('message', (msg: SyncAck) => {
      for (const [seq, w] of this.waiting) {
        if (seq > msg.seq) break;
        this.waiting.delete(seq);
        if (msg.error) w.reject(new Error(msg.error));
        else w.resolve();
      }
      if (msg.error) log.error('journal: sync failed', { path: this.path, error: msg.error });
    });
    this.syncer.on('error', (err) => {
      log.error('journal: sync thread failed', { path: this.path, error: String(err) });
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
      // Without its sync thread nothing written could be made durable: stop taking records.
      this.closed = true;
      closeSync(this.fd);
    });
  }

  /** Reads the journal in `dir`, compacts it, and opens it for appending. */
  static async open(dir: string, retention: JournalRetention = DEFAULT_RETENTION): Promise<{ journal: Journal; state: JournalState }> {
    privateDir(dir);
    const path = join(dir, JOURNAL_FILE);
    // A rotation interrupted between its two renames left the compacted file under its temporary name.
    if (!existsSync(path) && existsSync(nextPath(path))) renameSync(nextPath(path), path);
    const state = readJournal(path);
    if (existsSync(path)) replaceLive(path, compacted(state));
    else writePrivateFile(path, '');
    syncFile(dir);
    pruneArchives(dir, retention, Date.now());
    return { journal: new Journal(path, retention), state };
  }

  /** Is the live file past its rotation size? */
  get rotationDue(): boolean {
    return !this.closed && this.bytes >= this.rotateAt;
  }

  /**
   * Compacts the live file while serving: `state` (the payment core's pending and spent
   * authorizations, and its totals) becomes the new live file, written and synced before it
   * replaces the old one, which moves to the archive. Runs on the serving thread: the new
   * file holds only what is pending or still valid, so this is one small write and sync.
   * A failure (a full disk) leaves the live file as it was; the next try waits for 1 MiB
   * more of it.
   */
  rotate(state: JournalState): boolean {
    if (this.closed) return false;
    const text = compacted(state);
    try {
      replaceLive(this.path, text);
    } catch (err) {
      rmSync(nextPath(this.path), { force: true });
      this.rotateAt = this.bytes + ROTATE_RETRY_BYTES;
      log.error('journal: rotation failed; the live file keeps growing until it succeeds', { path: this.path, error: String(err) });
      return false;
    }
    closeSync(this.fd);
    this.fd = openPrivate(this.path, 'a');
    this.bytes = Buffer.byteLength(text);
    this.rotateAt = this.bytes + this.retention.rotateBytes;
    this.torn = false;
    // The sync thread syncs what it holds of the old file, then follows the new one.
    this.syncer.postMessage('reopen' satisfies SyncRequest);
    pruneArchives(dirname(this.path), this.retention, Date.now());
    return true;
  }

  /**
   * Writes a record to the journal file. Once this returns, the record survives a crash of
   * the service (it is in the OS), not yet one of the machine: that takes sync(). Throws
   * when the write fails.
   */
  write(rec: JournalRecord): void {
    if (this.closed) throw new Error('journal is closed');
    const text = (this.torn ? '\n' : '') + JSON.stringify(rec) + '\n';
    try {
      // A string is written without a Buffer of our own; a short write (a full disk) finishes from one.
      const done = writeSync(this.fd, text);
      const length = Buffer.byteLength(text);
      if (done < length) {
        const bytes = Buffer.from(text);
        for (let at = done; at < bytes.length; ) at += writeSync(this.fd, bytes, at);
      }
      this.bytes += length;
      this.torn = false;
    } catch (err) {
      // Part of the record may be in the file (a full disk takes what fits): cut it off, so
      // no torn line is left. Should even that fail, the next record starts on a new line.
      try {
        ftruncateSync(this.fd, this.bytes);
      } catch {
        this.torn = true;
      }
      throw err;
    }
  }

  /** Bytes in the live journal file (0 once closed). */
  size(): number {
    return this.closed ? 0 : this.bytes;
  }

  /** Resolves once every record written so far is on disk. */
  sync(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal is closed'));
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      this.waiting.set(seq, { resolve, reject });
      this.syncer.postMessage(seq satisfies SyncRequest);
    });
  }

  /** Writes a record and resolves once it is on disk. */
  append(rec: JournalRecord): Promise<void> {
    try {
      this.write(rec);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.sync();
  }

  /** Writes a record that needs no sync of its own: it reaches the disk with the next one, at the latest a second later. */
  note(rec: JournalRecord): void {
    if (this.closed) return;
    try {
      this.write(rec);
    } catch (err) {
      log.error('journal: record not written', { path: this.path, t: rec.t, error: String(err) });
      return;
    }
    this.lazy ??= setTimeout(() => {
      this.lazy = null;
      if (!this.closed) this.sync().catch(() => {});
    }, 1000);
  }

  /** Syncs everything written so far, then stops the sync thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.lazy) clearTimeout(this.lazy);
    await this.sync().catch(() => {});
    this.closed = true;
    closeSync(this.fd);
    this.syncer.postMessage('close' satisfies SyncRequest);
    await new Promise((r) => this.syncer.once('exit', r));
  }
}

const nextPath = (path: string) => `${path}.next`;

/** The live file's compacted form: the totals, the pending authorizations, the spent ones still valid. */
function compacted(state: JournalState): string {
  const at = Date.now();
  const lines = [JSON.stringify({ t: 'totals', at, settled: state.settled, failed: state.failed } satisfies JournalRecord)];
  for (const p of state.pending) {
    lines.push(JSON.stringify(p.record));
    if (p.tx) lines.push(JSON.stringify({ t: 'submitted', id: p.record.id, at, tx: p.tx } satisfies JournalRecord));
  }
  for (const s of state.spent) lines.push(JSON.stringify({ t: 'spent', ...s } satisfies JournalRecord));
  return `${lines.join('\n')}\n`;
}

/**
 * Writes `text` next to the live file and syncs it, then moves the live file to the archive
 * and the new one into its place. A crash at any point leaves a complete journal: the old
 * live file, or the synced new one (under its temporary name between the renames, which
 * `open` takes back).
 */
function replaceLive(path: string, text: string): void {
  const dir = dirname(path);
  const archive = join(dir, ARCHIVE_DIR);
  privateDir(archive);
  writePrivateFile(nextPath(path), text);
  syncFile(nextPath(path));
  renameSync(path, join(archive, `payments-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`));
  renameSync(nextPath(path), path);
  syncFile(dir);
}

/** Deletes archives past the retention time, then the oldest beyond the total size. */
export function pruneArchives(dir: string, retention: JournalRetention, nowMs: number): void {
  const archive = join(dir, ARCHIVE_DIR);
  if (!existsSync(archive)) return;
  const files = readdirSync(archive)
    .filter((f) => /^payments-.+\.jsonl$/.test(f))
    .map((f) => ({ path: join(archive, f), ...pick(statSync(join(archive, f))) }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  let total = 0;
  for (const f of files) {
    total += f.size;
    const tooOld = retention.archiveDays > 0 && nowMs - f.mtimeMs > retention.archiveDays * 86_400_000;
    const tooMuch = retention.archiveBytes > 0 && total > retention.archiveBytes;
    if (tooOld || tooMuch) {
      rmSync(f.path, { force: true });
      log.info('journal: archive deleted', { path: f.path, reason: tooOld ? `older than ${retention.archiveDays} days` : `archives over ${retention.archiveBytes} bytes` });
    }
  }
}

const pick = ({ size, mtimeMs }: { size: number; mtimeMs: number }) => ({ size, mtimeMs });

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
