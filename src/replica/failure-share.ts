/**
 * The failed-payment budget across replicas. Each replica enforces the budget from its own
 * table (src/pay/failure-budget.ts), so refusing a client over its budget never waits on
 * Redis: that refusal exists to cost the serving thread nothing. What is shared is the
 * charges: every failure a replica charges is published, batched every BATCH_MS, and every
 * other replica charges it too. A client spreading forged payments over N replicas so gets
 * the budget once, not N times, give or take what it sends within one batch.
 *
 * Pub/sub, not a stream: a charge lost while Redis is unreachable costs only the sharing
 * (each replica still holds the budget by itself), and there is nothing to trim.
 */
import { steadyNow } from '../clock.js';
import type { FailureBudget } from '../pay/failure-budget.js';
import type { Channels } from './channels.js';
import { type Redis, warnOnChange } from './redis.js';

const BATCH_MS = 50;
/** Distinct addresses per batch at most: beyond it (a flood of addresses), the rest are charged here only. */
const MAX_BATCH = 10_000;

interface Batch {
  from: string;
  /** Address → failures charged since the last batch. */
  c: [string, number][];
}

export interface FailureShare {
  stop(): void;
}

export async function shareFailures(redis: Redis, channels: Channels, channel: string, replicaId: string, budget: FailureBudget): Promise<FailureShare> {
  if (!budget.enabled) return { stop() {} };
  const warn = warnOnChange('failed-payment budget: sharing failed');
  await channels.listen(channel, (message) => {
    let batch: Batch;
    try {
      batch = JSON.parse(message.toString()) as Batch;
    } catch {
      return;
    }
    if (batch.from === replicaId || !Array.isArray(batch.c)) return;
    const now = steadyNow();
    for (const [client, n] of batch.c) if (typeof client === 'string' && Number.isInteger(n) && n > 0) budget.chargeShared(client, now, n);
  });

  let pending = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    const batch: Batch = { from: replicaId, c: [...pending] };
    pending = new Map();
    redis.publish(channel, JSON.stringify(batch)).catch(warn);
  };
  budget.share = (client) => {
    const n = pending.get(client);
    if (n === undefined && pending.size >= MAX_BATCH) return;
    pending.set(client, (n ?? 0) + 1);
    timer ??= setTimeout(flush, BATCH_MS);
  };
  return {
    stop() {
      budget.share = null;
      if (timer) clearTimeout(timer);
    },
  };
}
