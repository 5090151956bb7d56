/**
 * A WebSub hub on loopback HTTP, following the hub side of the W3C WebSub Recommendation
 * (https://www.w3.org/TR/websub/), so the service's WebSub subscriber can be tested against it:
 *
 * - Subscription requests: POST /hub, application/x-www-form-urlencoded, with hub.callback,
 *   hub.mode (subscribe | unsubscribe), hub.topic, optional hub.lease_seconds and hub.secret
 *   (< 200 bytes). Bad requests get 400 with a text reason; good ones get 202 at once and the
 *   verification of intent runs afterwards (GET callback?hub.mode&hub.topic&hub.challenge
 *   [&hub.lease_seconds]); only a 2xx whose body is exactly the challenge activates it.
 * - Denial: with `deny`, the hub GETs callback?hub.mode=denied&hub.topic&hub.reason instead.
 * - Content distribution: POST to each verified, unexpired callback with the body, its
 *   Content-Type, `Link: <hub>; rel="hub", <topic>; rel="self"` and, when the subscription has a
 *   secret, `X-Hub-Signature: <algo>=<hex HMAC-<algo> of the body bytes>`.
 *
 * Outbound requests use node:http(s) without keep-alive, so nothing outlives close().
 */
import { createHmac, randomBytes } from 'node:crypto';
import { listenLoopback } from './loopback.js';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';

export type HubAlgorithm = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface HubSubscription {
  callback: string;
  topic: string;
  secret?: string;
  leaseSeconds: number;
  /** Milliseconds since the epoch (Date.now() scale). */
  expiresAt: number;
  verified: boolean;
}

export interface HubEvent {
  /** Date.now() when it happened. */
  at: number;
  kind: 'subscribe-request' | 'unsubscribe-request' | 'verified' | 'verify-failed' | 'denied' | 'delivered' | 'delivery-failed' | 'refused';
  topic: string;
  callback?: string;
  status?: number;
  detail?: string;
}

export interface HubOptions {
  /** Signature algorithm for content distribution: 'sha1' | 'sha256' | 'sha384' | 'sha512' (default 'sha1', what large hubs send). */
  algorithm?: HubAlgorithm;
  /** Lease the hub grants when the subscriber asks for none, and the most it grants (seconds). Defaults 864000 / 864000. */
  defaultLeaseSeconds?: number;
  maxLeaseSeconds?: number;
  /** Answer subscription requests with this status instead of 202 (e.g. 400, 500), to test refusals. */
  refuseWith?: number;
  /** When true the hub sends hub.mode=denied to the callback instead of verifying. */
  deny?: boolean;
}

export interface WebSubHub {
  /** e.g. http://127.0.0.1:PORT/hub */
  url: string;
  events: HubEvent[];
  /** Current (unexpired) subscriptions: verified ones first, then requests still being verified. */
  subscriptions(): HubSubscription[];
  /** Publisher ping: the hub GETs `topic` itself and POSTs the fetched body to every verified, unexpired subscriber of that topic. Resolves with the HTTP status each callback answered (0 = no answer). */
  publish(topic: string): Promise<number[]>;
  /** Sends `body` to every verified subscriber of `topic` (no fetch). Options let tests forge: a wrong secret (`secret: 'x'`), no signature (`secret: null`), another algorithm. */
  distribute(topic: string, body: string | Uint8Array, contentType: string, opts?: { secret?: string | null; algorithm?: HubAlgorithm }): Promise<number[]>;
  /** Changes options at run time (e.g. start refusing, go silent). `silent: true` makes publish/distribute deliver nothing. */
  set(opts: Partial<HubOptions> & { silent?: boolean }): void;
  /** Resolves when a subscription for topic is verified (or rejects after timeoutMs, default 5000). */
  waitForSubscription(topic: string, timeoutMs?: number): Promise<HubSubscription>;
  close(): Promise<void>;
}

const ALGORITHMS: readonly HubAlgorithm[] = ['sha1', 'sha256', 'sha384', 'sha512'];
const MAX_REQUEST_BODY = 64 * 1024;
const MAX_VERIFY_BODY = 64 * 1024;
const MAX_TOPIC_BODY = 32 * 1024 * 1024;
const OUTBOUND_TIMEOUT_MS = 10_000;

interface OutboundResult {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

class Outbound {
  private readonly live = new Set<{ destroy(err?: Error): void }>();

  /** One HTTP request without keep-alive; rejects on network errors, timeouts and oversized bodies. */
  send(url: string, method: 'GET' | 'POST', headers: OutgoingHttpHeaders, body: Buffer | undefined, maxBody: number): Promise<OutboundResult> {
    return new Promise<OutboundResult>((resolve, reject) => {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        reject(new Error(`invalid URL ${url}`));
        return;
      }
      const make = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
      if (!make) {
        reject(new Error(`unsupported scheme ${target.protocol}`));
        return;
      }
      const allHeaders: OutgoingHttpHeaders = { 'User-Agent': 'websub-test-hub/1', Connection: 'close', ...headers };
      if (body) allHeaders['Content-Length'] = body.length;
      const req = make(target, { method, headers: allHeaders, agent: false, timeout: OUTBOUND_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBody) {
            req.destroy(new Error(`response body over ${maxBody} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => {
          this.live.delete(req);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => {
          this.live.delete(req);
          reject(err);
        });
      });
      this.live.add(req);
      req.on('timeout', () => req.destroy(new Error(`no answer within ${OUTBOUND_TIMEOUT_MS} ms`)));
      req.on('error', (err) => {
        this.live.delete(req);
        reject(err);
      });
      req.end(body);
    });
  }

  abortAll(): void {
    for (const req of this.live) req.destroy(new Error('hub closed'));
    this.live.clear();
  }
}

function key(callback: string, topic: string): string {
  return `${callback}\n${topic}`;
}

/** Appends hub.* parameters to the callback, keeping its own query string byte for byte (spec §5.3). */
function withParams(callback: string, params: Record<string, string>): string {
  const hashAt = callback.indexOf('#');
  const base = hashAt === -1 ? callback : callback.slice(0, hashAt);
  const query = new URLSearchParams(params).toString();
  const sep = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${sep}${query}`;
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function sign(algorithm: HubAlgorithm, secret: string, body: Uint8Array): string {
  return `${algorithm}=${createHmac(algorithm, secret).update(body).digest('hex')}`;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface PendingRequest {
  id: number;
  sub: HubSubscription;
}

interface Waiter {
  topic: string;
  resolve(sub: HubSubscription): void;
  reject(err: Error): void;
}

export async function startWebSubHub(opts: HubOptions = {}): Promise<WebSubHub> {
  const options: HubOptions & { silent: boolean } = { ...opts, silent: false };
  const events: HubEvent[] = [];
  const active = new Map<string, HubSubscription>();
  const pending = new Map<number, PendingRequest>();
  const waiters = new Set<Waiter>();
  const outbound = new Outbound();
  let nextId = 1;
  let closed = false;
  let hubUrl = '';

  const record = (e: Omit<HubEvent, 'at'>): void => {
    events.push({ at: Date.now(), ...e });
  };
  const algorithm = (): HubAlgorithm => options.algorithm ?? 'sha1';
  const maxLease = (): number => options.maxLeaseSeconds ?? 864000;
  const defaultLease = (): number => Math.min(options.defaultLeaseSeconds ?? 864000, maxLease());
  const current = (s: HubSubscription): boolean => s.expiresAt > Date.now();

  const pruneExpired = (): void => {
    for (const [k, s] of active) if (!current(s)) active.delete(k);
  };

  const refuse = (res: ServerResponse, status: number, reason: string, topic = '', callback?: string): void => {
    record({ kind: 'refused', topic, callback, status, detail: reason });
    if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
    res.end(`${reason}\n`);
  };

  // ---- verification of intent (runs after the 202 has been sent) ----

  async function verifySubscribe(req: PendingRequest): Promise<void> {
    const { sub } = req;
    const k = key(sub.callback, sub.topic);
    try {
      if (options.deny) {
        const reason = 'subscription denied by test hub';
        let status: number | undefined;
        let detail = reason;
        try {
          const r = await outbound.send(withParams(sub.callback, { 'hub.mode': 'denied', 'hub.topic': sub.topic, 'hub.reason': reason }), 'GET', {}, undefined, MAX_VERIFY_BODY);
          status = r.status;
        } catch (err) {
          detail = `${reason}; notice not delivered: ${errText(err)}`;
        }
        if (closed) return;
        // A denial ends whatever subscription the callback had for this topic.
        active.delete(k);
        record({ kind: 'denied', topic: sub.topic, callback: sub.callback, status, detail });
        return;
      }
      const challenge = randomBytes(24).toString('base64url');
      let result: OutboundResult;
      try {
        result = await outbound.send(
          withParams(sub.callback, { 'hub.mode': 'subscribe', 'hub.topic': sub.topic, 'hub.challenge': challenge, 'hub.lease_seconds': String(sub.leaseSeconds) }),
          'GET',
          {},
          undefined,
          MAX_VERIFY_BODY,
        );
      } catch (err) {
        if (!closed) record({ kind: 'verify-failed', topic: sub.topic, callback: sub.callback, detail: `subscribe: ${errText(err)}` });
        return;
      }
      if (closed) return;
      const ok2xx = result.status >= 200 && result.status < 300;
      const echoed = result.body.toString('utf8') === challenge;
      if (!ok2xx || !echoed) {
        const why = !ok2xx ? `callback answered ${result.status}` : 'response body is not the challenge';
        record({ kind: 'verify-failed', topic: sub.topic, callback: sub.callback, status: result.status, detail: `subscribe: ${why}` });
        return;
      }
      // The lease starts when the subscription becomes active.
      const activated: HubSubscription = { ...sub, verified: true, expiresAt: Date.now() + sub.leaseSeconds * 1000 };
      active.set(k, activated);
      record({ kind: 'verified', topic: sub.topic, callback: sub.callback, status: result.status, detail: 'subscribe' });
      for (const w of waiters) if (w.topic === sub.topic) w.resolve({ ...activated });
    } finally {
      pending.delete(req.id);
    }
  }

  async function verifyUnsubscribe(callback: string, topic: string): Promise<void> {
    const challenge = randomBytes(24).toString('base64url');
    let result: OutboundResult;
    try {
      result = await outbound.send(withParams(callback, { 'hub.mode': 'unsubscribe', 'hub.topic': topic, 'hub.challenge': challenge }), 'GET', {}, undefined, MAX_VERIFY_BODY);
    } catch (err) {
      if (!closed) record({ kind: 'verify-failed', topic, callback, detail: `unsubscribe: ${errText(err)}` });
      return;
    }
    if (closed) return;
    const ok2xx = result.status >= 200 && result.status < 300;
    if (!ok2xx || result.body.toString('utf8') !== challenge) {
      const why = !ok2xx ? `callback answered ${result.status}` : 'response body is not the challenge';
      record({ kind: 'verify-failed', topic, callback, status: result.status, detail: `unsubscribe: ${why}` });
      return;
    }
    active.delete(key(callback, topic));
    record({ kind: 'verified', topic, callback, status: result.status, detail: 'unsubscribe' });
  }

  const later = (task: () => Promise<void>): void => {
    setImmediate(() => {
      if (closed) return;
      task().catch(() => {}); // every path records its own outcome; never let a rejection escape
    });
  };

  // ---- content distribution ----

  async function deliverTo(sub: HubSubscription, topic: string, body: Buffer, contentType: string, forged?: { secret?: string | null; algorithm?: HubAlgorithm }): Promise<number> {
    const headers: OutgoingHttpHeaders = {
      'Content-Type': contentType,
      Link: `<${hubUrl}>; rel="hub", <${topic}>; rel="self"`,
    };
    const secret = forged?.secret === undefined ? sub.secret : forged.secret;
    if (secret !== null && secret !== undefined) headers['X-Hub-Signature'] = sign(forged?.algorithm ?? algorithm(), secret, body);
    try {
      const r = await outbound.send(sub.callback, 'POST', headers, body, MAX_VERIFY_BODY);
      const ok = r.status >= 200 && r.status < 300;
      record({ kind: ok ? 'delivered' : 'delivery-failed', topic, callback: sub.callback, status: r.status, detail: ok ? undefined : `callback answered ${r.status}` });
      return r.status;
    } catch (err) {
      record({ kind: 'delivery-failed', topic, callback: sub.callback, status: 0, detail: errText(err) });
      return 0;
    }
  }

  async function distribute(topic: string, body: string | Uint8Array, contentType: string, forged?: { secret?: string | null; algorithm?: HubAlgorithm }): Promise<number[]> {
    if (closed || options.silent) return [];
    if (forged?.algorithm !== undefined && !ALGORITHMS.includes(forged.algorithm)) throw new Error(`unknown algorithm ${forged.algorithm}`);
    pruneExpired();
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const targets = [...active.values()].filter((s) => s.topic === topic && s.verified && current(s));
    return Promise.all(targets.map((s) => deliverTo(s, topic, bytes, contentType, forged)));
  }

  async function publish(topic: string): Promise<number[]> {
    if (closed || options.silent) return [];
    const r = await outbound.send(topic, 'GET', { Accept: '*/*' }, undefined, MAX_TOPIC_BODY);
    if (r.status < 200 || r.status >= 300) throw new Error(`hub could not fetch topic ${topic}: HTTP ${r.status}`);
    const type = r.headers['content-type'] ?? 'application/octet-stream';
    return distribute(topic, r.body, type);
  }

  // ---- the hub endpoint ----

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/hub') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'text/plain; charset=utf-8' }).end('use POST\n');
      return;
    }
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (mediaType !== 'application/x-www-form-urlencoded') {
      req.resume();
      refuse(res, 400, 'Content-Type must be application/x-www-form-urlencoded');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_REQUEST_BODY) {
          tooBig = true;
          break;
        }
        chunks.push(chunk);
      }
    } catch {
      return; // client went away
    }
    if (tooBig) {
      refuse(res, 413, `request body over ${MAX_REQUEST_BODY} bytes`);
      return;
    }
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const mode = form.get('hub.mode') ?? '';
    const topic = form.get('hub.topic') ?? '';
    const callback = form.get('hub.callback') ?? '';

    if (mode === 'publish') {
      // Not part of the Recommendation (publishing is left to hubs), but the common convention.
      const target = form.get('hub.url') ?? topic;
      if (!isHttpUrl(target)) return refuse(res, 400, 'hub.url or hub.topic must be an http(s) URL', target);
      res.writeHead(202, { 'Content-Type': 'text/plain; charset=utf-8' }).end('accepted\n');
      later(async () => {
        await publish(target).catch(() => {});
      });
      return;
    }
    if (mode !== 'subscribe' && mode !== 'unsubscribe') return refuse(res, 400, 'hub.mode must be subscribe or unsubscribe', topic, callback || undefined);
    if (!callback) return refuse(res, 400, 'hub.callback is required', topic);
    if (!isHttpUrl(callback)) return refuse(res, 400, 'hub.callback must be an http(s) URL', topic, callback);
    if (!topic) return refuse(res, 400, 'hub.topic is required', topic, callback);
    if (!isHttpUrl(topic)) return refuse(res, 400, 'hub.topic must be an http(s) URL', topic, callback);

    let leaseSeconds = defaultLease();
    const secretRaw = form.get('hub.secret');
    const secret = secretRaw === null || secretRaw === '' ? undefined : secretRaw;
    if (mode === 'subscribe') {
      const leaseRaw = form.get('hub.lease_seconds');
      if (leaseRaw !== null && leaseRaw !== '') {
        if (!/^\d{1,15}$/.test(leaseRaw)) return refuse(res, 400, 'hub.lease_seconds must be a non-negative integer', topic, callback);
        const asked = Number(leaseRaw);
        if (asked > 0) leaseSeconds = Math.min(asked, maxLease());
      }
      if (secret !== undefined && Buffer.byteLength(secret, 'utf8') >= 200) return refuse(res, 400, 'hub.secret must be less than 200 bytes', topic, callback);
    }

    record({ kind: mode === 'subscribe' ? 'subscribe-request' : 'unsubscribe-request', topic, callback });
    if (options.refuseWith !== undefined) return refuse(res, options.refuseWith, `refused by test hub (${options.refuseWith})`, topic, callback);

    if (mode === 'subscribe') {
      const p: PendingRequest = { id: nextId++, sub: { callback, topic, secret, leaseSeconds, expiresAt: Date.now() + leaseSeconds * 1000, verified: false } };
      pending.set(p.id, p);
      res.writeHead(202, { 'Content-Type': 'text/plain; charset=utf-8' }).end('accepted\n');
      later(() => verifySubscribe(p));
    } else {
      res.writeHead(202, { 'Content-Type': 'text/plain; charset=utf-8' }).end('accepted\n');
      later(() => verifyUnsubscribe(callback, topic));
    }
  }

  const server: Server = createServer((req, res) => {
    req.on('error', () => {});
    res.on('error', () => {});
    handle(req, res).catch((err: unknown) => {
      try {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`hub error: ${errText(err)}\n`);
      } catch {
        // socket already gone
      }
    });
  });
  const port = await listenLoopback(server);
  hubUrl = `http://127.0.0.1:${port}/hub`;

  return {
    url: hubUrl,
    events,
    subscriptions() {
      pruneExpired();
      const verified = [...active.values()].map((s) => ({ ...s }));
      const waiting = [...pending.values()].map((p) => ({ ...p.sub }));
      return [...verified, ...waiting];
    },
    publish,
    distribute,
    set(next) {
      if (next.algorithm !== undefined && !ALGORITHMS.includes(next.algorithm)) throw new Error(`unknown algorithm ${next.algorithm}`);
      Object.assign(options, next);
    },
    waitForSubscription(topic, timeoutMs = 5000) {
      pruneExpired();
      const renewing = [...pending.values()].some((p) => p.sub.topic === topic);
      const existing = [...active.values()].find((s) => s.topic === topic && s.verified);
      // Resolve at once with a live subscription unless a (re)subscription for the topic is being verified.
      if (existing && !renewing) return Promise.resolve({ ...existing });
      return new Promise<HubSubscription>((resolve, reject) => {
        const waiter: Waiter = {
          topic,
          resolve: (sub) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(sub);
          },
          reject: (err) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            reject(err);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const seen = events
            .filter((e) => e.topic === topic)
            .map((e) => `${e.kind}${e.status !== undefined ? ` ${e.status}` : ''}${e.detail ? ` (${e.detail})` : ''}`)
            .join('; ');
          reject(new Error(`no verified WebSub subscription for ${topic} within ${timeoutMs} ms; hub saw: ${seen || 'nothing'}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      outbound.abortAll();
      for (const w of [...waiters]) w.reject(new Error('WebSub hub closed'));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
