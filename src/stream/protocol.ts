/**
 * The /stream protocol: what a client may send, what the server sends, the close codes and
 * the block of minutes a payment buys. Documented from these definitions in OpenAPI and
 * /llms-full.txt, so the text and the behaviour cannot drift apart.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { facetsOf } from '../catalog/facets.js';
import { PAID_ROUTES, type Route, type WireDef } from '../catalog/index.js';
import { apiError, type ApiError } from '../http/errors.js';
import { compileRouteParser } from '../http/params.js';
import type { SubscriptionParams } from './subscriptions.js';

/** A payment buys this many minutes of a wire's stream. */
export const BLOCK_MINUTES = 10;
export const BLOCK_MS = BLOCK_MINUTES * 60_000;
/** The server asks for the next block this long before the paid time ends. */
export const RENEW_NOTICE_MS = 60_000;
/** A connection opened to pay in its first message must have paid within this. */
export const FIRST_PAYMENT_MS = 30_000;
/** The clock of paid time; tests shorten it, the price of a block stays what the offer says. */
export interface StreamTiming {
  blockMs: number;
  renewNoticeMs: number;
  firstPaymentMs: number;
}
export const STREAM_TIMING: StreamTiming = { blockMs: BLOCK_MS, renewNoticeMs: RENEW_NOTICE_MS, firstPaymentMs: FIRST_PAYMENT_MS };
export const MAX_SUBSCRIPTIONS = 16;
/** Largest client message: a payment is about 1–2 KiB of base64. */
export const MAX_MESSAGE_BYTES = 16 * 1024;
/** A connection whose unread output passes this is closed (`too_slow`). */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/**
 * A connection silent this long is pinged (uWS checks every 4 s), and closed if the ping goes
 * unanswered as long again. Under 30 s, so a quiet wire's stream outlives a proxy's read
 * timeout (deploy/nginx: 30 s) without a pushed item.
 */
export const IDLE_TIMEOUT_SEC = 16;

export { CLOSE } from './close-codes.js';

const Params = Type.Record(Type.String(), Type.String(), { description: "The wire's filter parameter and/or q, as on its paid route; since and limit do not apply" });

export const ClientMessage = Type.Union([
  Type.Object(
    { type: Type.Literal('subscribe'), wire: Type.Optional(Type.String({ description: 'On a stream of several wires, the one to subscribe to; without it, each' })), params: Type.Optional(Params) },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('unsubscribe'), sub: Type.String() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('pay'), payment: Type.String({ description: 'The value a PAYMENT-SIGNATURE (or X-PAYMENT) header would carry' }) }, { additionalProperties: false }),
]);
export type ClientMessage = Static<typeof ClientMessage>;
const checkMessage = TypeCompiler.Compile(ClientMessage);

/** What the server sends, for the documentation (each is one JSON text message). */
export const SERVER_MESSAGES = {
  paid: '{"type":"paid","paid_until":ISO time,"settlement":SettlementResponse} — a block was bought (or the same payment was presented again: the same paid_until)',
  subscribed: '{"type":"subscribed","sub":key} — key names the subscription in its items, e.g. "news?category=markets&q=fed"',
  unsubscribed: '{"type":"unsubscribed","sub":key}',
  item: '{"type":"item","sub":key,"update":false|true,"item":{…the envelope\'s article JSON…}} — once per new item that matches; update=true when a stored item changed',
  renew: '{"type":"renew","paid_until":ISO time,"payment_required":PaymentRequired} — 60 s before the paid time ends: send {"type":"pay"} with the next block',
  error: '{"type":"error","error":{"code":…,"message":…,…},"payment_required"?:PaymentRequired} — the message was refused (a refused payment carries the offer again); the connection stays open',
  payment_required: '{"type":"payment_required","payment_required":PaymentRequired} — the first message of a pay=message connection',
} as const;

export type ParsedMessage = { ok: true; message: ClientMessage } | { ok: false; error: ApiError };

export function parseClientMessage(text: string): ParsedMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: apiError(400, 'invalid_message', 'A message is one JSON object: {"type":"subscribe"|"unsubscribe"|"pay",…}.') };
  }
  if (!checkMessage.Check(value)) {
    return { ok: false, error: apiError(400, 'invalid_message', 'Unknown message: send {"type":"subscribe","params":{…}}, {"type":"unsubscribe","sub":…} or {"type":"pay","payment":…}.') };
  }
  return { ok: true, message: value };
}

export interface StreamWire {
  wire: WireDef;
  /** The paid route whose price and parameters the stream takes. */
  route: Route;
  /** A block's price in atomic USDC: BLOCK_MINUTES times the per-call price. */
  blockAmount: string;
  blockPrice: string;
  /** Validates a subscription's parameters: its canonical key and what to match. */
  subscription(params: Record<string, string>): { ok: true; key: string; params: SubscriptionParams } | { ok: false; error: ApiError };
}

let built: ReadonlyMap<string, StreamWire> | null = null;

/**
 * One stream per wire, priced and validated as its searchable paid route. Built once (its
 * parsers are compiled) and shared by the endpoint, the offers and the documents.
 */
export function streamWires(): ReadonlyMap<string, StreamWire> {
  return (built ??= buildStreamWires());
}

function buildStreamWires(): Map<string, StreamWire> {
  const out = new Map<string, StreamWire>();
  for (const route of PAID_ROUTES) {
    if (out.has(route.wire.id) || route.def.q === 'none') continue;
    const { wire } = route;
    const parse = compileRouteParser({ ...route, def: { ...route.def, qRequired: false } });
    const facets = facetsOf(wire.id);
    const allowed = [wire.filter.name, 'q', ...facets.map((f) => f.param)];
    const blockAmount = (BigInt(route.amount!) * BigInt(BLOCK_MINUTES)).toString();
    out.set(wire.id, {
      wire,
      route,
      blockAmount,
      blockPrice: (Number(blockAmount) / 1e6).toString(),
      subscription(params) {
        const names = Object.keys(params);
        const unknown = names.find((n) => !allowed.includes(n));
        if (unknown !== undefined) {
          return {
            ok: false,
            error: apiError(400, 'unknown_parameter', `unknown parameter "${unknown.slice(0, 64)}"; a subscription to ${wire.id} takes: ${allowed.join(', ')}`, {
              param: unknown.slice(0, 64),
              allowed,
            }),
          };
        }
        const query = names.map((n) => `${encodeURIComponent(n)}=${encodeURIComponent(params[n]!)}`).join('&');
        const parsed = parse(query);
        if (!parsed.ok) return parsed;
        const p = parsed.params;
        const sub: SubscriptionParams = {};
        const keyParts: string[] = [];
        if (p.filter !== undefined) {
          sub.filter = p.filter;
          keyParts.push(`${wire.filter.name}=${p.filter}`);
        }
        if (p.q !== null) {
          // The key names the terms, so "Fed  Rate" and "fed rate" share one subscription.
          if (route.def.q === 'state') sub.state = p.q;
          else sub.terms = p.terms ?? [];
          keyParts.push(`q=${encodeURIComponent(sub.state ?? sub.terms!.join(' '))}`);
        }
        // The key names the normalised values, so `ticker=nvda` and `ticker=NVDA` share one subscription.
        if (p.tags) {
          sub.tags = p.tags;
          for (const group of p.tags) keyParts.push(`${group[0]!.slice(0, group[0]!.indexOf(':'))}=${group.map((t) => t.slice(t.indexOf(':') + 1)).join(',')}`);
        }
        if (p.min !== undefined) {
          sub.min = p.min;
          keyParts.push(`${facets.find((f) => f.kind === 'min')!.param}=${p.min}`);
        }
        return { ok: true, key: keyParts.length ? `${wire.id}?${keyParts.join('&')}` : wire.id, params: sub };
      },
    });
  }
  return out;
}
