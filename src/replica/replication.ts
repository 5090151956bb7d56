/**
 * Replica mode's ingest side: the leader lease (lease.ts), the item stream (item-stream.ts)
 * and the sources' schedules, and what /health says about them. Also what rides on the
 * replicas' pub/sub channels (channels.ts): the failed-payment budget's charges
 * (failure-share.ts) and the WebSub callbacks relayed to the leader (websub-relay.ts).
 */
import type { RedisConfig } from '../config.js';
import type { PollState, Scheduler } from '../ingest/scheduler.js';
import type { WebSub, WebSubCallbacks } from '../ingest/websub.js';
import { log } from '../log.js';
import type { FailureBudget } from '../pay/failure-budget.js';
import type { WireIndex } from '../search/wire-index.js';
import { Channels } from './channels.js';
import { shareFailures } from './failure-share.js';
import { ItemStream } from './item-stream.js';
import { LeaderLease } from './lease.js';
import { connectRedis, warnOnChange } from './redis.js';
import { WebSubRelay } from './websub-relay.js';

export interface Replication {
  /** Publishes what the leader's polls stored. */
  publish(wire: string, lines: Uint8Array[]): void;
  /** Keeps a source's schedule after the leader polled it, for the next leader. */
  savePollState(sourceId: string, state: PollState): void;
  /** Polls with `scheduler` while this replica holds the lease (only when INGEST is on). */
  lead(scheduler: Scheduler): void;
  readonly caughtUp: boolean;
  /** What answers this replica's WebSub callbacks (null: push is off). */
  readonly websub: WebSubCallbacks | null;
  health(): { role: 'leader' | 'follower'; leader: string | null; replicas_alive: number; caught_up: boolean; applied: number; apply_lag_ms: { p50: number | null; p99: number | null } };
  stop(): Promise<void>;
}

export interface ReplicaParts {
  wires: ReadonlyMap<string, WireIndex>;
  /** This replica polls when it leads; without it, it never takes the lease. */
  ingest: boolean;
  /** The payment core's failed-payment budget (none without payments). */
  failures: FailureBudget | undefined;
  /** WebSub push: this replica's subscriber (null when it does not ingest), and the callbacks' body cap; null when push is off. */
  websub: { local: WebSub | null; maxBodyBytes: number } | null;
}

export async function startReplication(config: RedisConfig, parts: ReplicaParts): Promise<Replication> {
  const { wires, ingest, failures } = parts;
  const [redis, reader, channels] = await Promise.all([connectRedis(config.url, 'wires-lease'), connectRedis(config.url, 'wires-items', BLOCK_TIMEOUT_MS), Channels.open(config.url)]);
  const shared = failures ? await shareFailures(redis, channels, `${config.prefix}failures`, config.replicaId, failures) : null;
  const relay = parts.websub ? await WebSubRelay.open(redis, channels, config.prefix, config.replicaId, parts.websub.maxBodyBytes, parts.websub.local) : null;
  let scheduler: Scheduler | null = null;
  const lease = new LeaderLease({
    redis,
    prefix: config.prefix,
    replicaId: config.replicaId,
    leaseMs: config.leaseMs,
    candidate: ingest,
    onChange: (leading) => {
      void relay?.lead(leading);
      if (leading) void takeOver();
      else scheduler?.stop();
    },
  });
  const statesKey = `${config.prefix}sources`;
  const warnSave = warnOnChange('replica: a source schedule could not be saved');
  /** Leading now: the previous leader's schedules first, so nothing is polled before it is due. */
  async function takeOver(): Promise<void> {
    const s = scheduler;
    if (!s) return;
    try {
      const saved = await redis.hgetall(statesKey);
      const states = new Map<string, PollState>();
      for (const [id, json] of Object.entries(saved)) {
        try {
          states.set(id, JSON.parse(json) as PollState);
        } catch {
          // A field this version cannot read: that source is polled at once, as on a first start.
        }
      }
      s.restore(states);
    } catch (err) {
      log.warn("replica: the previous leader's schedules could not be read; polling every source now", { error: (err as Error).message });
    }
    if (lease.leading) s.start();
  }
  const items = new ItemStream({ redis, reader, prefix: config.prefix, wires, token: lease.token, leadKey: lease.leadKey, leaseMs: config.leaseMs, onDeposed: () => lease.deposed() });
  const following = items.follow();
  lease.start();
  return {
    publish: (wire, lines) => items.publish(wire, lines),
    savePollState(sourceId, state) {
      redis.hset(statesKey, sourceId, JSON.stringify(state)).catch(warnSave);
    },
    lead(s) {
      scheduler = s;
      if (lease.leading) void takeOver();
    },
    websub: relay,
    get caughtUp() {
      return items.caughtUp;
    },
    health() {
      const { p50, p99 } = items.lag();
      return { role: lease.leading ? 'leader' : 'follower', leader: lease.leader, replicas_alive: lease.alive, caught_up: items.caughtUp, applied: items.applied, apply_lag_ms: { p50, p99 } };
    },
    async stop() {
      shared?.stop();
      channels.close();
      await lease.stop();
      items.stop();
      reader.disconnect();
      await following.catch(() => {});
      redis.disconnect();
    },
  };
}

/** The reader blocks for up to a second on XREAD: its commands may take that long. */
const BLOCK_TIMEOUT_MS = 5000;
