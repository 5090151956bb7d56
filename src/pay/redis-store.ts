/**
 * The payment store shared by replicas (REDIS_URL): every claim, outcome and record lives in
 * one Redis, so no two replicas can both take an authorization and a repeat on any replica
 * sees what the first one did.
 *
 * A claim is the paid path's one wait on Redis, so it is made of plain commands in one
 * transaction (MULTI/EXEC, applied whole or not at all), not a script: a script's bridge to
 * each command cost more than the commands. Whatever a claim's answer leaves to decide (a
 * repeat, a refusal) is undone or judged in a second round trip, which only those take.
 *
 * Keys, under the prefix (REDIS_PREFIX, default `wires:`):
 * - `pay:a:<payer>:<nonce>`: the claim, the accepted authorization in a few hundred bytes
 *   (claim-value.ts), made with `SET NX GET`: made once, and a repeat reads the first one.
 *   A withdrawn claim becomes `-`, which the payer's retry may claim again.
 * - `pay:s:<payer>:<nonce>`: its state, from its hand-over to a settler on: handed over,
 *   mode, outcome, transaction, failure.
 * - `pay:id:<payer>|<id>`: a payment-identifier id → its claim.
 * - `pay:body:<payer>:<nonce>`: the paid answer, for the payer's retries on another replica
 *   (up to 1 MiB).
 * - `pay:x:<payer>`: the payer's unsettled value, counted by each claim and taken off with
 *   its outcome, so optimistic mode's limit holds across replicas. Each claim's count answers
 *   the total with it in: within the limit, the claim is optimistic.
 * - `pay:own:<replica>`: the claims a replica has accepted and not finished. `pay:hb:<replica>`
 *   is its heartbeat; `pay:replicas` names every replica. A replica whose heartbeat has
 *   lapsed for `claimIdleMs` (SIGKILL, lost box) has its set taken whole by another, which
 *   settles its claims. A double attempt cannot charge twice: the EIP-3009 nonce is
 *   single-use on chain, and a taken-over claim is settled as "uncertain" (a used nonce means
 *   it settled).
 * - `pay:req:<digest>`: a route's payment requirements, which claims name by digest.
 * - `pay:journal`: a stream of every record: accepted (at the hand-over), submitted,
 *   settled, failed. The shared journal, trimmed after `journalDays`.
 * The claim and its state, id and answer expire once the authorization has expired and late
 * retries have had their time.
 *
 * Durability: an accepted record is "written" once Redis has answered the claim (in its
 * memory and, with `appendonly yes`, its AOF: it survives a kill of Redis or of the
 * replica), and "synced" when Redis runs `appendfsync always` (fsynced before it answers).
 * deploy/redis/redis.conf ships `appendfsync always`; `everysec` gives "written" only
 * (a power loss can take the last second).
 *
 * When Redis cannot be reached, commands fail at once (no offline queue, no resending after
 * a reconnect: a resent claim would come back as its own repeat): paid calls answer 503 and
 * nothing is charged.
 *
 * The layout before this one (a claim hash `pay:c:…` and a consumer group `settlers` on the
 * journal) is read for one thing: settlements its replicas left pending are taken over and
 * settled, once they have been idle for `claimIdleMs`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { connectRedis, type Redis as RedisClient } from '../replica/redis.js';
import { log } from '../log.js';
import { decodeClaim, encodeClaim, requirementsOf } from './claim-value.js';
import type { AcceptedRecord, JournalRecord, PendingPayment } from './journal.js';
import type { PaymentRequirements } from './offer.js';
import { judgeClaim, type ClaimResult, type ClaimState, type FinalOutcome, type NewClaim, type PaymentStore, type SharedClaim } from './store.js';

export interface RedisStoreOptions {
  url: string;
  /** Key prefix, so several services can share one Redis. */
  prefix?: string;
  /** This replica's name (stable across restarts: it takes back its own claims at start). */
  consumer?: string;
  /** A replica silent this long has its claims taken over by another (ms). */
  claimIdleMs?: number;
  /** Journal records older than this are trimmed from the stream (days). */
  journalDays?: number;
}

const MAX_SHARED_BODY = 1 << 20;
/** A payer's unsettled counter outlives a claim that expired before its outcome (only ever too high: calls settle synchronously). */
const UNSETTLED_TTL_MS = 3_600_000;
/** Stored requirements outlive every claim naming them (minutes): each replica writes them again hourly. */
const REQUIREMENTS_TTL_MS = 7 * 86_400_000;
const REQUIREMENTS_REFRESH_MS = 3_600_000;
/** A withdrawn claim: never confirmed to anyone, so the payer's retry may claim it again. */
const WITHDRAWN = '-';
/** The previous layout's consumer group, read only to settle what its replicas left pending. */
const LEGACY_GROUP = 'settlers';

/** Lua: is the claim value in KEYS[1] (held in `v`) this attempt's, named by token ARGV[1] ('' for any)? */
const OURS = `(ARGV[1] == '' or string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '\\n')`;
/** Lua: the fields of the claim value in `v` (claim-value.ts); the 7th is the amount it counted in its payer's unsettled value. */
const FIELDS = `cjson.decode(string.sub(v, string.find(v, '\\n', 1, true) + 1))`;
/** Lua: appends ARGV[n] to the journal (KEYS[j]), trimmed to ids after ARGV[n + 1]. */
const append = (j: number, n: number) => `redis.call('XADD', KEYS[${j}], 'MINID', '~', ARGV[${n + 1}], '*', 'r', ARGV[${n}])`;

/** The payer's retry of a withdrawn claim takes its place, unless another retry did first. */
const RECLAIM = `
if redis.call('GET', KEYS[1]) ~= '${WITHDRAWN}' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[2])
return 1
`;

/**
 * Marks the claim handed to a settler, with the mode it was accepted in, and journals the
 * accepted record; unless it was withdrawn (and perhaps claimed anew, under another token).
 * An expired claim is past any repeat: handed.
 */
const HAND_OVER = `
local v = redis.call('GET', KEYS[1])
if not v then return 1 end
if v == '${WITHDRAWN}' or not ${OURS} then return 0 end
if redis.call('HSETNX', KEYS[2], 'h', '1') == 1 then
  redis.call('HSET', KEYS[2], 'mode', ARGV[2])
  redis.call('PEXPIREAT', KEYS[2], redis.call('PEXPIRETIME', KEYS[1]))
  if ARGV[3] ~= '' then ${append(3, 3)} end
end
return 1
`;

/** Withdraws a claim never handed over: marked withdrawn, its count and payment-identifier id released. */
const WITHDRAW = `
local v = redis.call('GET', KEYS[1])
if not v or v == '${WITHDRAWN}' then return 1 end
if redis.call('HGET', KEYS[2], 'h') == '1' then return 0 end
local f = ${FIELDS}
if redis.call('DECRBY', KEYS[3], f[7]) <= 0 then redis.call('DEL', KEYS[3]) end
-- The payment-identifier id, read as store.ts's readPaymentId reads it (the last field holds the extensions).
local ext = f[12].extensions
ext = type(ext) == 'table' and ext['payment-identifier']
local info = type(ext) == 'table' and ext.info
local pid = type(info) == 'table' and info.id
if type(pid) == 'string' and redis.call('GET', ARGV[1] .. pid) == ARGV[2] then redis.call('DEL', ARGV[1] .. pid) end
redis.call('SET', KEYS[1], '${WITHDRAWN}', 'KEEPTTL')
redis.call('SREM', KEYS[4], ARGV[2])
${append(5, 3)}
return 1
`;

/** Records an outcome: the state, the payer's count taken off (once), the claim finished, the journal record. */
const FINISH = `
local v = redis.call('GET', KEYS[1])
if v and v ~= '${WITHDRAWN}' then
  local st = redis.call('HGET', KEYS[2], 'st')
  if st ~= 'settled' and st ~= 'failed' then
    if redis.call('DECRBY', KEYS[3], ${FIELDS}[7]) <= 0 then redis.call('DEL', KEYS[3]) end
  end
  redis.call('HSET', KEYS[2], 'st', ARGV[1], 'tx', ARGV[2], 'why', ARGV[3])
  redis.call('PEXPIREAT', KEYS[2], redis.call('PEXPIRETIME', KEYS[1]))
end
redis.call('SREM', KEYS[4], ARGV[4])
${append(5, 5)}
`;

/** Notes a submitted transaction on the claim's state and in the journal. */
const SUBMITTED = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'tx', ARGV[3]) end
${append(2, 1)}
`;

/** Takes the claims of a replica whose heartbeat lapsed, all at once (so only one replica gets them), and forgets the replica. */
const TAKE_REPLICA = `
if redis.call('EXISTS', KEYS[3]) == 1 then return {} end
local ids = redis.call('SMEMBERS', KEYS[1])
if #ids > 0 then redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1]) end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[4], ARGV[1])
return ids
`;

/** The previous layout's outcome: its claim hash, its payer's count, its group entry acknowledged. */
const LEGACY_FINISH = `
local x = redis.call('HMGET', KEYS[1], 'st', 'xk', 'amt')
if x[1] == 'pending' and x[2] then
  if redis.call('DECRBY', x[2], x[3]) <= 0 then redis.call('DEL', x[2]) end
end
if x[1] then redis.call('HSET', KEYS[1], 'st', ARGV[1], 'tx', ARGV[2], 'why', ARGV[3]) end
redis.call('XACK', KEYS[2], '${LEGACY_GROUP}', ARGV[4])
${append(2, 5)}
`;

interface Scripts {
  reclaim(claim: string, value: string, expiresAt: string): Promise<number>;
  handOver(claim: string, state: string, journal: string, token: string, mode: string, record: string, minId: string): Promise<number>;
  withdraw(claim: string, state: string, unsettled: string, own: string, journal: string, idPrefix: string, id: string, record: string, minId: string): Promise<number>;
  finish(claim: string, state: string, unsettled: string, own: string, journal: string, ...args: string[]): Promise<void>;
  submitted(state: string, journal: string, record: string, minId: string, tx: string): Promise<void>;
  takeReplica(own: string, mine: string, heartbeat: string, replicas: string, name: string): Promise<string[]>;
  legacyFinish(claim: string, journal: string, ...args: string[]): Promise<void>;
}

/** A claim's transaction, and the keys and value its answer is read against. */
export interface ClaimPlan {
  commands: string[][];
  /** The digest of the requirements it stores, when it does. */
  requirements: string | null;
  claimKey: string;
  value: string;
  expiresAt: string;
  unsettled: string;
  idKey: string | null;
}

/** A claim this replica settles: the attempt's token, its mode, and its record for the journal. */
interface Held {
  token: string;
  mode: SharedClaim['mode'];
  record: AcceptedRecord;
  /** Taken over from the previous layout: its group entry. */
  legacy?: string;
}

export class RedisStore implements PaymentStore {
  readonly kind = 'redis';
  readonly totals = { settled: 0, failed: 0 };
  readonly consumer: string;
  private readonly prefix: string;
  private readonly journalKey: string;
  private readonly ownKey: string;
  private readonly claimIdleMs: number;
  private readonly journalMs: number;
  private readonly held = new Map<string, Held>();
  /** Outcomes Redis did not take (unreachable): sent again at each heartbeat. */
  private readonly unfinished = new Map<string, FinalOutcome>();
  /** When this process last stored each route's requirements, by digest. */
  private readonly requirementsStored = new Map<string, number>();
  /** Requirements by digest, this process's own and those read back for claims taken over. */
  private readonly requirementsByDigest = new Map<string, PaymentRequirements>();
  /** Tokens: this process's random part, then a count. */
  private readonly tokenBase = randomBytes(6).toString('base64url');
  private tokens = 0;
  private timer: NodeJS.Timeout | null = null;
  private adopt: ((pending: PendingPayment[]) => void) | null = null;

  private constructor(
    private readonly redis: RedisClient & Scripts,
    opts: RedisStoreOptions,
  ) {
    this.prefix = opts.prefix ?? 'wires:';
    this.journalKey = `${this.prefix}pay:journal`;
    this.consumer = opts.consumer ?? `${hostname()}:${process.pid}`;
    this.ownKey = this.key('own', this.consumer);
    this.claimIdleMs = opts.claimIdleMs ?? 30_000;
    this.journalMs = (opts.journalDays ?? 7) * 86_400_000;
  }

  /** Connects (in the background: an unreachable Redis at start only means 503s until it is reached). */
  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const redis = (await connectRedis(opts.url, 'wires-payments')) as RedisClient & Scripts;
    redis.defineCommand('reclaim', { numberOfKeys: 1, lua: RECLAIM });
    redis.defineCommand('handOver', { numberOfKeys: 3, lua: HAND_OVER });
    redis.defineCommand('withdraw', { numberOfKeys: 5, lua: WITHDRAW });
    redis.defineCommand('finish', { numberOfKeys: 5, lua: FINISH });
    redis.defineCommand('submitted', { numberOfKeys: 2, lua: SUBMITTED });
    redis.defineCommand('takeReplica', { numberOfKeys: 4, lua: TAKE_REPLICA });
    redis.defineCommand('legacyFinish', { numberOfKeys: 2, lua: LEGACY_FINISH });
    const store = new RedisStore(redis, opts);
    redis.on('ready', () => void store.tick());
    return store;
  }

  get available(): boolean {
    return this.redis.status === 'ready';
  }

  private key(kind: 'a' | 's' | 'c' | 'id' | 'body' | 'x' | 'own' | 'hb' | 'req' | 'replicas', id = ''): string {
    return `${this.prefix}pay:${kind}${id && `:${id}`}`;
  }

  private minId(): string {
    return String(Math.max(0, Date.now() - this.journalMs));
  }

  /**
   * A claim's commands, sent in one transaction: the claim `SET NX GET` (made, or the first
   * one's value), the payment id's likewise, the payer's count, and this replica's ownership;
   * first, when this process has not stored them lately, the route's requirements. Exposed
   * for bench/redis-capacity.ts, which replays them at Redis's saturation.
   */
  claimCommands(c: NewClaim, token: string): ClaimPlan {
    const { id, amount } = c.record;
    const payer = id.slice(0, id.indexOf(':'));
    const plan: ClaimPlan = {
      commands: [],
      requirements: null,
      claimKey: this.key('a', id),
      value: encodeClaim(token, c.record),
      expiresAt: String(Math.ceil(c.expiresAt)),
      unsettled: this.key('x', payer),
      idKey: c.paymentId ? `${this.key('id', payer)}|${c.paymentId}` : null,
    };
    const { digest, json } = requirementsOf(c.record.requirements);
    if (Date.now() - (this.requirementsStored.get(digest) ?? 0) >= REQUIREMENTS_REFRESH_MS) {
      plan.requirements = digest;
      this.requirementsByDigest.set(digest, c.record.requirements);
      plan.commands.push(['SET', this.key('req', digest), json, 'PX', String(REQUIREMENTS_TTL_MS)]);
    }
    plan.commands.push(['SET', plan.claimKey, plan.value, 'NX', 'GET', 'PXAT', plan.expiresAt]);
    if (plan.idKey) plan.commands.push(['SET', plan.idKey, id, 'NX', 'GET', 'PXAT', plan.expiresAt]);
    plan.commands.push(['INCRBY', plan.unsettled, amount], ['PEXPIRE', plan.unsettled, String(UNSETTLED_TTL_MS)], ['SADD', this.ownKey, id]);
    return plan;
  }

  /** Claims in one transaction (claimCommands): new when the claim and its payment id were free, and then the count decides the mode. */
  async claim(c: NewClaim): Promise<ClaimResult> {
    const { id, amount } = c.record;
    const token = `${this.tokenBase}${(++this.tokens).toString(36)}`;
    const { commands, requirements, claimKey, value, expiresAt, unsettled, idKey } = this.claimCommands(c, token);
    const tx = this.redis.multi();
    for (const [name, ...args] of commands) tx.call(name!, ...args);
    const answers = (await tx.exec())!.slice(requirements ? 1 : 0).map(([err, answer]) => {
      if (err) throw err;
      return answer;
    });
    if (requirements) this.requirementsStored.set(requirements, Date.now());
    const previous = answers[0] as string | null;
    const owner = idKey ? (answers[1] as string | null) : null;
    const [count, , added] = answers.slice(idKey ? 2 : 1) as [number, number, number];
    const mine = owner === null || owner === id;

    if (mine && (previous === null || (previous === WITHDRAWN && (await this.redis.reclaim(claimKey, value, expiresAt)) === 1))) {
      const mode = c.limit !== null && BigInt(count) <= c.limit ? 'optimistic' : 'sync';
      c.record.mode = mode;
      this.held.set(id, { token, mode, record: c.record });
      // The transaction's answer is the durability Redis gives (see above): nothing more to wait for.
      return { kind: 'new', mode, synced: Promise.resolve() };
    }

    // Not new: what this attempt counted and owned is given back, and the claim judged.
    const undo = this.redis.multi().decrby(unsettled, amount);
    if (added === 1) undo.srem(this.ownKey, id);
    if (previous === WITHDRAWN && mine) {
      // Withdrawn, and claimed again by a concurrent retry first: judged against that one.
      await undo.exec();
      return this.claim(c);
    }
    const seen = previous && previous !== WITHDRAWN ? decodeClaim(previous) : null;
    // A claim made here under a payment id another claim holds: withdrawn at once.
    if (previous === null) undo.call('SET', claimKey, WITHDRAWN, 'KEEPTTL');
    // The id taken here for a claim that does not carry it: released.
    if (idKey && owner === null && seen?.paymentId !== c.paymentId) undo.del(idKey);
    undo.hmget(this.key('s', id), 'h', 'st', 'mode', 'tx', 'why');
    const undone = (await undo.exec())!;
    const [h, st, mode, txHash, why] = undone[undone.length - 1]![1] as (string | null)[];
    const state = (st ?? 'pending') as ClaimState;
    const existing = seen && { fingerprint: seen.fingerprint, requestKey: seen.requestKey, paymentId: seen.paymentId, handed: h === '1', state };
    const verdict = judgeClaim(existing, c, owner);
    if (verdict === 'repeat') {
      return { kind: 'repeat', claim: { state, mode: this.modeOf(id, mode), tx: txHash || null, failure: why || null } };
    }
    if (verdict === 'new') throw new Error('claim raced');
    return { kind: 'refused', reason: verdict };
  }

  /** The mode a claim was accepted in: as its state says from the hand-over on, before it as this replica decided, else not known here (sync). */
  private modeOf(id: string, stored?: string | null): SharedClaim['mode'] {
    return (stored ?? this.held.get(id)?.mode ?? 'sync') as SharedClaim['mode'];
  }

  async handOver(id: string): Promise<boolean> {
    const held = this.held.get(id);
    // The previous layout's replicas, the only readers of its claim hashes, are stopped.
    if (held?.legacy) return true;
    const record = held ? JSON.stringify({ ...held.record, mode: held.mode }) : '';
    const ok = (await this.redis.handOver(this.key('a', id), this.key('s', id), this.journalKey, held?.token ?? '', this.modeOf(id), record, this.minId())) === 1;
    if (!ok) this.held.delete(id);
    return ok;
  }

  async withdraw(id: string): Promise<boolean> {
    const rec: JournalRecord = { t: 'failed', id, at: Date.now(), reason: 'unrecorded' };
    const payer = id.slice(0, id.indexOf(':'));
    const ok =
      (await this.redis.withdraw(this.key('a', id), this.key('s', id), this.key('x', payer), this.ownKey, this.journalKey, `${this.key('id', payer)}|`, id, JSON.stringify(rec), this.minId())) === 1;
    if (ok) this.held.delete(id);
    return ok;
  }

  submitted(id: string, tx: string): void {
    const rec: JournalRecord = { t: 'submitted', id, at: Date.now(), tx };
    this.redis.submitted(this.key('s', id), this.journalKey, JSON.stringify(rec), this.minId(), tx).catch((err: Error) => {
      log.warn('payment store: submitted transaction not recorded', { id, tx, error: err.message });
    });
  }

  async finish(id: string, outcome: FinalOutcome): Promise<void> {
    const at = Date.now();
    const rec: JournalRecord = outcome.t === 'settled' ? { t: 'settled', id, at, tx: outcome.tx } : { t: 'failed', id, at, reason: outcome.reason };
    const tx = outcome.t === 'settled' ? (outcome.tx ?? '') : '';
    const why = outcome.t === 'failed' ? outcome.reason : '';
    const legacy = this.held.get(id)?.legacy;
    try {
      if (legacy) await this.redis.legacyFinish(this.key('c', id), this.journalKey, outcome.t, tx, why, legacy, JSON.stringify(rec), this.minId());
      else {
        const unsettled = this.key('x', id.slice(0, id.indexOf(':')));
        await this.redis.finish(this.key('a', id), this.key('s', id), unsettled, this.ownKey, this.journalKey, outcome.t, tx, why, id, JSON.stringify(rec), this.minId());
      }
    } catch (err) {
      // Kept, and sent again at each heartbeat; the claim stays this replica's meanwhile.
      this.unfinished.set(id, outcome);
      throw err;
    }
    this.unfinished.delete(id);
    this.held.delete(id);
    outcome.t === 'settled' ? this.totals.settled++ : this.totals.failed++;
  }

  async lookup(id: string): Promise<(SharedClaim & { body: Buffer | null }) | null> {
    const [[, length], [, s], [, body]] = (await this.redis.pipeline().strlen(this.key('a', id)).hmget(this.key('s', id), 'st', 'mode', 'tx', 'why').getBuffer(this.key('body', id)).exec()) as [
      [null, number],
      [null, (string | null)[]],
      [null, Buffer | null],
    ];
    if (length === 0) return null;
    if (length === WITHDRAWN.length) return { state: 'failed', mode: 'sync', tx: null, failure: 'unrecorded', body: null };
    const [st, mode, tx, why] = s;
    return { state: (st ?? 'pending') as ClaimState, mode: this.modeOf(id, mode), tx: tx || null, failure: why || null, body };
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
  private ownTaken = false;

  /** Heartbeat, outcomes not yet taken, then the claims of replicas gone quiet (and this one's own, at start). */
  private async tick(): Promise<void> {
    if (this.ticking || !this.available) return;
    this.ticking = true;
    try {
      await this.redis.multi().set(this.key('hb', this.consumer), Date.now(), 'PX', this.claimIdleMs).sadd(this.key('replicas'), this.consumer).exec();
      for (const [id, outcome] of this.unfinished) await this.finish(id, outcome);
      if (this.adopt) await this.takeOver(this.adopt);
    } catch (err) {
      log.warn('payment store: upkeep failed', { error: String((err as Error)?.message ?? err) });
    } finally {
      this.ticking = false;
    }
  }

  /** Takes this replica's own claims not yet held (a restart under the same name), those of replicas gone quiet, and the previous layout's. */
  private async takeOver(adopt: (pending: PendingPayment[]) => void): Promise<void> {
    // Its own set is read once per start: from then on, this process holds every claim it makes.
    const ids = this.ownTaken ? [] : (await this.redis.smembers(this.ownKey)).filter((id) => !this.held.has(id));
    for (const other of await this.redis.smembers(this.key('replicas'))) {
      if (other === this.consumer) continue;
      ids.push(...(await this.redis.takeReplica(this.key('own', other), this.ownKey, this.key('hb', other), this.key('replicas'), other)));
    }
    const pending: PendingPayment[] = [];
    for (let i = 0; i < ids.length; i += 100) {
      const batch = ids.slice(i, i + 100);
      const read = this.redis.pipeline();
      for (const id of batch) read.get(this.key('a', id)).hmget(this.key('s', id), 'st', 'tx', 'mode');
      const answers = (await read.exec())!;
      for (const [k, id] of batch.entries()) {
        const value = answers[2 * k]![1] as string | null;
        const [st, tx, mode] = answers[2 * k + 1]![1] as (string | null)[];
        // Expired, withdrawn, or finished before its replica could say so: nothing to settle.
        if (!value || value === WITHDRAWN || st === 'settled' || st === 'failed') {
          await this.redis.srem(this.ownKey, id);
          continue;
        }
        const claim = decodeClaim(value);
        const requirements = await this.requirementsFor(claim.requirements);
        if (!requirements) {
          log.error('payment store: a pending claim names requirements Redis no longer has; it cannot be settled', { id, requirements: claim.requirements });
          await this.redis.srem(this.ownKey, id);
          continue;
        }
        const accepted = this.modeOf(id, mode);
        const held: Held = { token: claim.token, mode: accepted, record: claim.record(id, requirements, accepted) };
        this.held.set(id, held);
        pending.push({ record: held.record, tx: tx || null });
      }
    }
    this.ownTaken = true;
    pending.push(...(await this.takeOverLegacy()));
    if (pending.length) {
      log.info('payment store: taking over pending settlements', { consumer: this.consumer, count: pending.length });
      adopt(pending);
    }
  }

  private async requirementsFor(digest: string): Promise<PaymentRequirements | null> {
    let requirements = this.requirementsByDigest.get(digest);
    if (!requirements) {
      const json = await this.redis.get(this.key('req', digest));
      if (!json) return null;
      requirements = JSON.parse(json) as PaymentRequirements;
      this.requirementsByDigest.set(digest, requirements);
    }
    return requirements;
  }

  /** The previous layout's pending settlements, idle past claimIdleMs (their replicas stopped): taken with XAUTOCLAIM, as those replicas did. */
  private async takeOverLegacy(): Promise<PendingPayment[]> {
    const pending: PendingPayment[] = [];
    let cursor = '0-0';
    do {
      let next: string;
      let claimed: [string, string[] | null][];
      try {
        [next, claimed] = (await this.redis.xautoclaim(this.journalKey, LEGACY_GROUP, this.consumer, this.claimIdleMs, cursor, 'COUNT', 100)) as [string, [string, string[] | null][]];
      } catch (err) {
        if (/NOGROUP|no such key/i.test((err as Error).message)) return pending;
        throw err;
      }
      for (const [sid, fields] of claimed) {
        if (!fields) continue;
        const record = JSON.parse(fields[1]!) as AcceptedRecord;
        const [st, tx] = await this.redis.hmget(this.key('c', record.id), 'st', 'tx');
        if (st === 'settled' || st === 'failed') {
          await this.redis.xack(this.journalKey, LEGACY_GROUP, sid);
          continue;
        }
        this.held.set(record.id, { token: '', mode: record.mode, record, legacy: sid });
        pending.push({ record, tx: tx || null });
      }
      cursor = next;
    } while (cursor !== '0-0');
    return pending;
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
    // What is still pending stays in this replica's set: its next start, or another replica, takes it.
    this.redis.disconnect();
  }
}
