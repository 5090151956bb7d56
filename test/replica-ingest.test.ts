/**
 * One ingesting leader for several replicas, for real: redis-server, publishers (RSS feeds
 * over loopback HTTP: one plain, one that refuses with 503, one that names a WebSub hub; every
 * other source points at a closed loopback port), a WebSub hub, the devnet for paid streams,
 * and replica processes. Each replica polls with its own User-Agent, so the publishers' logs
 * say which one polled. PUBLIC_URL names r2, which never ingests: every hub callback reaches
 * a replica that does not lead, as behind a load balancer it may.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SOURCES } from '../src/catalog/index.js';
import { WiresClient } from '../src/client/client.js';
import type { StreamItem } from '../src/client/stream.js';
import { startDevnet, type Devnet } from '../src/devnet/devnet.js';
import { startRedis, type LocalRedis } from '../src/devnet/redis.js';
import { freePort } from './helpers/loopback.js';
import { startPublisher, type Publisher } from './helpers/publisher.js';
import { spawnService, type ServiceProcess } from './helpers/spawn-service.js';
import { until } from './helpers/until.js';
import { startWebSubHub, type WebSubHub } from './helpers/websub-hub.js';

const LEASE_SEC = 2;
const POLL_SEC = 2;

let devnet: Devnet;
let redis: LocalRedis;
let publisher: Publisher;
/** A publisher that answers every poll with 503 and Retry-After: 600. */
let refusing: Publisher;
let hub: WebSubHub;
/** A publisher that names the hub. */
let pushed: Publisher;
/** r2's port, which PUBLIC_URL names. */
let publicPort: number;
let sourcesFile: string;
const replicas = new Map<string, ServiceProcess>();

interface Health {
  status: string;
  wires: Record<string, { items: number }>;
  replica: { id: string; role: string; leader: string | null; replicas_alive: number; caught_up: boolean };
}
const health = async (r: ServiceProcess) => (await (await fetch(`${r.url}/health`)).json()) as Health;

async function startReplica(id: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const r = await spawnService({
    PUBLIC_URL: `http://127.0.0.1:${publicPort}`,
    DATA_DIR: mkdtempSync(join(tmpdir(), `wires-ingest-${id}-`)),
    WIRES_SOURCES: sourcesFile,
    POLL_FLOOR_SEC: '1',
    POLL_INTERVAL_SEC: String(POLL_SEC),
    USER_AGENT: `WiresTest/${id} ops@wires.invalid`,
    REDIS_URL: redis.url,
    REPLICA_ID: id,
    REDIS_LEASE_SEC: String(LEASE_SEC),
    PAY_TO_ADDRESS: devnet.payTo,
    FACILITATOR_URL: devnet.facilitatorUrl,
    SETTLEMENT: 'optimistic',
    ...env,
  });
  replicas.set(id, r);
  return r;
}

/** Who polled the publisher since `since` (performance.now()). */
const pollers = (since: number) => new Set(publisher.requests.filter((r) => r.at >= since).map((r) => /WiresTest\/(\w+)/.exec(r.userAgent ?? '')?.[1]));

/** A paid stream of the news wire on `r`, collecting what it pushes. */
async function subscribe(r: ServiceProcess, payer: number) {
  const prices = (await (await fetch(`${r.url}/.well-known/x402`)).json()) as { streams: { path: string; accepts: { amount: string }[] }[] };
  const blockUsd = Number(prices.streams.find((s) => s.path === '/stream?wire=news')!.accepts[0]!.amount) / 1e6;
  const client = new WiresClient({ url: r.url, privateKey: devnet.payers[payer]!.privateKey, maxSpendUsd: blockUsd });
  const stream = client.stream('news', { q: 'story' });
  await stream.ready;
  const received: StreamItem[] = [];
  void (async () => {
    for await (const item of stream) received.push(item);
  })().catch(() => {});
  const got = (title: string) => until(`"${title}" on ${r.url}`, async () => received.some((i) => i.item.title === title));
  return { received, got, close: () => stream.close() };
}

before(async () => {
  [devnet, redis, publisher, refusing, hub, publicPort] = await Promise.all([
    startDevnet({ payers: 2 }),
    startRedis(),
    startPublisher(),
    startPublisher({ refuse: { status: 503, retryAfterSec: 600 } }),
    startWebSubHub(),
    freePort(),
  ]);
  pushed = await startPublisher({ hub: hub.url });
  const dir = mkdtempSync(join(tmpdir(), 'wires-ingest-'));
  sourcesFile = join(dir, 'sources.json');
  // Port 9 on loopback is closed: every other source fails at once, without leaving the box.
  const url = (id: string) => ({ 'yahoo-finance': publisher.url, 'marketwatch-pulse': refusing.url, techcrunch: pushed.url })[id] ?? `http://127.0.0.1:9/${id}`;
  const overrides = Object.fromEntries(SOURCES.map((s) => [s.id, url(s.id)]));
  writeFileSync(sourcesFile, JSON.stringify(overrides));
  // r2 first: the hub verifies the leader's first subscription through it.
  await startReplica('r2', { INGEST: '0', PORT: String(publicPort) });
  const first = await startReplica('r1');
  await until('r1 to lead', async () => (await health(first)).replica.role === 'leader');
  await startReplica('r3');
});

after(async () => {
  await Promise.all([...replicas.values()].map((r) => r.kill('SIGKILL')));
  await publisher?.close();
  await refusing?.close();
  await pushed?.close();
  await hub?.close();
  await redis?.stop();
  await devnet?.stop();
});

test('one leader polls; the others apply what it publishes, and a subscriber on a follower gets every new item', async () => {
  const [r1, r2, r3] = ['r1', 'r2', 'r3'].map((id) => replicas.get(id)!);
  // Each counts the others' heartbeats at its own ticks: all three seen by all three.
  await until('every replica caught up', async () => (await Promise.all([r1!, r2!, r3!].map(health))).every((h) => h.replica.caught_up && h.replica.leader === 'r1' && h.replica.replicas_alive === 3));
  assert.equal((await health(r2!)).replica.role, 'follower');
  const since = performance.now();
  await new Promise((r) => setTimeout(r, (POLL_SEC + 1) * 1000));
  assert.deepEqual([...pollers(since)], ['r1'], 'only the leader polls');

  const sub = await subscribe(r2!, 0);
  publisher.add('story alpha from the publisher');
  await sub.got('story alpha from the publisher');
  await until('the same items everywhere', async () => {
    const counts = (await Promise.all([r1!, r2!, r3!].map(health))).map((h) => h.wires.news!.items);
    return counts.every((c) => c === counts[0] && c > 0);
  });
  sub.close();
});

test('WebSub: the leader subscribes, the hub calls back a follower, which relays to the leader; a pushed story reaches a subscriber on a third replica', async () => {
  const [r1, r3] = [replicas.get('r1')!, replicas.get('r3')!];
  const subscription = await hub.waitForSubscription(pushed.url, 15_000);
  assert.equal(subscription.callback, `http://127.0.0.1:${publicPort}/websub/techcrunch`);
  const delivery = async () =>
    ((await (await fetch(`${r1.url}/sources`)).json()) as { id: string; state: { delivery: { mode: string; notifications: number } } }[]).find((s) => s.id === 'techcrunch')!.state.delivery;
  await until('the leader to hold the subscription', async () => (await delivery()).mode === 'push');

  const sub = await subscribe(r3, 0);
  const since = performance.now();
  pushed.add('story pushed through a follower');
  assert.deepEqual(await hub.publish(pushed.url), [202], 'the follower answers with the leader’s answer');
  await sub.got('story pushed through a follower');
  assert.deepEqual(
    pushed.requests.filter((r) => r.at >= since && r.userAgent?.includes('WiresTest')),
    [],
    'pushed, not polled',
  );
  assert.equal((await delivery()).notifications, 1);
  // The leader judges the signature: a forged notification through the follower is refused.
  assert.deepEqual(await hub.distribute(pushed.url, '<rss/>', 'application/rss+xml', { secret: 'forged' }), [403]);
  sub.close();
});

test('SIGKILL of the leader: another polls within the lease and one poll, conditionally, and leaves alone a source that asked for it; nothing is lost or pushed twice', async () => {
  const sub = await subscribe(replicas.get('r3')!, 1);
  publisher.add('story before the kill');
  await sub.got('story before the kill');
  await until('the leader to poll once more after the story (its validator now names it)', async () => publisher.requests.at(-1)?.ifNoneMatch === `"${publisher.items.length}"`);
  assert.ok(refusing.requests.length > 0, 'the refusing source was polled, and asked for 600 s');
  const validator = `"${publisher.items.length}"`;

  await replicas.get('r1')!.kill('SIGKILL');
  const killedAt = performance.now();
  // Published while nobody polls.
  publisher.add('story during the failover');
  const newLeader = await until('a new leader to poll', async () => [...pollers(killedAt)].find((p) => p === 'r2' || p === 'r3'));
  const failoverMs = performance.now() - killedAt;
  const first = publisher.requests.find((r) => r.at >= killedAt)!;
  assert.equal(first.ifNoneMatch, validator, 'the new leader polls with the validator the killed one got');
  assert.ok(failoverMs < (LEASE_SEC + POLL_SEC + 2) * 1000, `the first poll by ${newLeader} came ${Math.round(failoverMs)} ms after the kill`);
  await sub.got('story during the failover');
  publisher.add('story after the failover');
  await sub.got('story after the failover');

  const titles = sub.received.filter((i) => !i.update).map((i) => i.item.title);
  assert.equal(new Set(titles).size, titles.length, `each item pushed once: ${titles.join(', ')}`);
  assert.deepEqual(
    refusing.requests.filter((r) => r.at >= killedAt),
    [],
    'the source that asked for 600 s is not polled by the new leader',
  );
  assert.equal((await health(replicas.get(newLeader!)!)).replica.role, 'leader');
  sub.close();
});

test('a replica joining late reads the stream before it reports itself caught up, and then holds what the others hold', async () => {
  const late = await startReplica('r4');
  const h = await until('r4 caught up', async () => {
    const h = await health(late);
    return h.replica.caught_up && h;
  });
  assert.notEqual(h.status, 'starting');
  const other = await health(replicas.get('r2')!);
  assert.equal(h.wires.news!.items, other.wires.news!.items);
  assert.equal(h.replica.role, 'follower');
});

test('Redis killed: previews and running streams go on, the leader keeps polling, and what it found reaches the followers once Redis is back', async () => {
  const follower = [...replicas.values()].find((r) => r.child.exitCode === null && r.child.signalCode === null && r !== replicas.get('r4'))!;
  const sub = await subscribe(follower, 0);
  await redis.kill('SIGKILL');
  const since = performance.now();
  publisher.add('story while Redis is down');
  // Someone still polls (the leader, which cannot be replaced while Redis is down).
  await until('a poll during the outage', async () => pollers(since).size > 0);
  assert.equal((await fetch(`${follower.url}/news/preview?q=story`)).status, 200);
  await redis.start();
  await sub.got('story while Redis is down');
  sub.close();
});
