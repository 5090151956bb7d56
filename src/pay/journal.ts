/**
 * The payment journal: an append-only file of JSON lines in DATA_DIR. Every accepted
 * authorization is written before its data is released, and on disk before any settlement
 * of it is submitted; settlement outcomes are written as they arrive. At start the journal is
 * read back, every accepted authorization without an outcome is handed back as pending, and
 * the file is compacted: the old one is kept under `journal-archive/` (nothing is deleted)
 * and the new one starts with the running totals, the pending entries, and the spent ones
 * that are still valid as `spent` records (a restart must not make a published
 * authorization new again; their outcomes are already in the totals).
 *
 * Records are written on the serving thread (a few microseconds into the page cache, where
 * they survive a crash of the service) and made durable by a sync thread (journal-sync.ts)
 * with group commit: sync requests posted while an fdatasync is in flight share the next
 * one. Outcome records need no sync of their own (a lost one only means the payment is
 * resumed and found settled on chain): they reach the disk with the next sync, at the
 * latest a second later.
 */
import { openSync, closeSync, fstatSync, fsyncSync, readFileSync, renameSync, writeSync, existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
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
  private readonly fd: number;
  private readonly syncer: Worker;
  private seq = 0;
  /** Sync request → its waiter; acknowledged in order. */
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  /** A write failed part-way: the next record starts on a new line, so only the torn one is unreadable. */
  private torn = false;
  private lazy: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(readonly path: string) {
    this.fd = openPrivate(path, 'a');
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
  static async open(dir: string): Promise<{ journal: Journal; state: JournalState }> {
    privateDir(dir);
    const path = join(dir, JOURNAL_FILE);
    const state = readJournal(path);
    if (existsSync(path)) {
      const archive = join(dir, 'journal-archive');
      privateDir(archive);
      const lines = [JSON.stringify({ t: 'totals', at: Date.now(), settled: state.settled, failed: state.failed })];
      for (const p of state.pending) {
        lines.push(JSON.stringify(p.record));
        if (p.tx) lines.push(JSON.stringify({ t: 'submitted', id: p.record.id, at: Date.now(), tx: p.tx }));
      }
      for (const s of state.spent) lines.push(JSON.stringify({ t: 'spent', ...s } satisfies JournalRecord));
      const tmp = path + '.tmp';
      writePrivateFile(tmp, lines.join('\n') + '\n');
      syncFile(tmp);
      renameSync(path, join(archive, `payments-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`));
      renameSync(tmp, path);
    } else {
      writePrivateFile(path, '');
    }
    syncFile(dir);
    return { journal: new Journal(path), state };
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
      if (done < Buffer.byteLength(text)) {
        const bytes = Buffer.from(text);
        for (let at = done; at < bytes.length; ) at += writeSync(this.fd, bytes, at);
      }
      this.torn = false;
    } catch (err) {
      this.torn = true;
      throw err;
    }
  }

  /** Bytes in the journal file (0 once closed). */
  size(): number {
    return this.closed ? 0 : fstatSync(this.fd).size;
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

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
