/**
 * The payment journal: an append-only file of JSON lines in DATA_DIR. An accepted
 * authorization is appended and fsynced before its data is released; settlement outcomes are
 * appended as they arrive. At start the journal is read back, every accepted authorization
 * without an outcome is handed back as pending, and the file is compacted: the old one is
 * kept under `journal-archive/` (nothing is deleted) and the new one starts with the running
 * totals and the pending entries.
 *
 * Appends are group-committed on a writer thread (journal-writer.ts): lines posted while a
 * write + fdatasync is in flight go out together in the next one, so concurrent payments
 * share one sync. Outcome records need
 * no sync of their own (a lost one only means the payment is resumed and found settled on
 * chain): they ride along with the next sync, or a lazy one within a second.
 */
import { mkdirSync, openSync, closeSync, fsyncSync, readFileSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { log } from '../log.js';
import type { PaymentRequirements } from './offer.js';
import type { PaymentPayload } from './payment-header.js';

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
  | { t: 'totals'; at: number; settled: number; failed: number };

export interface PendingPayment {
  record: AcceptedRecord;
  /** The last transaction hash submitted for it, if any: an attempt may have landed. */
  tx: string | null;
}

export interface JournalState {
  pending: PendingPayment[];
  settled: number;
  failed: number;
}

export const JOURNAL_FILE = 'payments.jsonl';

/** Reads a journal file into its pending entries and totals. A torn last line (crash mid-write) is skipped. */
export function readJournal(path: string): JournalState {
  const state: JournalState = { pending: [], settled: 0, failed: 0 };
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
      case 'accepted':
        if (!pending.has(rec.id)) pending.set(rec.id, { record: rec, tx: null });
        break;
      case 'submitted': {
        const p = pending.get(rec.id);
        if (p) p.tx = rec.tx;
        break;
      }
      case 'settled':
      case 'failed':
        // An outcome without a pending entry is a duplicate line: counted once.
        if (pending.delete(rec.id)) rec.t === 'settled' ? state.settled++ : state.failed++;
        break;
    }
  });
  state.pending = [...pending.values()];
  return state;
}

export class Journal {
  private readonly writer: Worker;
  private seq = 0;
  /** Sequence number → its waiter; acknowledged in order. */
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private notes = '';
  private lazy: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(readonly path: string) {
    this.writer = new Worker(new URL('./journal-writer.js', import.meta.url), { workerData: { path } });
    this.writer.on('message', (ack: { seq: number; error?: string }) => {
      for (const [seq, w] of this.waiting) {
        if (seq > ack.seq) break;
        this.waiting.delete(seq);
        if (ack.error) w.reject(new Error(ack.error));
        else w.resolve();
      }
      if (ack.error) log.error('journal: write failed', { path: this.path, error: ack.error });
    });
    this.writer.on('error', (err) => {
      log.error('journal: writer thread failed', { path: this.path, error: String(err) });
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
      this.closed = true;
    });
  }

  /** Reads the journal in `dir`, compacts it, and opens it for appending. */
  static async open(dir: string): Promise<{ journal: Journal; state: JournalState }> {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, JOURNAL_FILE);
    const state = readJournal(path);
    if (existsSync(path)) {
      const archive = join(dir, 'journal-archive');
      mkdirSync(archive, { recursive: true });
      const lines = [JSON.stringify({ t: 'totals', at: Date.now(), settled: state.settled, failed: state.failed })];
      for (const p of state.pending) {
        lines.push(JSON.stringify(p.record));
        if (p.tx) lines.push(JSON.stringify({ t: 'submitted', id: p.record.id, at: Date.now(), tx: p.tx }));
      }
      const tmp = path + '.tmp';
      writeFileSync(tmp, lines.join('\n') + '\n');
      syncFile(tmp);
      renameSync(path, join(archive, `payments-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`));
      renameSync(tmp, path);
      syncFile(dir);
    }
    return { journal: new Journal(path), state };
  }

  /** Appends a record; resolves once it is on disk. */
  append(rec: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('journal is closed'));
    return this.post(this.takeNotes() + JSON.stringify(rec) + '\n');
  }

  /** Appends a record that needs no sync of its own: it reaches the disk with the next one. */
  note(rec: JournalRecord): void {
    if (this.closed) return;
    this.notes += JSON.stringify(rec) + '\n';
    this.lazy ??= setTimeout(() => {
      this.lazy = null;
      if (this.notes && !this.closed) this.post(this.takeNotes()).catch(() => {});
    }, 1000);
  }

  /** Writes everything queued so far, then stops the writer thread. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.lazy) clearTimeout(this.lazy);
    // Acknowledgements come in order: once this one is in, every earlier write is too.
    await this.post(this.takeNotes()).catch(() => {});
    this.closed = true;
    this.writer.postMessage('close');
    await new Promise((r) => this.writer.once('exit', r));
  }

  private post(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const seq = ++this.seq;
      this.waiting.set(seq, { resolve, reject });
      this.writer.postMessage({ seq, text });
    });
  }

  private takeNotes(): string {
    const text = this.notes;
    this.notes = '';
    return text;
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
