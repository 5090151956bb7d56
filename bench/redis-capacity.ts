/**
 * How many paid calls one Redis core can take.
 *
 * 1. **A claim at saturation**: the replicas' claim transaction, exactly as `RedisStore`
 *    builds it (`claimCommands`: a real signed payment's record, a fresh nonce each), sent
 *    over 8 connections with 32 claims in flight on each, as fast as Redis answers. A replica
 *    cannot load Redis that far on a small machine, and Redis's CPU per call at a lower rate
 *    includes the reads and wake-ups that a busier Redis shares between calls. Reported:
 *    Redis's CPU per claim, its utilisation (≈ 1: saturated), and claims/s per core.
 * 2. **The previous layout's claim at saturation**, the same way: the script it ran per claim
 *    (kept below to measure against), with the whole record and a consumer-group delivery.
 *    The ratio of the two is what this run's machine says of the change.
 * 3. **A whole optimistic paid call** through `RedisStore` itself, 32 at a time from this
 *    process: the claim, the answer shared for retries on other replicas, the hand-over (which
 *    journals the accepted record), the transaction noted, the outcome.
 *
 * Run it in a process of its own (`node dist/bench/redis-capacity.js <redis url> <redis pid>`,
 * JSON on stdout), as bench:scale-out does, on a core apart from Redis's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { RedisStore } from '../src/pay/redis-store.js';
import type { NewClaim } from '../src/pay/store.js';
import { claimOf, signPayment } from '../test/helpers/payments.js';
import { until } from '../test/helpers/until.js';
import { cpuSeconds } from './proc.js';

export interface RedisCapacity {
  /** Redis CPU µs per claim at saturation, the claims per second one Redis core takes, and Redis's utilisation meanwhile. */
  claim_us: number;
  claims_per_core_s: number;
  claim_redis_util: number;
  /** The same for the previous layout's claim script. */
  previous_claim_us: number;
  previous_claims_per_core_s: number;
  previous_redis_util: number;
  /** Redis CPU µs per whole paid call through the store. */
  paid_call_us: number;
  paid_calls_per_core_s: number;
}

/** The previous layout's claim (a hash, the whole record in the journal stream, delivered to the replica's consumer), as it ran per claim. */
const PREVIOUS_CLAIM = `
local c = redis.call('HMGET', KEYS[1], 'fp', 'rk', 'pid', 'st', 'h', 'tx', 'why', 'mode')
if c[7] == 'unrecorded' then
  redis.call('DEL', KEYS[1])
  c = {}
end
local owner = false
if ARGV[3] ~= '' then owner = redis.call('GET', KEYS[2]) end
if c[1] or owner then
  return {'seen', c[1] or '', c[2] or '', c[3] or '', c[4] or '', c[5] or '', c[6] or '', c[7] or '', c[8] or '', owner or ''}
end
local unsettled = redis.call('INCRBY', KEYS[4], ARGV[11])
local mode = 'sync'
if ARGV[12] ~= '' and unsettled <= tonumber(ARGV[12]) then mode = 'optimistic' end
redis.call('PEXPIRE', KEYS[4], 3600000)
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

const resp = (args: string[]): string => {
  let s = `*${args.length}\r\n`;
  for (const a of args) s += `$${Buffer.byteLength(a)}\r\n${a}\r\n`;
  return s;
};

/** The offset after the RESP2 reply at `at`, or -1 while it is incomplete; an error reply throws. */
function replyEnd(b: Buffer, at: number): number {
  const eol = b.indexOf('\r\n', at);
  if (eol < 0) return -1;
  const type = b[at];
  if (type === 0x2d) throw new Error(`Redis: ${b.toString('utf8', at + 1, eol)}`);
  if (type === 0x24) {
    const length = Number(b.toString('latin1', at + 1, eol));
    if (length < 0) return eol + 2;
    return eol + 4 + length <= b.length ? eol + 4 + length : -1;
  }
  if (type === 0x2a) {
    let p = eol + 2;
    for (let i = Number(b.toString('latin1', at + 1, eol)); i > 0 && p >= 0; i--) p = replyEnd(b, p);
    return p;
  }
  return eol + 2;
}

/**
 * Sends `count` claims (each `next()`, answered by `replies` top-level replies) over `conns`
 * connections with `window` in flight on each, and returns Redis's CPU per claim meanwhile.
 */
async function saturate(url: string, redisPid: number, make: () => string, replies: number, { count = 200_000, conns = 8, window = 32 } = {}) {
  const { hostname, port, username, password } = new URL(url);
  // Made beforehand, so that this process is never what Redis waits for.
  const calls = Array.from({ length: count }, make);
  const next = () => calls[sent]!;
  let sent = 0;
  let answered = 0;
  const started = performance.now();
  const before = cpuSeconds(redisPid);
  await Promise.all(
    Array.from(
      { length: conns },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(Number(port), hostname);
          socket.setNoDelay(true);
          let pending: Buffer = Buffer.alloc(0);
          let inFlight = 0;
          let authed = !password;
          const send = (n: number) => {
            let out = '';
            for (; n > 0 && sent < count; n--, sent++, inFlight++) out += next();
            if (out) socket.write(out);
          };
          socket.on('connect', () => {
            if (password) socket.write(resp(['AUTH', decodeURIComponent(username || 'default'), decodeURIComponent(password)]));
            send(window);
          });
          let seen = 0;
          socket.on('data', (chunk: Buffer) => {
            pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
            let at = 0;
            try {
              for (let end = replyEnd(pending, at); end >= 0; end = replyEnd(pending, at)) {
                at = end;
                if (!authed) authed = true;
                else seen++;
              }
            } catch (err) {
              socket.destroy();
              reject(err);
              return;
            }
            pending = pending.subarray(at);
            const done = Math.floor(seen / replies);
            seen -= done * replies;
            inFlight -= done;
            answered += done;
            if (sent < count) send(done);
            else if (inFlight === 0) {
              socket.end();
              resolve();
            }
          });
          socket.on('error', reject);
        }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(redisPid) - before;
  return { us: (cpu * 1e6) / answered, perCoreS: Math.round(answered / cpu), util: cpu / seconds };
}

export async function redisCapacity(url: string, redisPid: number, { count = 200_000, paidCount = 20_000, concurrency = 32, answerBytes = 2_000 } = {}): Promise<RedisCapacity> {
  // One real signature; each claim a fresh nonce (the store does not verify).
  const { payload } = await signPayment({ amount: '5000' });
  const template = claimOf(payload);
  const claim = (): NewClaim => {
    const nonce = `0x${randomBytes(32).toString('hex')}` as const;
    const signed = { ...payload, payload: { ...payload.payload, authorization: { ...payload.payload.authorization, nonce } } };
    return { ...template, record: { ...template.record, id: `${template.record.id.split(':')[0]}:${nonce}`, payload: signed } };
  };
  const prefix = `wires:capacity${Date.now()}:`;
  const store = await RedisStore.open({ url, prefix, consumer: 'capacity' });
  await until('Redis', () => store.available);
  try {
    // 1. The claim, as the store sends it: MULTI, its commands, EXEC (one reply each, and EXEC's).
    // One claim through the store first: it stores the route's requirements, which the claims
    // after it (as every claim of a process but its first of the hour) then leave out.
    await store.claim(claim());
    let tokens = 0;
    const transaction = () => {
      const { commands } = store.claimCommands(claim(), `capacity${++tokens}`);
      return resp(['MULTI']) + commands.map(resp).join('') + resp(['EXEC']);
    };
    const replies = store.claimCommands(claim(), '').commands.length + 2;
    await saturate(url, redisPid, transaction, replies, { count: count / 4 });
    const now = await saturate(url, redisPid, transaction, replies, { count });

    // 2. The previous layout's script, loaded once and called by its digest, as ioredis did.
    const sha = createHash('sha1').update(PREVIOUS_CLAIM).digest('hex');
    await saturate(url, redisPid, () => resp(['SCRIPT', 'LOAD', PREVIOUS_CLAIM]), 1, { count: 1, conns: 1 });
    const journal = `${prefix}previous:journal`;
    const previousCall = () => {
      const c = claim();
      const payer = c.record.id.split(':')[0]!;
      return resp([
        'EVALSHA',
        sha,
        '4',
        `${prefix}pay:c:${c.record.id}`,
        `${prefix}pay:id:-`,
        journal,
        `${prefix}pay:x:${payer}`,
        c.fingerprint,
        c.record.requestKey,
        '',
        'optimistic',
        String(c.expiresAt),
        JSON.stringify(c.record),
        'settlers',
        'capacity',
        String(Date.now() - 7 * 86_400_000),
        c.record.id,
        c.record.amount,
        String(c.limit),
      ]);
    };
    await saturate(url, redisPid, previousCall, 1, { count: count / 4 });
    const previous = await saturate(url, redisPid, previousCall, 1, { count });

    // 3. Whole paid calls through the store.
    const answer = Buffer.alloc(answerBytes, 'x');
    const tx = `0x${'ab'.repeat(32)}`;
    const paid = async () => {
      let left = paidCount;
      const before = cpuSeconds(redisPid);
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (; left > 0; left--) {
            const c = claim();
            const r = await store.claim(c);
            if (r.kind !== 'new') throw new Error(`claim not new: ${r.kind}`);
            store.shareBody(c.record.id, answer, c.expiresAt);
            await store.handOver(c.record.id);
            store.submitted(c.record.id, tx);
            await store.finish(c.record.id, { t: 'settled', tx });
          }
        }),
      );
      // What was sent without waiting (the shared answer, the transaction) is done by now.
      await new Promise((resolve) => setTimeout(resolve, 200));
      return ((cpuSeconds(redisPid) - before) * 1e6) / paidCount;
    };
    await paid();
    const paidUs = await paid();
    return {
      claim_us: +now.us.toFixed(1),
      claims_per_core_s: now.perCoreS,
      claim_redis_util: +now.util.toFixed(2),
      previous_claim_us: +previous.us.toFixed(1),
      previous_claims_per_core_s: previous.perCoreS,
      previous_redis_util: +previous.util.toFixed(2),
      paid_call_us: +paidUs.toFixed(1),
      paid_calls_per_core_s: Math.round(1e6 / paidUs),
    };
  } finally {
    await store.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, pid] = process.argv.slice(2);
  process.stdout.write(`${JSON.stringify(await redisCapacity(url!, Number(pid)))}\n`);
}
