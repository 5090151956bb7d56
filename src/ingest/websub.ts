/**
 * The WebSub subscriber (W3C WebSub Recommendation, §5–§8): where a feed names a hub, the
 * service subscribes a callback of its own (`PUBLIC_URL/websub/<source id>`) with a secret
 * per subscription, answers the hub's verification of intent only for what it asked, and
 * takes a content notification only when its `X-Hub-Signature` is an HMAC of the body with
 * that secret. The document then goes the way a polled one goes (the worker pool parses it).
 *
 * Push never replaces polling: while a subscription holds, the source is still polled, more
 * slowly, as a check. A hub that refuses, denies, never verifies, lets its lease run out or
 * misses items the check finds puts the source back on normal polling; a later poll
 * subscribes again after RETRY_MS.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Agent } from 'undici';
import { log } from '../log.js';
import { parseLinkHeader } from './fetch/link-header.js';
import { steadyNow, wallOf } from '../clock.js';

/** Lease asked for; the hub decides (W3C WebSub §5.1: a hint). */
export const LEASE_SECONDS = 10 * 86_400;
/** A subscription is renewed when this share of its lease has passed. */
const RENEW_AT = 0.8;
/** How long a hub has to verify a request before the attempt counts as refused. */
const VERIFY_WITHIN_MS = 5 * 60_000;
/** After a refusal or silence, the next attempt waits this long. */
const RETRY_MS = 3_600_000;
/** Check polls in a row that find items the hub did not deliver before it counts as silent. */
const MISSES_TO_FALL_BACK = 2;
/** Algorithms of X-Hub-Signature the Recommendation lists (§8). */
const ALGORITHMS = new Set(['sha1', 'sha256', 'sha384', 'sha512']);

export type PushState = 'off' | 'requested' | 'active' | 'refused' | 'silent' | 'unusable';

export interface PushStatus {
  /** `push` while a verified subscription holds; otherwise the source is polled. */
  mode: 'push' | 'poll';
  state: PushState;
  hub: string | null;
  topic: string | null;
  /** Why the source is not on push, or the last thing that went wrong. */
  reason: string | null;
  lease_expires: string | null;
  last_notification: string | null;
  notifications: number;
  refused_notifications: number;
}

export interface WebSubOptions {
  /** The base URL hubs can reach (PUBLIC_URL); null: push is off. */
  publicUrl: string | null;
  /** Why push is off when `publicUrl` is null. */
  offReason?: string;
  /** Largest notification body taken (the fetcher's body cap). */
  maxBodyBytes: number;
  /** Hands a verified notification's document to the ingest path. */
  deliver: (sourceId: string, body: Uint8Array, contentType: string | undefined, topic: string) => void;
  userAgent: string;
  /** Let hubs be on loopback, private, link-local… addresses (ALLOW_PRIVATE_DESTINATIONS); default false. */
  allowPrivateDestinations?: boolean;
}

export interface CallbackAnswer {
  status: number;
  /** The challenge (text/plain) for a verification, else a JSON body. */
  body: string;
  contentType: string;
}

export interface NotificationHeaders {
  signature: string;
  link: string;
  contentType: string;
}

/**
 * What the callback route (`/websub/<source id>`) calls: the subscriber itself, or in replica
 * mode a relay to the leader's (src/replica/websub-relay.ts), which answers later.
 */
export interface WebSubCallbacks {
  readonly maxBodyBytes: number;
  verify(sourceId: string, query: URLSearchParams): CallbackAnswer | Promise<CallbackAnswer>;
  notify(sourceId: string, headers: NotificationHeaders, body: Uint8Array): CallbackAnswer | Promise<CallbackAnswer>;
}

interface Subscription {
  state: PushState;
  hub: string | null;
  topic: string | null;
  secret: string | null;
  reason: string | null;
  /** The mode of the request awaiting the hub's verification. */
  pending: 'subscribe' | 'unsubscribe' | null;
  requestedAt: number;
  expiresAt: number | null;
  lastNotification: number | null;
  notifications: number;
  refused: number;
  misses: number;
  retryAt: number;
  /** Hubs that refused this source; the next attempt tries another one. */
  failedHubs: Set<string>;
  timer?: NodeJS.Timeout;
}

/** A callback's JSON error answer. */
export const callbackError = (status: number, error: string, message: string): CallbackAnswer => ({ status, body: JSON.stringify({ error, message }), contentType: 'application/json' });

export class WebSub implements WebSubCallbacks {
  private readonly subs = new Map<string, Subscription>();
  private stopped = false;
  /**
   * Sends the subscription requests, made for the first: the HTTP client (undici) is loaded
   * then, not on every start. A hub is named by the feed, so it must be a public address unless
   * allowed (destination.ts).
   */
  private hubAgent: Promise<Agent> | null = null;

  constructor(private readonly opts: WebSubOptions) {}

  private agent(): Promise<Agent> {
    this.hubAgent ??= Promise.all([import('undici'), import('./fetch/destination.js')]).then(([{ Agent }, { publicOnlyConnector }]) => {
      const connect = { timeout: 10_000, autoSelectFamily: true };
      return new Agent({ connect: this.opts.allowPrivateDestinations ? connect : publicOnlyConnector('hub', connect) });
    });
    return this.hubAgent;
  }

  get maxBodyBytes(): number {
    return this.opts.maxBodyBytes;
  }

  get enabled(): boolean {
    return this.opts.publicUrl !== null;
  }

  callbackUrl(sourceId: string): string {
    return `${this.opts.publicUrl}/websub/${encodeURIComponent(sourceId)}`;
  }

  /** True while a verified, unexpired subscription delivers this source. */
  active(sourceId: string, now = steadyNow()): boolean {
    const s = this.subs.get(sourceId);
    if (s?.state !== 'active') return false;
    if (s.expiresAt !== null && now >= s.expiresAt) {
      this.fallBack(sourceId, s, 'silent', 'the lease ended without a renewal');
      return false;
    }
    return true;
  }

  /**
   * After each polled document: the hubs and self link it declares. Subscribes when push is
   * possible and not already held or recently refused.
   */
  discovered(sourceId: string, fetchedUrl: string, hubs: readonly string[], self: string | undefined, now = steadyNow()): void {
    if (!this.enabled || this.stopped || hubs.length === 0) return;
    const s = this.sub(sourceId);
    if (s.state === 'active' || s.state === 'requested') return;
    if (now < s.retryAt) return;
    const usable = hubs.filter((h) => isHttpUrl(h));
    const hub = usable.find((h) => !s.failedHubs.has(h)) ?? (usable.length ? null : undefined);
    if (hub === undefined) {
      if (s.state !== 'unusable') log.warn('websub: the feed names no usable hub', { source: sourceId, hubs: hubs.slice(0, 3) });
      s.state = 'unusable';
      s.reason = `the feed's hub link is not an http(s) URL: ${JSON.stringify(hubs[0]).slice(0, 120)}`;
      s.hub = null;
      return;
    }
    if (hub === null) {
      // Every usable hub refused: start over with all of them after the wait.
      s.failedHubs.clear();
      return;
    }
    void this.request(sourceId, s, hub, self ?? fetchedUrl, 'subscribe', now);
  }

  /**
   * A check poll while push is active found `fresh` items the hub had not delivered. One
   * can be a race with a notification on its way; MISSES_TO_FALL_BACK in a row is a silent hub.
   */
  checked(sourceId: string, fresh: number): void {
    const s = this.subs.get(sourceId);
    if (s?.state !== 'active') return;
    s.misses = fresh > 0 ? s.misses + 1 : 0;
    if (s.misses >= MISSES_TO_FALL_BACK) this.fallBack(sourceId, s, 'silent', `check polls found ${fresh} item(s) the hub did not deliver`);
  }

  /** GET on the callback: the hub's verification of intent (§5.3), or a denial (§5.2). */
  verify(sourceId: string, query: URLSearchParams, now = steadyNow()): CallbackAnswer {
    const s = this.subs.get(sourceId);
    const mode = query.get('hub.mode');
    const topic = query.get('hub.topic');
    if (!s || !topic || topic !== s.topic) {
      log.warn('websub: verification refused, no such subscription', { source: sourceId, mode, topic: topic?.slice(0, 200) });
      return callbackError(404, 'unknown_subscription', 'This callback asked no hub for that topic.');
    }
    if (mode === 'denied') {
      if (s.pending === 'subscribe' || s.state === 'active') this.refuse(sourceId, s, `the hub denied the subscription: ${(query.get('hub.reason') ?? 'no reason given').slice(0, 200)}`);
      return { status: 200, body: '', contentType: 'text/plain' };
    }
    const challenge = query.get('hub.challenge');
    if (!challenge || (mode !== 'subscribe' && mode !== 'unsubscribe') || s.pending !== mode) {
      log.warn('websub: verification refused, not what was asked', { source: sourceId, mode, pending: s.pending });
      return callbackError(404, 'unknown_subscription', `This callback has no pending ${mode ?? '(no mode)'} request for that topic.`);
    }
    s.pending = null;
    if (mode === 'subscribe') {
      const lease = Number(query.get('hub.lease_seconds'));
      const leaseMs = Number.isFinite(lease) && lease > 0 ? lease * 1000 : LEASE_SECONDS * 1000;
      s.state = 'active';
      s.reason = null;
      s.misses = 0;
      s.expiresAt = now + leaseMs;
      this.schedule(s, RENEW_AT * leaseMs, () => void this.request(sourceId, s, s.hub!, s.topic!, 'subscribe', steadyNow()));
      log.info('websub: subscribed', { source: sourceId, hub: s.hub, topic: s.topic, lease_sec: leaseMs / 1000 });
    }
    return { status: 200, body: challenge, contentType: 'text/plain' };
  }

  /**
   * POST on the callback: a content distribution (§7). Taken only for an active subscription
   * with a valid signature of the exact body; anything else is refused and changes nothing.
   */
  notify(sourceId: string, headers: NotificationHeaders, body: Uint8Array, now = steadyNow()): CallbackAnswer {
    const s = this.subs.get(sourceId);
    const refuse = (status: number, error: string, message: string) => {
      if (s) s.refused++;
      log.warn('websub: notification refused', { source: sourceId, error, message });
      return callbackError(status, error, message);
    };
    if (!s || s.secret === null || (s.state !== 'active' && s.pending === null)) return refuse(404, 'unknown_subscription', 'No subscription of this service delivers to this callback.');
    const m = /^\s*([a-z0-9]+)=([0-9a-f]+)\s*$/i.exec(headers.signature);
    if (!m) return refuse(403, headers.signature ? 'signature_invalid' : 'signature_missing', 'A notification must carry X-Hub-Signature: <algorithm>=<hex HMAC of the body>.');
    const algorithm = m[1]!.toLowerCase();
    if (!ALGORITHMS.has(algorithm)) return refuse(403, 'signature_invalid', `X-Hub-Signature algorithm ${algorithm.slice(0, 20)} is none of sha1, sha256, sha384, sha512.`);
    const expected = createHmac(algorithm, s.secret).update(body).digest();
    const given = Buffer.from(m[2]!, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse(403, 'signature_mismatch', 'X-Hub-Signature does not match the body.');
    const self = parseLinkHeader(headers.link).find((l) => l.rels.includes('self'))?.href;
    if (self !== undefined && self !== s.topic) return refuse(400, 'topic_mismatch', `The notification is for ${self.slice(0, 200)}, not the topic subscribed here.`);
    s.notifications++;
    s.lastNotification = now;
    this.opts.deliver(sourceId, body, headers.contentType || undefined, s.topic!);
    return { status: 202, body: '{"accepted":true}', contentType: 'application/json' };
  }

  status(sourceId: string): PushStatus {
    const s = this.subs.get(sourceId);
    const iso = (t: number | null) => (t === null ? null : new Date(wallOf(t)).toISOString());
    if (!s) {
      const reason = this.enabled ? 'the feed names no hub' : (this.opts.offReason ?? 'push is off');
      return { mode: 'poll', state: 'off', hub: null, topic: null, reason, lease_expires: null, last_notification: null, notifications: 0, refused_notifications: 0 };
    }
    return {
      mode: this.active(sourceId) ? 'push' : 'poll',
      state: s.state,
      hub: s.hub,
      topic: s.topic,
      reason: s.reason,
      lease_expires: iso(s.state === 'active' ? s.expiresAt : null),
      last_notification: iso(s.lastNotification),
      notifications: s.notifications,
      refused_notifications: s.refused,
    };
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.subs.values()) clearTimeout(s.timer);
    void this.hubAgent?.then((agent) => agent.destroy()).catch(() => undefined);
  }

  /**
   * Forgets every subscription (replica mode: this replica no longer leads). The hubs go on
   * calling back until their leases end, and the next leader, subscribing the same callback
   * and topic anew, replaces them (W3C WebSub §5.1); until then a notification is refused as
   * unknown and the source is polled.
   */
  forget(): void {
    for (const s of this.subs.values()) clearTimeout(s.timer);
    this.subs.clear();
  }

  private sub(sourceId: string): Subscription {
    let s = this.subs.get(sourceId);
    if (!s) {
      s = {
        state: 'off',
        hub: null,
        topic: null,
        secret: null,
        reason: null,
        pending: null,
        requestedAt: 0,
        expiresAt: null,
        lastNotification: null,
        notifications: 0,
        refused: 0,
        misses: 0,
        retryAt: 0,
        failedHubs: new Set(),
      };
      this.subs.set(sourceId, s);
    }
    return s;
  }

  /** Sends a (re)subscription request (§5.1); the hub answers 202 and verifies later. */
  private async request(sourceId: string, s: Subscription, hub: string, topic: string, mode: 'subscribe' | 'unsubscribe', now: number): Promise<void> {
    if (this.stopped) return;
    const renewing = s.state === 'active' && s.hub === hub && s.topic === topic;
    if (!renewing) {
      s.state = 'requested';
      s.secret = randomBytes(32).toString('hex');
    }
    s.hub = hub;
    s.topic = topic;
    s.pending = mode;
    s.requestedAt = now;
    const form = new URLSearchParams({ 'hub.callback': this.callbackUrl(sourceId), 'hub.mode': mode, 'hub.topic': topic, 'hub.lease_seconds': String(LEASE_SECONDS), 'hub.secret': s.secret! });
    let problem: string | null = null;
    try {
      // No redirect is followed: a 3xx is an answer that is not 2xx.
      const url = new URL(hub);
      const res = await (await this.agent()).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': this.opts.userAgent },
        body: form.toString(),
        signal: AbortSignal.timeout(15_000),
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (res.statusCode < 200 || res.statusCode > 299) problem = `the hub answered HTTP ${res.statusCode} to the ${mode} request`;
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      // A refused destination: its message says where, why and which setting allows it; nothing was sent.
      problem = e?.code === 'ERR_BLOCKED_DESTINATION' ? String(e.message) : `the hub could not be reached: ${String(e?.message ?? err).slice(0, 200)}`;
    }
    if (this.stopped) return;
    if (problem) return this.refuse(sourceId, s, problem);
    // No verification in time: the hub ignored the request.
    this.schedule(s, VERIFY_WITHIN_MS, () => {
      if (s.pending === mode) this.refuse(sourceId, s, `the hub did not verify the ${mode} request within ${VERIFY_WITHIN_MS / 60_000} minutes`);
    });
  }

  private refuse(sourceId: string, s: Subscription, reason: string): void {
    if (s.hub) s.failedHubs.add(s.hub);
    this.fallBack(sourceId, s, 'refused', reason);
  }

  private fallBack(sourceId: string, s: Subscription, state: 'refused' | 'silent', reason: string): void {
    log.warn('websub: back to polling', { source: sourceId, hub: s.hub, reason });
    clearTimeout(s.timer);
    s.state = state;
    s.reason = reason;
    s.pending = null;
    s.expiresAt = null;
    s.misses = 0;
    s.retryAt = steadyNow() + RETRY_MS;
  }

  private schedule(s: Subscription, ms: number, fn: () => void): void {
    clearTimeout(s.timer);
    s.timer = setTimeout(fn, Math.min(ms, 2 ** 31 - 1));
    s.timer.unref();
  }
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const u = new URL(text);
  return u.protocol === 'https:' || u.protocol === 'http:';
}
