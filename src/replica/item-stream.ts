/**
 * Items from the ingesting leader to every replica: one Redis stream per wire
 * (`items:<wire>`), each entry the JSON lines of the items one document stored (new or
 * changed), as the ingest workers encode them. Each stream is trimmed to its wire's
 * retention, so it holds what a replica starting now needs.
 *
 * Every replica reads every wire's stream and applies entries to its own indexes the way the
 * leader applied them (apply.ts), skipping its own. Applying is idempotent (an unchanged item
 * changes nothing and is pushed to nobody), so an entry read twice, or a document the new
 * leader polls again after a failover, pushes nothing twice; and an item first seen by the
 * old leader just before it died is polled again by the new one, so nothing is lost.
 *
 * A replica that starts, or comes back after Redis was unreachable, reads from where it
 * stopped (from the beginning at start) before it reports itself caught up.
 *
 * Publishing is fenced by the lease (lease.ts). While Redis is unreachable the leader keeps
 * up to MAX_BUFFERED documents and publishes them, oldest first, once it is back.
 */
import { retentionMs, WIRES } from '../catalog/index.js';
import { applyItems } from '../ingest/apply.js';
import { log } from '../log.js';
import type { WireIndex } from '../search/wire-index.js';
import { warnOnChange, type Redis } from './redis.js';

const MAX_BUFFERED = 10_000;
const READ_COUNT = 200;
const BLOCK_MS = 1000;
const LAGS_KEPT = 1024;

/**
 * Appends a document's items if `token` holds the lease, taking the lease when it is free
 * (a leader back after an outage longer than its lease, before its next tick). 0: another
 * replica leads.
 */
const PUBLISH = `
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
elseif cur ~= ARGV[1] then
  return 0
end
redis.call('XADD', KEYS[2], 'MINID', '~', ARGV[2], '*', 's', ARGV[1], 'l', ARGV[3])
return 1
`;

interface Scripts {
  publishItems(lead: string, stream: string, token: string, minId: string, lines: Buffer, leaseMs: string): Promise<number>;
}

export interface ItemStreamOptions {
  /** For publishing (fails fast). */
  redis: Redis;
  /** For reading: blocks on XREAD, so a connection of its own. */
  reader: Redis;
  prefix: string;
  wires: ReadonlyMap<string, WireIndex>;
  /** This replica's lease token: its own entries are skipped when read. */
  token: string;
  leadKey: string;
  leaseMs: number;
  /** A publish was refused: another replica leads. */
  onDeposed: () => void;
}

export class ItemStream {
  private readonly redis: Redis & Scripts;
  private readonly keys: string[];
  /** Stream key → the wire's position in `keys`, and each wire's retention: looked up per entry, built once. */
  private readonly positions: Map<string, number>;
  private readonly retention: Map<string, number>;
  private readonly lastIds: string[];
  private readonly buffered: { wire: string; lines: Buffer }[] = [];
  private flushing = false;
  private stopped = false;
  /** Documents dropped because the buffer was full while Redis was unreachable. */
  dropped = 0;
  /** Every wire's stream has been read to its end once. */
  caughtUp = false;
  /** Publish → apply here, in ms, for the last entries applied (the leader's clock and ours: one box, or synced clocks). */
  private readonly lags: number[] = [];
  applied = 0;
  private readonly warnPublish = warnOnChange('item stream: publish failed; kept until Redis answers');
  private readonly warnRead = warnOnChange('item stream: read failed; retrying');

  constructor(private readonly opts: ItemStreamOptions) {
    this.redis = opts.redis as Redis & Scripts;
    this.redis.defineCommand('publishItems', { numberOfKeys: 2, lua: PUBLISH });
    this.keys = WIRES.map((w) => this.key(w.id));
    this.positions = new Map(this.keys.map((k, i) => [k, i]));
    this.retention = new Map(WIRES.map((w) => [w.id, retentionMs(w)]));
    this.lastIds = WIRES.map(() => '0');
    opts.redis.on('ready', () => void this.flush());
  }

  private key(wire: string): string {
    return `${this.opts.prefix}items:${wire}`;
  }

  /** Publishes the lines of the items a document stored (the leader, after applying them itself). */
  publish(wire: string, lines: Uint8Array[]): void {
    const parts: Uint8Array[] = [];
    for (const line of lines) parts.push(line, NEWLINE);
    this.buffered.push({ wire, lines: Buffer.concat(parts) });
    if (this.buffered.length > MAX_BUFFERED) {
      this.buffered.shift();
      if (this.dropped++ === 0) log.warn('item stream: buffer full while Redis is unreachable; the oldest documents are dropped (the next leader poll finds their items again)');
    }
    void this.flush();
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.buffered.length > 0 && !this.stopped) {
        const { wire, lines } = this.buffered[0]!;
        const minId = String(Math.max(0, Date.now() - this.retention.get(wire)!));
        let ok: number;
        try {
          ok = await this.redis.publishItems(this.opts.leadKey, this.key(wire), this.opts.token, minId, lines, String(this.opts.leaseMs));
        } catch (err) {
          this.warnPublish(err);
          return; // kept, and sent when the connection is ready again
        }
        this.buffered.shift();
        if (ok === 0) {
          // Another replica leads: what this one buffered, the leader polls itself.
          this.buffered.length = 0;
          this.opts.onDeposed();
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Reads every wire's stream and applies what others published, until stopped. */
  async follow(): Promise<void> {
    while (!this.stopped) {
      let result: [string, [string, string[]][]][] | null;
      try {
        const block = this.caughtUp ? ['BLOCK', BLOCK_MS] : [];
        result = (await this.opts.reader.xread('COUNT', READ_COUNT, ...(block as ['BLOCK', number]), 'STREAMS', ...this.keys, ...this.lastIds)) as typeof result;
      } catch (err) {
        if (this.stopped) return;
        this.warnRead(err);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (!result) {
        if (!this.caughtUp) {
          this.caughtUp = true;
          log.info('item stream: caught up', { applied: this.applied });
        }
        continue;
      }
      for (const [key, entries] of result) {
        const i = this.positions.get(key)!;
        const index = this.opts.wires.get(WIRES[i]!.id);
        for (const [id, fields] of entries) {
          this.lastIds[i] = id;
          if (!index || field(fields, 's') === this.opts.token) continue;
          const lines = field(fields, 'l');
          if (!lines) continue;
          try {
            await applyItems(index, Buffer.from(lines), Date.now());
          } catch (err) {
            log.warn('item stream: an entry could not be applied; skipped', { wire: WIRES[i]!.id, id, error: String(err) });
            continue;
          }
          this.applied++;
          if (this.caughtUp) this.noteLag(Date.now() - Number(id.split('-')[0]));
        }
      }
    }
  }

  private noteLag(ms: number): void {
    if (this.lags.length === LAGS_KEPT) this.lags.shift();
    this.lags.push(ms);
  }

  /** Publish → apply here over the last entries applied (ms): p50, p99, and the count. */
  lag(): { p50: number | null; p99: number | null; entries: number } {
    const sorted = [...this.lags].sort((a, b) => a - b);
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null);
    return { p50: at(0.5), p99: at(0.99), entries: sorted.length };
  }

  stop(): void {
    this.stopped = true;
  }
}

const NEWLINE = new Uint8Array([10]);

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
