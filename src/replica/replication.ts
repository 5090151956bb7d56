/**
 * Replica mode's ingest side: the leader lease (lease.ts) and the item stream
 * (item-stream.ts) over two connections of their own, and what /health says about them.
 */
import type { RedisConfig } from '../config.js';
import type { Scheduler } from '../ingest/scheduler.js';
import type { WireIndex } from '../search/wire-index.js';
import { ItemStream } from './item-stream.js';
import { LeaderLease } from './lease.js';
import { connectRedis } from './redis.js';

export interface Replication {
  /** Publishes what the leader's polls stored. */
  publish(wire: string, lines: Uint8Array[]): void;
  /** Polls with `scheduler` while this replica holds the lease (only when INGEST is on). */
  lead(scheduler: Scheduler): void;
  readonly caughtUp: boolean;
  health(): { role: 'leader' | 'follower'; leader: string | null; replicas_alive: number; caught_up: boolean; applied: number; apply_lag_ms: { p50: number | null; p99: number | null } };
  stop(): Promise<void>;
}

/** `ingest`: this replica polls when it leads; without it, it never takes the lease. */
export async function startReplication(config: RedisConfig, wires: ReadonlyMap<string, WireIndex>, ingest: boolean): Promise<Replication> {
  const [redis, reader] = await Promise.all([connectRedis(config.url, 'wires-lease'), connectRedis(config.url, 'wires-items', BLOCK_TIMEOUT_MS)]);
  let scheduler: Scheduler | null = null;
  const lease = new LeaderLease({
    redis,
    prefix: config.prefix,
    replicaId: config.replicaId,
    leaseMs: config.leaseMs,
    candidate: ingest,
    onChange: (leading) => (leading ? scheduler?.start() : scheduler?.stop()),
  });
  const items = new ItemStream({ redis, reader, prefix: config.prefix, wires, token: lease.token, leadKey: lease.leadKey, leaseMs: config.leaseMs, onDeposed: () => lease.deposed() });
  const following = items.follow();
  lease.start();
  return {
    publish: (wire, lines) => items.publish(wire, lines),
    lead(s) {
      scheduler = s;
      if (lease.leading) s.start();
    },
    get caughtUp() {
      return items.caughtUp;
    },
    health() {
      const { p50, p99 } = items.lag();
      return { role: lease.leading ? 'leader' : 'follower', leader: lease.leader, replicas_alive: lease.alive, caught_up: items.caughtUp, applied: items.applied, apply_lag_ms: { p50, p99 } };
    },
    async stop() {
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
