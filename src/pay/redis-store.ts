/**
 * The payment store shared by replicas (REDIS_URL): every claim, outcome and record lives in
 * one Redis, changed only by Lua scripts, so no two replicas can both take an authorization
 * and a repeat on any replica sees what the first one did.
 *
 * Keys, under the prefix (REDIS_PREFIX, default `wires:`):
 * - `pay:journal`: a stream of every record (accepted, submitted, settled, failed), the
 *   shared journal. Its consumer group `settlers` holds, per replica, the accepted
 *   authorizations it is settling: the claim script delivers each new record to the
 *   replica that accepted it in the same atomic step, so it is never unowned. Outcome
 *   records are acknowledged past at once. A replica that stops heartbeating (SIGKILL, lost
 *   box) leaves its entries idle; after `claimIdleMs` another replica takes them over with
 *   XAUTOCLAIM and settles them. A double attempt cannot charge twice: the EIP-3009 nonce
 *   is single-use on chain, and a taken-over entry is settled as "uncertain" (a used nonce
 *   means it settled).
 * - `pay:c:<payer>:<nonce>`: the claim (fingerprint, request, payment-identifier id, state,
 *   handed over, transaction, failure), expiring once the authorization has expired.
 * - `pay:id:<payer>|<id>`: a payment-identifier id → its claim, expiring with it.
 * - `pay:body:<payer>:<nonce>`: the paid answer, for the payer's retries on another
 *   replica (up to 1 MiB, expiring with the claim).
 * - `pay:x:<payer>`: the payer's unsettled value, counted by the claim script and taken off
 *   with the outcome, so optimistic mode's limit holds across replicas.
 *
 * Durability: an accepted record is "written" once Redis has answered the script (in its
 * memory and, with `appendonly yes`, its AOF: it survives a kill of Redis or of the
 * replica), and "synced" when Redis runs `appendfsync always` (fsynced before it answers).
 * deploy/redis/redis.conf ships `appendfsync always`; `everysec` gives "written" only
 * (a power loss can take the last second).
 *
 * When Redis cannot be reached, commands fail at once (no offline queue, no resending after
 * a reconnect: a resent claim would come back as its own repeat): paid calls answer 503 and
 * nothing is charged.
 */
import { hostname } from 'node:os';
import { connectRedis, type Redis as RedisClient } from '../replica/redis.js';
import { log } from '../log.js';
import type { AcceptedRecord, JournalRecord, PendingPayment } from './journal.js';
import { judgeClaim, type ClaimResult, type ClaimState, type FinalOutcome, type NewClaim, type PaymentStore, type SharedClaim } from './store.js';

export interface RedisStoreOptions {
  url: string;
  /** Key prefix, so several services can share one Redis. */
  prefix?: string;
  /** This replica's consumer name in the settlers group (stable across restarts: it takes back its own entries at start). */
  consumer?: string;
  /** A replica's entries idle this long are taken over by another (ms). */
  claimIdleMs?: number;
  /** Journal records older than this are trimmed from the stream (days). */
  journalDays?: number;
}

const GROUP = 'settlers';
const MAX_SHARED_BODY = 1 << 20;
/** A payer's unsettled counter outlives a claim that expired before its outcome (only ever too high: calls settle synchronously). */
const UNSETTLED_TTL_MS = 3_600_000;

/** Creates the claim, records it and delivers it to this replica, or returns what is there. */
const CLAIM = `
local c = redis.call('HMGET', KEYS[1], 'fp', 'rk', 'pid', 'st', 'h', 'tx', 'why', 'mode')
-- A withdrawn claim was never confirmed to anyone: the payer's retry is a new attempt.
if c[7] == 'unrecorded' then
  redis.call('DEL', KEYS[1])
  c = {}
end
local owner = false
if ARGV[3] ~= '' then owner = redis.call('GET', KEYS[2]) end
if c[1] or owner then
  return {'seen', c[1] or '', c[2] or '', c[3] or '', c[4] or '', c[5] or '', c[6] or '', c[7] or '', c[8] or '', owner or ''}
end
-- The payer's unsettled value, this call's included, decides the mode (optimistic within the limit).
local unsettled = redis.call('INCRBY', KEYS[4], ARGV[11])
local mode = 'sync'
if ARGV[12] ~= '' and unsettled <= tonumber(ARGV[12]) then mode = 'optimistic' end
redis.call('PEXPIRE', KEYS[4], ${UNSETTLED_TTL_MS})
-- The record names the mode decided; the first "mode" in it is its own field (only the
-- request key precedes it, a JSON string whose quotes are escaped).
local record = ARGV[6]
if mode ~= ARGV[4] then record = string.gsub(record, '"mode":"' .. ARGV[4] .. '"', '"mode":"' .. mode .. '"', 1) end
redis.pcall('XGROUP', 'CREATE', KEYS[3], ARGV[7], '$', 'MKSTREAM')
local sid = redis.call('XADD', KEYS[3], 'MINID', '~', ARGV[9], '*', 'r', record)
redis.call('XREADGROUP', 'GROUP', ARGV[7], ARGV[8], 'COUNT', 1, 'STREAMS', KEYS[3], '>')
redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'rk', ARGV[2], 'pid', ARGV[3], 'st', 'pending', 'h', '0', 'mode', mode, 'sid', sid, 'ik', ARGV[3] ~= '' and KEYS[2] or '', 'xk', KEYS[4], 'amt', ARGV[11])
redis.call('PEXPIREAT', KEYS[1], ARGV[5])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[10], 'PXAT', ARGV[5]) end
return {'new', sid, mode}
`;

/** Takes a pending claim's amount off its payer's unsettled value (once: only while it is pending). */
const SETTLE_EXPOSURE = `
local x = redis.call('HMGET', KEYS[1], 'st', 'xk', 'amt')
if x[1] == 'pending' and x[2] then
  if redis.call('DECRBY', x[2], x[3]) <= 0 then redis.call('DEL', x[2]) end
end
`;

/** Appends a record the group need not deliver (an outcome): added, and the group's cursor moved past it. */
const APPEND = `
local id = redis.call('XADD', KEYS[1], 'MINID', '~', ARGV[3], '*', 'r', ARGV[2])
redis.call('XGROUP', 'SETID', KEYS[1], ARGV[1], id)
`;

/**
 * Marks the claim handed to a settler, unless it was withdrawn (and perhaps claimed anew:
 * then it holds another journal entry). An expired claim is past any repeat: handed.
 */
const HAND_OVER = `
local c = redis.call('HMGET', KEYS[1], 'st', 'why', 'sid')
if not c[1] then return 1 end
if c[2] == 'unrecorded' or (ARGV[1] ~= '' and c[3] ~= ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'h', '1')
return 1
`;

/** Withdraws a claim never handed over: failed as unrecorded, its id released, its entry acknowledged. */
const WITHDRAW = `
local c = redis.call('HMGET', KEYS[1], 'h', 'st', 'sid', 'ik')
if not c[2] then return 1 end
if c[1] == '1' then return 0 end
if c[2] ~= 'pending' then return 1 end
${SETTLE_EXPOSURE}
redis.call('HSET', KEYS[1], 'st', 'failed', 'why', 'unrecorded')
if c[4] ~= '' then redis.call('DEL', c[4]) end
redis.call('XACK', KEYS[2], ARGV[1], c[3])
${APPEND.replace(/KEYS\[1\]/g, 'KEYS[2]')}
return 1
`;

/** Records an outcome: the claim's state, the journal record, the entry acknowledged. */
const FINISH = `
${SETTLE_EXPOSURE}
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'st', ARGV[4], 'tx', ARGV[5], 'why', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('XACK', KEYS[2], ARGV[1], ARGV[7]) end
${APPEND.replace(/KEYS\[1\]/g, 'KEYS[2]')}
`;

/** Notes a submitted transaction on the claim and in the journal. */
const SUBMITTED = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'tx', ARGV[4]) end
${APPEND.replace(/KEYS\[1\]/g, 'KEYS[2]')}
`;

/** Resets the idle time of every entry this replica holds, so no other takes them over (JUSTID: without counting a delivery). */
const HEARTBEAT = `
local mine = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 5000, ARGV[2])
local ids = {}
for i, e in ipairs(mine) do ids[i] = e[1] end
if #ids > 0 then redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(ids), 'JUSTID') end
-- Consumers of replicas long gone, with nothing pending, are removed.
for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local f = {}
  for i = 1, #c, 2 do f[c[i]] = c[i + 1] end
  if f['pending'] == 0 and f['idle'] > 86400000 then redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], f['name']) end
end
return #ids
`;

interface Scripts {
  claim(claim: string, idKey: string, journal: string, unsettled: string, ...args: string[]): Promise<string[]>;
  handOver(claim: string, sid: string): Promise<number>;
  withdraw(claim: string, journal: string, ...args: string[]): Promise<number>;
  finish(claim: string, journal: string, ...args: string[]): Promise<void>;
  submitted(claim: string, journal: string, ...args: string[]): Promise<void>;
  heartbeat(journal: string, group: string, consumer: string): Promise<number>;
}

export class RedisStore implements PaymentStore {
  readonly kind = 'redis';
  readonly totals = { settled: 0, failed: 0 };
  readonly consumer: string;
  private readonly prefix: string;
  private readonly journalKey: string;
  private readonly claimIdleMs: number;
  private readonly journalMs: number;
  /** Stream entry of each authorization this replica is settling. */
  private readonly held = new Map<string, string>();
  /** Outcomes Redis did not take (unreachable): sent again at each heartbeat. */
  private readonly unfinished = new Map<string, FinalOutcome>();
  private timer: NodeJS.Timeout | null = null;
  private adopt: ((pending: PendingPayment[]) => void) | null = null;

  private constructor(
    private readonly redis: RedisClient & Scripts,
    opts: RedisStoreOptions,
  ) {
    this.prefix = opts.prefix ?? 'wires:';
    this.journalKey = `${this.prefix}pay:journal`;
    this.consumer = opts.consumer ?? `${hostname()}:${process.pid}`;
    this.claimIdleMs = opts.claimIdleMs ?? 30_000;
    this.journalMs = (opts.journalDays ?? 7) * 86_400_000;
  }

  /** Connects (in the background: an unreachable Redis at start only means 503s until it is reached). */
  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const redis = (await connectRedis(opts.url, 'wires-payments')) as RedisClient & Scripts;
    redis.defineCommand('claim', { numberOfKeys: 4, lua: CLAIM });
    redis.defineCommand('handOver', { numberOfKeys: 1, lua: HAND_OVER });
    redis.defineCommand('withdraw', { numberOfKeys: 2, lua: WITHDRAW });
    redis.defineCommand('finish', { numberOfKeys: 2, lua: FINISH });
    redis.defineCommand('submitted', { numberOfKeys: 2, lua: SUBMITTED });
    redis.defineCommand('heartbeat', { numberOfKeys: 1, lua: HEARTBEAT });
    const store = new RedisStore(redis, opts);
    redis.on('ready', () => void store.tick());
    return store;
  }

  get available(): boolean {
    return this.redis.status === 'ready';
  }

  private key(kind: 'c' | 'id' | 'body' | 'x', id: string): string {
    return `${this.prefix}pay:${kind}:${id}`;
  }

  private minId(): string {
    return String(Math.max(0, Date.now() - this.journalMs));
  }

  async claim(c: NewClaim): Promise<ClaimResult> {
    const { id, requestKey, payer, amount } = c.record;
    const requested = c.limit === null ? 'sync' : 'optimistic';
    c.record.mode = requested;
    const idKey = c.paymentId ? this.key('id', `${id.split(':')[0]}|${c.paymentId}`) : this.key('id', '-');
    const r = await this.redis.claim(
      this.key('c', id),
      idKey,
      this.journalKey,
      this.key('x', payer.toLowerCase()),
      c.fingerprint,
      requestKey,
      c.paymentId ?? '',
      requested,
      String(Math.ceil(c.expiresAt)),
      JSON.stringify(c.record),
      GROUP,
      this.consumer,
      this.minId(),
      id,
      amount,
      c.limit === null ? '' : String(c.limit),
    );
    if (r[0] === 'new') {
      this.held.set(id, r[1]!);
      c.record.mode = r[2] as SharedClaim['mode'];
      // The script's answer is the durability Redis gives (see above): nothing more to wait for.
      return { kind: 'new', mode: c.record.mode, synced: Promise.resolve() };
    }
    const [, fp, rk, pid, st, h, tx, why, m, owner] = r as string[];
    const existing = fp ? { fingerprint: fp, requestKey: rk!, paymentId: pid || null, handed: h === '1', state: st as ClaimState } : null;
    const verdict = judgeClaim(existing, c, owner || null);
    if (verdict === 'repeat') return { kind: 'repeat', claim: { state: st as ClaimState, mode: m as SharedClaim['mode'], tx: tx || null, failure: why || null } };
    // The id was taken and freed again between the two reads: impossible inside one script.
    if (verdict === 'new') throw new Error('claim raced');
    return { kind: 'refused', reason: verdict };
  }

  async handOver(id: string): Promise<boolean> {
    const ok = (await this.redis.handOver(this.key('c', id), this.held.get(id) ?? '')) === 1;
    if (!ok) this.held.delete(id);
    return ok;
  }

  async withdraw(id: string): Promise<boolean> {
    const rec: JournalRecord = { t: 'failed', id, at: Date.now(), reason: 'unrecorded' };
    const ok = (await this.redis.withdraw(this.key('c', id), this.journalKey, GROUP, JSON.stringify(rec), this.minId())) === 1;
    if (ok) this.held.delete(id);
    return ok;
  }

  submitted(id: string, tx: string): void {
    const rec: JournalRecord = { t: 'submitted', id, at: Date.now(), tx };
    this.redis.submitted(this.key('c', id), this.journalKey, GROUP, JSON.stringify(rec), this.minId(), tx).catch((err: Error) => {
      log.warn('payment store: submitted transaction not recorded', { id, tx, error: err.message });
    });
  }

  async finish(id: string, outcome: FinalOutcome): Promise<void> {
    const at = Date.now();
    const rec: JournalRecord = outcome.t === 'settled' ? { t: 'settled', id, at, tx: outcome.tx } : { t: 'failed', id, at, reason: outcome.reason };
    const tx = outcome.t === 'settled' ? (outcome.tx ?? '') : '';
    const why = outcome.t === 'failed' ? outcome.reason : '';
    try {
      await this.redis.finish(this.key('c', id), this.journalKey, GROUP, JSON.stringify(rec), this.minId(), outcome.t, tx, why, this.held.get(id) ?? '');
    } catch (err) {
      // Kept, and sent again at each heartbeat; the entry stays this replica's meanwhile.
      this.unfinished.set(id, outcome);
      throw err;
    }
    this.unfinished.delete(id);
    this.held.delete(id);
    outcome.t === 'settled' ? this.totals.settled++ : this.totals.failed++;
  }

  async lookup(id: string): Promise<(SharedClaim & { body: Buffer | null }) | null> {
    const [[, c], [, body]] = (await this.redis.multi().hmget(this.key('c', id), 'st', 'mode', 'tx', 'why').getBuffer(this.key('body', id)).exec()) as [
      [null, (string | null)[]],
      [null, Buffer | null],
    ];
    if (!c[0]) return null;
    return { state: c[0] as ClaimState, mode: c[1] as SharedClaim['mode'], tx: c[2] || null, failure: c[3] || null, body };
  }

  shareBody(id: string, body: Buffer, expiresAt: number): void {
    if (body.length > MAX_SHARED_BODY) return;
    this.redis.set(this.key('body', id), body, 'PXAT', Math.ceil(expiresAt)).catch((err: Error) => {
      log.warn('payment store: paid answer not shared', { id, error: err.message });
    });
  }

  watch(adopt: (pending: PendingPayment[]) => void): void {
    this.adopt = adopt;
    this.timer = setInterval(() => this.tick(), Math.max(100, Math.floor(this.claimIdleMs / 3)));
    this.timer.unref();
    if (this.available) this.tick();
  }

  private ticking = false;

  /** Heartbeat, outcomes not yet taken, then the entries of replicas gone quiet (and this one's own, at start). */
  private async tick(): Promise<void> {
    if (this.ticking || !this.available) return;
    this.ticking = true;
    try {
      await this.redis.xgroup('CREATE', this.journalKey, GROUP, '$', 'MKSTREAM').catch((err: Error) => {
        if (!err.message.includes('BUSYGROUP')) throw err;
      });
      await this.redis.heartbeat(this.journalKey, GROUP, this.consumer);
      for (const [id, outcome] of this.unfinished) await this.finish(id, outcome);
      if (this.adopt) await this.takeOver(this.adopt);
    } catch (err) {
      log.warn('payment store: upkeep failed', { error: String((err as Error)?.message ?? err) });
    } finally {
      this.ticking = false;
    }
  }

  /** Takes this replica's own entries not yet held (a restart under the same name) and any idle past claimIdleMs. */
  private async takeOver(adopt: (pending: PendingPayment[]) => void): Promise<void> {
    const entries: [string, string[]][] = [];
    const own = (await this.redis.xpending(this.journalKey, GROUP, '-', '+', 5000, this.consumer)) as [string][];
    const held = new Set(this.held.values());
    const mine = own.map((e) => e[0]).filter((sid) => !held.has(sid));
    if (mine.length) entries.push(...((await this.redis.xclaim(this.journalKey, GROUP, this.consumer, 0, ...mine)) as [string, string[]][]));
    let cursor = '0-0';
    do {
      const [next, claimed] = (await this.redis.xautoclaim(this.journalKey, GROUP, this.consumer, this.claimIdleMs, cursor, 'COUNT', 100)) as [string, [string, string[]][]];
      entries.push(...claimed);
      cursor = next;
    } while (cursor !== '0-0');
    const pending: PendingPayment[] = [];
    for (const [sid, fields] of entries) {
      if (!fields) continue;
      const record = JSON.parse(fields[1]!) as AcceptedRecord;
      const [st, tx] = await this.redis.hmget(this.key('c', record.id), 'st', 'tx');
      this.held.set(record.id, sid);
      // Finished, but the replica stopped before acknowledging: nothing left to do.
      if (st === 'settled' || st === 'failed') {
        await this.redis.xack(this.journalKey, GROUP, sid);
        this.held.delete(record.id);
        continue;
      }
      pending.push({ record, tx: tx || null });
    }
    if (pending.length) {
      log.info('payment store: taking over pending settlements', { consumer: this.consumer, count: pending.length });
      adopt(pending);
    }
  }

  sweep(): void {}

  sizes() {
    return { claims: this.held.size, ids: 0, unsettledPayers: 0, journalBytes: 0 };
  }

  unsettledTotal(): null {
    return null;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    // What is still pending stays in this replica's entries: its next start, or another replica, takes it.
    this.redis.disconnect();
  }
}
