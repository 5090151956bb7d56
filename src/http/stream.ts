/**
 * GET /stream?wire=<id>: the WebSocket push endpoint, a thin uWS adapter over the stream hub
 * (matching, paid time) and the payment core (the same intake, journal, caps and settlement
 * as a paid call).
 *
 * The URL may also carry one subscription, in the wire's paid-route parameters
 * (`/stream?wire=cve&src=cisa&q=linux`): validated before any payment is read, and taken as
 * soon as the block is paid, so a client that can only open a URL needs to send nothing.
 *
 * A connection is one wire's stream, paid in blocks of minutes (protocol.ts). The block is
 * paid in the upgrade request's PAYMENT-SIGNATURE (or X-PAYMENT) header; without one the
 * upgrade gets a 402 with the block's offer, unless the URL says `pay=message` (a browser
 * cannot set headers): then the first message must pay. One sweep a second renews notices,
 * ends expired streams and drops consumers that stopped reading.
 */
import { facetsOf } from '../catalog/facets.js';
import type { HttpResponse, TemplatedApp, WebSocket, WebSocketBehavior } from 'uWebSockets.js';
import type { Config } from '../config.js';
import { log } from '../log.js';
import { presentPayment, type Intake } from '../pay/intake.js';
import { buildOffer, type Offer } from '../pay/offer.js';
import type { Outcome, Payments } from '../pay/payments.js';
import type { WireIndex } from '../search/wire-index.js';
import { StreamHub } from '../stream/hub.js';
import {
  BLOCK_MINUTES,
  CLOSE,
  IDLE_TIMEOUT_SEC,
  MAX_BUFFERED_BYTES,
  MAX_MESSAGE_BYTES,
  MAX_SUBSCRIPTIONS,
  parseClientMessage,
  STREAM_TIMING,
  streamWires,
  type StreamTiming,
  type StreamWire,
} from '../stream/protocol.js';
import type { Subscription } from '../stream/subscriptions.js';
import type { ConnectionGuard } from './connection-guard.js';
import { apiError, errorBody, type ApiError } from './errors.js';
import { splitQuery } from './params.js';
import type { RequestStats } from '../metrics.js';
import { clientAddress, enterTiming, JSON_TYPE, presentedPayment, refusePayment, send, sendError, tooManyFailures, UNAVAILABLE_RETRY } from './respond.js';
import { steadyNow, steadyOf, wallOf } from '../clock.js';

export const STREAM_PATH = '/stream';

type Wanted = Extract<ReturnType<StreamWire['subscription']>, { ok: true }> & { wire: string };

interface Conn {
  /** The wires it follows, in catalogue order (one, or several with ?wire=a,b). */
  streams: StreamWire[];
  /** Their ids joined (`edgar,news`): what its payments buy. */
  wires: string;
  offer: Offer;
  client: string;
  openedAt: number;
  /** Epoch ms; 0 while nothing is paid. */
  paidUntil: number;
  renewSent: boolean;
  subs: Map<string, Subscription>;
  /** The upgrade's payment, told in the first message. */
  settlement: object | null;
  /** The subscription the URL asked for, taken once the block is paid. */
  fromUrl: Wanted[] | null;
  ws: WebSocket<Conn> | null;
}

export interface StreamEndpoint {
  hub: StreamHub;
  /**
   * Serves the stream on this app too, and publishes to its subscribers from then on (the
   * app a certificate reload starts: see tls.ts; the previous app keeps its open streams).
   */
  route(app: TemplatedApp): void;
  /** Open connections. */
  readonly connections: number;
  /** Ends every stream with 1001 and stops the sweep. */
  close(): void;
}

interface StreamDeps {
  config: Readonly<Config>;
  payments: Payments | null;
  wires: ReadonlyMap<string, WireIndex>;
  /** Shorter paid time for tests; the default is the documented block. */
  streamTiming?: StreamTiming;
  /** Wire id → its block's offer (`streamOffers`); empty when payments are off. */
  offers: ReadonlyMap<string, Offer>;
  connections?: ConnectionGuard | null;
}

/** Each wire's block offer: BLOCK_MINUTES of push at the wire's per-call price a minute. */
export function streamOffers(config: Readonly<Config>, paymentsOn: boolean): Map<string, Offer> {
  const offers = new Map<string, Offer>();
  if (!paymentsOn || !config.payTo) return offers;
  for (const [id, s] of streamWires()) offers.set(id, blockOffer(config, [s]));
  return offers;
}

/** The offer of a block of one wire's stream, or of several wires' at the sum of their prices. */
export function blockOffer(config: Readonly<Config>, chosen: readonly StreamWire[]): Offer {
  const ids = chosen.map((s) => s.wire.id).join(',');
  const amount = chosen.reduce((sum, s) => sum + BigInt(s.blockAmount), 0n).toString();
  const price = (Number(amount) / 1e6).toString();
  const perMinute = chosen.length === 1 ? `${chosen[0]!.route.def.price} USD a minute` : `the sum of its wires' blocks`;
  return buildOffer(chosen[0]!.route, config.payTo!, config.publicUrl, config.paymentTimeoutSec, {
    path: `${STREAM_PATH}?wire=${ids}`,
    amount,
    price,
    description: `${BLOCK_MINUTES} minutes of ${chosen.map((s) => s.wire.title).join(', ')} items pushed over WebSocket as they arrive`,
    message: `The ${ids} stream costs ${price} USD per ${BLOCK_MINUTES} minutes (${perMinute}), paid with x402 in the upgrade request's PAYMENT-SIGNATURE or X-PAYMENT header, or in the first message with ?pay=message.`,
  });
}

/** Offers of several wires kept at once; beyond, the oldest is built again when asked. */
const MAX_COMBINED_OFFERS = 256;

/** An empty paid body: a block's purchase returns its paid time, not data. */

export function createStream(deps: StreamDeps, stats: RequestStats): StreamEndpoint {
  const statsSlot = stats.slot(STREAM_PATH);
  const { config, payments } = deps;
  const streams = streamWires();
  const offers = deps.offers;
  const timing = deps.streamTiming ?? STREAM_TIMING;
  // One app; after certificate reloads, every serving app made (a retired one keeps its open
  // streams, and an app without subscribers costs a publish a lookup).
  const apps: TemplatedApp[] = [];
  const hub = new StreamHub(
    deps.wires,
    (topic, message) => {
      for (const app of apps) app.publish(topic, message);
    },
    timing.blockMs,
  );
  const open = new Set<Conn>();
  const wireNames = [...streams.keys()];
  // Every parameter any wire's subscription takes; each wire then refuses those not its own.
  const urlParams = ['wire', 'pay', ...new Set([...streams.values()].flatMap((s) => [s.wire.filter.name, 'q', ...facetsOf(s.wire.id).map((f) => f.param)]))];

  // A stream of several wires is priced at the sum of their blocks: its offer, built once.
  const combined = new Map<string, Offer>();
  const offerOf = (chosen: readonly StreamWire[]): Offer | undefined => {
    if (chosen.length === 1 || offers.size === 0) return offers.get(chosen[0]!.wire.id);
    const ids = chosen.map((s) => s.wire.id).join(',');
    let offer = combined.get(ids);
    if (!offer) {
      if (combined.size >= MAX_COMBINED_OFFERS) combined.delete(combined.keys().next().value!);
      combined.set(ids, (offer = blockOffer(config, chosen)));
    }
    return offer;
  };

  const message = (conn: Conn, text: string) => {
    if (conn.ws) conn.ws.send(text);
  };
  const error = (conn: Conn, err: ApiError, extra = '') => message(conn, `{"type":"error",${errorBody(err).slice(1, -1)}${extra}}`);
  const end = (conn: Conn, [code, reason]: readonly [number, string]) => {
    const ws = conn.ws;
    conn.ws = null;
    ws?.end(code, reason);
  };

  /**
   * What a stream payment buys, as its paid answer: the end of the block (wall-clock ms). The
   * payment core keeps that answer for the payer's repeats and, in replica mode, shares it:
   * the same authorization presented again, here or on another replica, buys the same block
   * once, never a second one.
   */
  const blockEnd = (currentUntil: number) => () => Buffer.from(String(wallOf(Math.max(steadyNow(), currentUntil) + timing.blockMs)));

  /** Paid: the connection's paid time moves to what this authorization buys. */
  const credit = (conn: Conn, intake: Extract<Intake, { kind: 'authorizing' }>, outcome: Extract<Outcome, { kind: 'paid' }>) => {
    const now = steadyNow();
    const bought = Number(outcome.body.toString());
    const boughtUntil = Number.isFinite(bought) && bought > 0 ? steadyOf(bought) : undefined;
    conn.paidUntil = hub.grant(intake.authorization.id, intake.authorization.validBefore, conn.paidUntil, now, boughtUntil);
    if (conn.paidUntil - now > timing.renewNoticeMs) conn.renewSent = false;
    conn.settlement = outcome.settlement;
  };
  const paidMessage = (conn: Conn) => `{"type":"paid","paid_until":"${new Date(wallOf(conn.paidUntil)).toISOString()}","settlement":${JSON.stringify(conn.settlement)}}`;

  const upgradeError = (res: HttpResponse, err: ApiError, headers: readonly (readonly [string, string])[] = []) => sendError(res, 'get', err, false, headers);

  const behavior: WebSocketBehavior<Conn> = {
    maxPayloadLength: MAX_MESSAGE_BYTES,
    idleTimeout: IDLE_TIMEOUT_SEC,
    sendPingsAutomatically: true,
    // The hard stop: a consumer this far behind is cut off at once, so a burst between two
    // sweeps can neither grow memory without bound nor skip its messages silently.
    maxBackpressure: 4 * MAX_BUFFERED_BYTES,
    closeOnBackpressureLimit: true,

    upgrade: (res, req, context) => {
      const startedAt = performance.now();
      enterTiming(stats, statsSlot, startedAt);
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const query = splitQuery(req.getQuery() ?? '', urlParams);
      if (!query.ok) return upgradeError(res, query.error);
      const { wire, pay, ...subscription } = query.values as { wire?: string; pay?: string } & Record<string, string>;
      if (wire === undefined) return upgradeError(res, apiError(400, 'missing_parameter', 'wire is required: /stream?wire=<id>', { param: 'wire', allowed: wireNames }));
      const ids = wire.split(',');
      const chosen = wireNames.filter((id) => ids.includes(id)).map((id) => streams.get(id)!);
      if (chosen.length !== ids.length) {
        return upgradeError(res, apiError(400, 'invalid_parameter', `wire must be one of, or several distinct of, comma-separated: ${wireNames.join(', ')}`, { param: 'wire', allowed: wireNames }));
      }
      if (pay !== undefined && pay !== 'message')
        return upgradeError(res, apiError(400, 'invalid_parameter', 'pay takes one value: message (pay in the first message)', { param: 'pay', allowed: ['message'] }));
      // Checked before payment, as a paid route checks its parameters: a typo costs nothing.
      // With several wires, the URL's subscription is taken on each, so it must be valid on each.
      let fromUrl: Wanted[] | null = null;
      if (Object.keys(subscription).length > 0) {
        fromUrl = [];
        for (const s of chosen) {
          const wanted = s.subscription(subscription);
          if (!wanted.ok) return upgradeError(res, chosen.length > 1 ? { ...wanted.error, message: `${s.wire.id}: ${wanted.error.message}` } : wanted.error);
          fromUrl.push({ ...wanted, wire: s.wire.id });
        }
      }
      const offer = offerOf(chosen);
      if (!offer || !payments) {
        return upgradeError(res, apiError(503, 'payments_unavailable', `Payments are not configured on this server (${config.paymentsProblem}); streams are paid.`));
      }
      if (open.size >= config.streamMaxConnections) {
        return upgradeError(res, apiError(503, 'too_many_streams', `This server holds its maximum of ${config.streamMaxConnections} streams; try again later or poll ${chosen[0]!.route.path}.`), [
          ['Retry-After', '30'],
        ]);
      }
      const client = clientAddress(res, req);
      const conn: Conn = {
        streams: chosen,
        wires: chosen.map((s) => s.wire.id).join(','),
        offer,
        client,
        openedAt: steadyNow(),
        paidUntil: 0,
        renewSent: false,
        subs: new Map(),
        settlement: null,
        fromUrl,
        ws: null,
      };
      const upgrade = () => res.upgrade(conn, key, protocol, extensions, context);
      const presented = presentedPayment(req);
      if (!presented) {
        if (pay === 'message') return upgrade();
        return send(res, 'get', 402, offer.body, JSON_TYPE, [
          ['PAYMENT-REQUIRED', offer.header],
          ['Cache-Control', 'no-store'],
        ]);
      }
      const intake = presentPayment(payments, {
        client: payments.failures.enabled ? client : '',
        payment: presented,
        requirements: offer.requirements,
        requestKey: `stream ${conn.wires}`,
        produce: blockEnd(0),
      });
      if (intake.kind === 'throttled') return upgradeError(res, tooManyFailures(intake.retryAfterSec), [['Retry-After', String(intake.retryAfterSec)]]);
      if (intake.kind === 'malformed') return upgradeError(res, apiError(400, 'invalid_payment', intake.message));
      if (intake.kind === 'rejected') return refusePayment(res, 'get', offer, intake.reason, intake.message, intake.version);
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      intake.outcome.then(
        (outcome) => {
          if (aborted) return;
          enterTiming(stats, statsSlot, startedAt);
          if (outcome.kind === 'paid') {
            credit(conn, intake, outcome);
            // Not corked, unlike every other write after an await. uWebSockets 20.57's cork() has a
            // fault (uWebSockets #1928, fixed in 20.79): the upgrade shrinks the socket in place, and
            // cork() then reads the HTTP response's state from memory the allocator took back, whose
            // bytes differ from one process to the next; where they read "connection close", every
            // socket upgraded there is closed right after `open`, a paid stream lost with 1006.
            // Uncorked, the new socket is not corked and cork() never looks at it; the cost is
            // uWebSockets.js's warning line on stderr per such purchase (docs/deployment.md).
            return upgrade();
          }
          res.cork(() => {
            if (outcome.status === 402) refusePayment(res, 'get', offer, outcome.code, outcome.message, intake.version);
            else upgradeError(res, apiError(outcome.status, outcome.code, outcome.message), outcome.status === 503 ? UNAVAILABLE_RETRY : []);
          });
        },
        (err) => {
          log.error('stream payment failed', { wire, error: String((err as Error)?.stack ?? err) });
          if (!aborted) res.cork(() => upgradeError(res, apiError(500, 'internal_error', 'Unexpected server error; nothing was charged.')));
        },
      );
    },

    open: (ws) => {
      const conn = ws.getUserData();
      conn.ws = ws;
      open.add(conn);
      greet(conn);
    },

    message: (ws, data) => {
      const conn = ws.getUserData();
      const parsed = parseClientMessage(Buffer.from(data).toString('utf8'));
      if (!parsed.ok) return error(conn, parsed.error);
      const m = parsed.message;
      if (m.type === 'pay') return payInBand(conn, m.payment);
      if (m.type === 'unsubscribe') {
        const sub = conn.subs.get(m.sub);
        if (!sub) return error(conn, apiError(400, 'unknown_subscription', `No subscription ${JSON.stringify(m.sub.slice(0, 200))} on this connection.`));
        conn.subs.delete(m.sub);
        ws.unsubscribe(sub.key);
        hub.subscriptions.release(sub);
        return message(conn, `{"type":"unsubscribed","sub":${JSON.stringify(sub.key)}}`);
      }
      // Checked before payment, so a client can try a subscription before it pays for it.
      // On a stream of several wires, `wire` names one; without it the subscription is taken on each.
      const targets = m.wire === undefined ? conn.streams : conn.streams.filter((s) => s.wire.id === m.wire);
      if (targets.length === 0) {
        return error(conn, apiError(400, 'invalid_parameter', `wire must be one of this stream's: ${conn.wires}`, { param: 'wire', allowed: conn.streams.map((s) => s.wire.id) }));
      }
      const wanted: Wanted[] = [];
      for (const s of targets) {
        const w = s.subscription(m.params ?? {});
        if (!w.ok) return error(conn, targets.length > 1 ? { ...w.error, message: `${s.wire.id}: ${w.error.message}` } : w.error);
        wanted.push({ ...w, wire: s.wire.id });
      }
      if (conn.paidUntil <= steadyNow()) return error(conn, apiError(402, 'payment_required', 'The subscription is valid; pay for a block first: {"type":"pay","payment":…}.'));
      for (const w of wanted) subscribe(conn, ws, w);
    },

    close: (ws) => {
      // uWS reports no close of a connection that upgraded: the guard hears it here.
      deps.connections?.closed();
      const conn = ws.getUserData();
      conn.ws = null;
      open.delete(conn);
      for (const sub of conn.subs.values()) hub.subscriptions.release(sub);
      conn.subs.clear();
    },
  };

  const subscribe = (conn: Conn, ws: WebSocket<Conn>, wanted: Wanted) => {
    if (!conn.subs.has(wanted.key)) {
      if (conn.subs.size >= MAX_SUBSCRIPTIONS)
        return error(conn, apiError(400, 'too_many_subscriptions', `At most ${MAX_SUBSCRIPTIONS} subscriptions per connection; unsubscribe one or open another stream.`));
      const sub = hub.subscriptions.hold(wanted.wire, wanted.key, wanted.params);
      conn.subs.set(wanted.key, sub);
      ws.subscribe(sub.key);
    }
    message(conn, `{"type":"subscribed","sub":${JSON.stringify(wanted.key)}}`);
  };
  /** The first messages of an open connection: `paid` and the URL's subscription, or the offer. */
  const greet = (conn: Conn) => {
    if (conn.paidUntil > 0) {
      message(conn, paidMessage(conn));
      subscribeFromUrl(conn);
    } else message(conn, `{"type":"payment_required","payment_required":${JSON.stringify(conn.offer.paymentRequired)}}`);
  };
  /** The URL's subscription, once: at open when the upgrade paid, else after the first payment. */
  const subscribeFromUrl = (conn: Conn) => {
    if (!conn.fromUrl || !conn.ws) return;
    const wanted = conn.fromUrl;
    conn.fromUrl = null;
    for (const w of wanted) subscribe(conn, conn.ws, w);
  };

  /** A payment in a message: the first one, or a renewal. Its answer is a message too. */
  const payInBand = (conn: Conn, header: string) => {
    const intake = presentPayment(payments!, {
      client: payments!.failures.enabled ? conn.client : '',
      payment: header,
      requirements: conn.offer.requirements,
      requestKey: `stream ${conn.wires}`,
      produce: blockEnd(conn.paidUntil),
    });
    if (intake.kind === 'throttled') return error(conn, tooManyFailures(intake.retryAfterSec));
    if (intake.kind === 'malformed') return error(conn, apiError(400, 'invalid_payment', intake.message));
    if (intake.kind === 'rejected') return refuseInBand(conn, apiError(402, intake.reason, intake.message));
    intake.outcome.then(
      (outcome) => {
        if (!conn.ws) return; // closed meanwhile; a reconnect with the same payment gets the same block
        if (outcome.kind === 'paid') {
          credit(conn, intake, outcome);
          message(conn, paidMessage(conn));
          subscribeFromUrl(conn);
        } else refuseInBand(conn, apiError(outcome.status, outcome.code, outcome.message));
      },
      (err) => {
        log.error('stream payment failed', { wire: conn.wires, error: String((err as Error)?.stack ?? err) });
        error(conn, apiError(500, 'internal_error', 'Unexpected server error; nothing was charged.'));
      },
    );
  };
  const refuseInBand = (conn: Conn, err: ApiError) => error(conn, err, `,"payment_required":${JSON.stringify({ ...conn.offer.paymentRequired, error: err.message })}`);

  const sweep = setInterval(() => {
    const now = steadyNow();
    for (const conn of open) {
      if (!conn.ws) continue;
      if (conn.paidUntil === 0) {
        if (now - conn.openedAt > timing.firstPaymentMs) end(conn, CLOSE.not_paid);
      } else if (now >= conn.paidUntil) {
        end(conn, CLOSE.payment_expired);
      } else if (conn.ws.getBufferedAmount() > MAX_BUFFERED_BYTES) {
        end(conn, CLOSE.too_slow);
      } else if (!conn.renewSent && conn.paidUntil - now <= timing.renewNoticeMs) {
        conn.renewSent = true;
        message(conn, `{"type":"renew","paid_until":"${new Date(wallOf(conn.paidUntil)).toISOString()}","payment_required":${JSON.stringify(conn.offer.paymentRequired)}}`);
      }
    }
    hub.sweep(now);
  }, 1000);
  sweep.unref();

  return {
    hub,
    route(app) {
      app.ws<Conn>(STREAM_PATH, behavior);
      apps.push(app);
    },
    get connections() {
      return open.size;
    },
    close() {
      clearInterval(sweep);
      for (const conn of open) end(conn, CLOSE.going_away);
    },
  };
}
