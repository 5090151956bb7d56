/**
 * One ingesting leader among the replicas: a lease in Redis (`lead`, a token unique to this
 * process, expiring after `leaseMs`), taken when free and renewed every third of it. Only the
 * leader polls the sources; the others apply what it publishes (item-stream.ts).
 *
 * Fencing: the token is checked by the script that publishes items, so a leader that lost
 * its lease (a pause longer than the lease, a partition) cannot write once another holds it;
 * its refused publish makes it step down. A leader that cannot reach Redis keeps polling and
 * buffers what it would publish: while Redis is down nobody else can take the lease either.
 *
 * Every replica also marks itself alive (`replicas`, a sorted set by last heartbeat) for
 * /health.
 */
import { randomBytes } from 'node:crypto';
import { log } from '../log.js';
import { warnOnChange, type Redis } from './redis.js';

/** Takes the lease when free or renews it when held; records the heartbeat; says who leads. */
const TICK = `
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[2], ms, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - 3 * tonumber(ARGV[2]))
local alive = redis.call('ZCARD', KEYS[2])
local cur = redis.call('GET', KEYS[1])
if not cur and ARGV[4] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  cur = ARGV[1]
elseif cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return {cur or '', alive}
`;

/** Gives the lease up (a clean stop): another replica leads at its next tick. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('ZREM', KEYS[2], ARGV[2])
`;

interface Scripts {
  leaseTick(lead: string, replicas: string, token: string, leaseMs: string, replicaId: string, candidate: '0' | '1'): Promise<[string, number]>;
  leaseRelease(lead: string, replicas: string, token: string, replicaId: string): Promise<void>;
}

export interface LeaseOptions {
  redis: Redis;
  prefix: string;
  replicaId: string;
  leaseMs: number;
  /** May this replica lead (it polls: INGEST on)? Otherwise it only heartbeats. */
  candidate: boolean;
  /** Called when this replica becomes the leader (true) or stops being it (false). */
  onChange: (leading: boolean) => void;
}

export class LeaderLease {
  /** Unique to this process: a restarted replica is a new holder. */
  readonly token: string;
  readonly leadKey: string;
  private readonly replicasKey: string;
  private readonly redis: Redis & Scripts;
  leading = false;
  /** The replica holding the lease at the last tick (null: unknown, Redis unreachable). */
  leader: string | null = null;
  /** Replicas that heartbeated within three ticks' worth of lease. */
  alive = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly warn = warnOnChange('leader lease: Redis did not answer');

  constructor(private readonly opts: LeaseOptions) {
    this.token = `${opts.replicaId}#${randomBytes(6).toString('hex')}`;
    this.leadKey = `${opts.prefix}lead`;
    this.replicasKey = `${opts.prefix}replicas`;
    this.redis = opts.redis as Redis & Scripts;
    this.redis.defineCommand('leaseTick', { numberOfKeys: 2, lua: TICK });
    this.redis.defineCommand('leaseRelease', { numberOfKeys: 2, lua: RELEASE });
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.opts.leaseMs / 3)));
    this.timer.unref();
    void this.tick();
  }

  async tick(): Promise<void> {
    let holder: string;
    try {
      [holder, this.alive] = await this.redis.leaseTick(this.leadKey, this.replicasKey, this.token, String(this.opts.leaseMs), this.opts.replicaId, this.opts.candidate ? '1' : '0');
    } catch (err) {
      // Unreachable: nobody can take the lease meanwhile; a leader keeps polling.
      this.warn(err);
      this.leader = null;
      return;
    }
    this.leader = holder ? holder.split('#')[0]! : null;
    this.set(holder === this.token);
  }

  /** Another replica holds the lease (a fenced write was refused): stop polling now. */
  deposed(): void {
    this.set(false);
  }

  private set(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    log.info(leading ? 'this replica leads: polling the sources' : 'this replica follows: applying what the leader publishes', { replica: this.opts.replicaId });
    this.opts.onChange(leading);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.set(false);
    await this.redis.leaseRelease(this.leadKey, this.replicasKey, this.token, this.opts.replicaId).catch(() => {});
  }
}
