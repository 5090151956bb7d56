/**
 * WebSub in replica mode. Only the leader subscribes: its WebSub (src/ingest/websub.ts) holds
 * the subscriptions and their secrets. But a hub calls back PUBLIC_URL, which the load
 * balancer hands to any replica. So a replica that does not lead relays the callback to the
 * leader over Redis pub/sub and passes the leader's answer back: the verification of intent
 * and the notification's signature are judged by the one WebSub that asked, as on one process.
 *
 * A relayed request is one message on `websub:leader`, to which only the leader listens:
 * a JSON head, a newline, then the notification body as it came. The answer comes back on
 * `websub:to:<replica id>`. With no leader listening (a failover in progress), or no answer
 * within RELAY_TIMEOUT_MS, the hub gets 503: hubs retry a notification they could not deliver,
 * and a failed verification leaves the source polled.
 */
import { type CallbackAnswer, callbackError, type NotificationHeaders, type WebSub, type WebSubCallbacks } from '../ingest/websub.js';
import { log } from '../log.js';
import type { Channels } from './channels.js';
import type { Redis } from './redis.js';

const RELAY_TIMEOUT_MS = 5000;
/** Relayed requests waiting for their answer at most; beyond it a callback is answered 503 at once. */
const MAX_WAITING = 1000;

type Head = { id: number; from: string; source: string } & ({ kind: 'verify'; query: string } | { kind: 'notify'; headers: NotificationHeaders });

const unavailable = (message: string): CallbackAnswer => callbackError(503, 'websub_unavailable', message);

export class WebSubRelay implements WebSubCallbacks {
  private readonly waiting = new Map<number, (a: CallbackAnswer) => void>();
  private nextId = 0;
  private leading = false;
  private readonly toLeader: string;
  private readonly toMe: string;

  private constructor(
    private readonly redis: Redis,
    private readonly channels: Channels,
    private readonly prefix: string,
    private readonly replicaId: string,
    readonly maxBodyBytes: number,
    /** This replica's own subscriber: null when it does not ingest (it never leads). */
    private readonly local: WebSub | null,
  ) {
    this.toLeader = `${prefix}websub:leader`;
    this.toMe = this.answersTo(replicaId);
  }

  private answersTo(replicaId: string): string {
    return `${this.prefix}websub:to:${replicaId}`;
  }

  static async open(redis: Redis, channels: Channels, prefix: string, replicaId: string, maxBodyBytes: number, local: WebSub | null): Promise<WebSubRelay> {
    const relay = new WebSubRelay(redis, channels, prefix, replicaId, maxBodyBytes, local);
    await channels.listen(relay.toMe, (message) => relay.answered(message));
    return relay;
  }

  /** Called as the lease changes hands: the leader answers relayed callbacks with its own subscriber. */
  async lead(leading: boolean): Promise<void> {
    if (leading === this.leading || !this.local) return;
    this.leading = leading;
    if (leading) return this.channels.listen(this.toLeader, (message) => void this.serve(message));
    this.local.forget();
    await this.channels.unlisten(this.toLeader);
  }

  verify(sourceId: string, query: URLSearchParams): CallbackAnswer | Promise<CallbackAnswer> {
    if (this.leading) return this.local!.verify(sourceId, query);
    return this.relay({ id: 0, from: this.replicaId, source: sourceId, kind: 'verify', query: query.toString() }, null);
  }

  notify(sourceId: string, headers: NotificationHeaders, body: Uint8Array): CallbackAnswer | Promise<CallbackAnswer> {
    if (this.leading) return this.local!.notify(sourceId, headers, body);
    return this.relay({ id: 0, from: this.replicaId, source: sourceId, kind: 'notify', headers }, body);
  }

  private async relay(head: Head, body: Uint8Array | null): Promise<CallbackAnswer> {
    if (this.waiting.size >= MAX_WAITING) return unavailable('Too many callbacks are waiting for the leader; retry later.');
    head.id = ++this.nextId;
    const frame = Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), body ?? Buffer.alloc(0)]);
    const answer = new Promise<CallbackAnswer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(head.id);
        resolve(unavailable(`The leading replica did not answer within ${RELAY_TIMEOUT_MS / 1000} s.`));
      }, RELAY_TIMEOUT_MS);
      this.waiting.set(head.id, (a) => {
        clearTimeout(timer);
        this.waiting.delete(head.id);
        resolve(a);
      });
    });
    try {
      if ((await this.redis.publish(this.toLeader, frame)) === 0) this.waiting.get(head.id)?.(unavailable('No replica leads right now (a failover is in progress).'));
    } catch (err) {
      this.waiting.get(head.id)?.(unavailable(`The replicas' Redis cannot be reached: ${(err as Error).message}`));
    }
    return answer;
  }

  /** An answer to one of this replica's relayed callbacks. */
  private answered(message: Buffer): void {
    try {
      const a = JSON.parse(message.toString()) as CallbackAnswer & { id: number };
      this.waiting.get(a.id)?.({ status: a.status, body: a.body, contentType: a.contentType });
    } catch {
      // Not an answer of this version: its callback times out.
    }
  }

  /** The leader: a callback another replica received, answered with this replica's subscriber. */
  private async serve(message: Buffer): Promise<void> {
    const newline = message.indexOf(10);
    let head: Head;
    try {
      head = JSON.parse(message.subarray(0, newline).toString()) as Head;
    } catch {
      return;
    }
    const local = this.local;
    if (!local || !this.leading) return;
    const a = head.kind === 'verify' ? local.verify(head.source, new URLSearchParams(head.query)) : local.notify(head.source, head.headers, message.subarray(newline + 1));
    await this.redis.publish(this.answersTo(head.from), JSON.stringify({ id: head.id, ...a })).catch((err: Error) => {
      log.warn('websub: a relayed callback could not be answered', { replica: head.from, error: err.message });
    });
  }
}
