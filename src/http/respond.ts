/**
 * Writing HTTP answers: the one place that sets status, CORS and content headers, counts the
 * answer for /metrics, and words payment refusals. Shared by the routes (server.ts) and the
 * stream's upgrade (stream.ts).
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { RequestStats } from '../metrics.js';
import { failedSettlementHeader, paymentErrorBody, refusalHeader, type Offer } from '../pay/offer.js';
import type { X402Version } from '../pay/payment-header.js';
import { apiError, errorBody, STATUS_TEXT, type ApiError } from './errors.js';

export type Method = 'get' | 'head';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const ALLOW = 'GET, HEAD, OPTIONS';
/** Headers a browser-based client needs to run the x402 handshake across origins. */
const CORS_EXPOSE = 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE';
/** Where a settlement response goes: v2's header, or v1's. */
export const SETTLEMENT_HEADER = { 1: 'X-PAYMENT-RESPONSE', 2: 'PAYMENT-RESPONSE' } as const;
/** Payment header names, v2 first; X-PAYMENT (v1) and PAYMENT (the specification's wording) are aliases. */
const PAYMENT_HEADERS = ['payment-signature', 'x-payment', 'payment'] as const;

/** The payment a request presents ('' when none), under any of its header names. */
export function presentedPayment(req: HttpRequest): string {
  return req.getHeader(PAYMENT_HEADERS[0]) || req.getHeader(PAYMENT_HEADERS[1]) || req.getHeader(PAYMENT_HEADERS[2]);
}

/**
 * The request being answered, for /metrics: set by the dispatcher (and again by an
 * asynchronous answer before it writes), read by `send`. A slot and a start time, no
 * allocation per request; JavaScript runs one answer at a time, so one of each suffices.
 */
export const timing = { stats: null as RequestStats | null, slot: 0, start: 0 };

export function enterTiming(stats: RequestStats | null, slot: number, start: number): void {
  timing.stats = stats;
  timing.slot = slot;
  timing.start = start;
}

export function observe(status: number): void {
  timing.stats?.observe(timing.slot, status, (performance.now() - timing.start) / 1000);
}

/**
 * Writes a complete response. HEAD gets the same status and headers with no body. `close`
 * ends the connection after it (uWS then sends `Connection: close`), so a request body we
 * will not read stays unread.
 */
export function send(res: HttpResponse, method: Method, status: number, body: string | Buffer, contentType: string, headers?: readonly (readonly [string, string])[], close = false): void {
  observe(status);
  // uWS answers 200 unless told otherwise: one native call fewer on the hot path.
  if (status !== 200) res.writeStatus(STATUS_TEXT[status] ?? String(status));
  res.writeHeader('Content-Type', contentType);
  res.writeHeader('Access-Control-Allow-Origin', '*');
  res.writeHeader('Access-Control-Expose-Headers', CORS_EXPOSE);
  if (headers) for (const [k, v] of headers) res.writeHeader(k, v);
  if (method === 'head') {
    // This uWS build writes a body for HEAD if given one, and aborts on
    // endWithoutBody(length) and on endWithoutBody(undefined, true): state the length
    // ourselves and send no body; when closing, only a length of 0 is safe to report.
    if (close) return void res.endWithoutBody(0, true);
    res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
    res.endWithoutBody();
  } else {
    res.end(body, close);
  }
}

/** On a 503 from the payment core (its store unreachable, or shutting down): when to try again. */
export const UNAVAILABLE_RETRY = [['Retry-After', '5']] as const;

export function sendError(res: HttpResponse, method: Method, err: ApiError, close = false, extra: readonly (readonly [string, string])[] = []): void {
  const headers: (readonly [string, string])[] = [['Cache-Control', 'no-store'], ...extra];
  if (err.status === 405) headers.push(['Allow', ALLOW]);
  send(res, method, err.status, errorBody(err), JSON_TYPE, headers, close);
}

/**
 * The client's address: the peer's, or, when the peer is this machine (the reverse proxy of
 * deploy/nginx, which sets it from the address it saw), the X-Real-IP header. A remote
 * peer cannot claim another address: its X-Real-IP is ignored.
 */
export function clientAddress(res: HttpResponse, req: HttpRequest): string {
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (LOOPBACK.has(peer)) return req.getHeader('x-real-ip') || peer;
  return peer;
}
const LOOPBACK = new Set(['127.0.0.1', '0000:0000:0000:0000:0000:ffff:7f00:0001', '0000:0000:0000:0000:0000:0000:0000:0001']);

export function tooManyFailures(retryAfterSec: number): ApiError {
  return apiError(429, 'too_many_failed_payments', `Too many failed payments from this address; presented payments are refused unread for ${retryAfterSec} s. Nothing was charged.`, {
    details: { retry_after_sec: retryAfterSec },
  });
}

/**
 * A refused payment: the reason in the body and in a fresh offer's `error`, and a failed
 * settlement response under the name the payment's protocol version reads.
 */
export function refusePayment(res: HttpResponse, method: Method, offer: Offer, reason: string, message: string, version: X402Version): void {
  const headers = [
    ['PAYMENT-REQUIRED', refusalHeader(offer, message)],
    ['Cache-Control', 'no-store'],
    [SETTLEMENT_HEADER[version], failedSettlementHeader(reason, version)],
  ] as const;
  send(res, method, 402, paymentErrorBody(offer, reason, message), JSON_TYPE, headers);
}
