/**
 * Connections to the Redis replicas share (REDIS_URL). ioredis is loaded only here, and only
 * in replica mode. Every connection fails fast: no offline queue (a command while Redis is
 * unreachable rejects at once) and no resending after a reconnect (a claim resent would come
 * back as its own repeat; a lease renewal resent late could outlive the lease).
 */
import type { Redis } from 'ioredis';
import { log } from '../log.js';

export type { Redis } from 'ioredis';

/** `commandTimeoutMs`: raised for a connection that blocks on XREAD. */
export async function connectRedis(url: string, name: string, commandTimeoutMs = 2000): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    connectionName: name,
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    // Logged once per distinct error, not at every reconnection attempt.
    if (err.message !== lastError) log.warn('Redis error', { connection: name, error: err.message });
    lastError = err.message;
  });
  redis.on('ready', () => {
    if (lastError) log.info('Redis reachable again', { connection: name });
    lastError = '';
  });
  // Returned once connected, or once the first attempt fails: a service started beside a
  // running Redis takes its first paid call, and one started while Redis is down starts at
  // once and answers 503 until it is reached.
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done).off('error', done);
      resolve();
    };
    const timer = setTimeout(done, 2000);
    redis.once('ready', done).once('error', done);
  });
  return redis;
}

/** Logs a failure once until it changes: a Redis that is down fails every call the same way. */
export function warnOnChange(what: string): (err: unknown) => void {
  let last = '';
  return (err) => {
    const message = String((err as Error)?.message ?? err);
    if (message !== last) log.warn(what, { error: message });
    last = message;
  };
}
