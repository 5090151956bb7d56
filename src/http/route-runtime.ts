/**
 * What serving one route takes, built once at start and shared by the HTTP front end and
 * the MCP endpoint: the compiled parameter parser, the query runner over the wire's index,
 * and the x402 offer of a paid route.
 */
import { ROUTES, type Route } from '../catalog/index.js';
import type { Config } from '../config.js';
import { buildOffer, type Offer } from '../pay/offer.js';
import type { Hit, SearchQuery } from '../search/item.js';
import { envelopeParts, serializeEnvelope, tookText } from './envelope.js';
import { compileRouteParser, type ParseResult, type RouteParams } from './params.js';

/** What the front end needs from a wire's index. */
export interface WireReader {
  search(q: SearchQuery, now: number): Hit[];
  /** Changes whenever an item is stored or dropped. */
  readonly version: number;
}

export interface RouteRuntime {
  route: Route;
  parse: (rawQuery: string) => ParseResult;
  /** Runs the query and serialises the envelope; `startedAt` (performance.now()) dates took_ms. */
  run: (p: RouteParams, startedAt: number) => string;
  /** A paid route's offer; null for previews and when payments are off. */
  offer: Offer | null;
  /**
   * Previews: the answer to this raw query string if one computed earlier still holds, else
   * null (then parse, and `runAndRemember`).
   */
  cached: (rawQuery: string, startedAt: number) => Buffer | string | null;
  /** `run`, keeping the answer for `rawQuery` while it holds. */
  runAndRemember: (rawQuery: string, p: RouteParams, startedAt: number) => string;
  /** Answers kept (at most MAX_ANSWERS), and dropping them all (memory pressure). */
  cache: { readonly size: number; clear(): void };
}

/** Answers kept per route; beyond it the route's answers are dropped and start again. */
const MAX_ANSWERS = 512;
const MINUTE = 60_000;
/**
 * How long an answer must have held before it is encoded once into bytes. While a wire is
 * ingesting, its version changes every apply slice and an answer rarely outlives a few
 * requests: encoding each one gave the GC a stream of Buffers (and pooled ArrayBuffers) to
 * promote and sweep. Until it has held this long, an answer is sent as its two strings
 * around took_ms.
 */
const ENCODE_AFTER_MS = 100;

interface Answer {
  version: number;
  /** Epoch ms at which it stops holding. */
  expires: number;
  /** Epoch ms at which it was computed. */
  at: number;
  /** The answer around its took_ms value, until it is encoded. */
  head: string;
  tail: string;
  /**
   * Once it has held ENCODE_AFTER_MS, the encoded answer with `width` bytes at `slot` for
   * took_ms, written in place on each use: a lasting answer is sent as the same bytes, with
   * no string to build or encode. took_ms has three decimals, so its width changes only when
   * the time crosses a power of ten (10 ms): then the bytes are rebuilt for the new width.
   */
  bytes: Buffer | undefined;
  slot: number;
  width: number;
}

/** The answer's bytes with this request's took_ms in its slot. */
function stamp(a: Answer & { bytes: Buffer }, startedAt: number): Buffer {
  const took = tookText(startedAt);
  if (took.length !== a.width) {
    a.bytes = Buffer.concat([a.bytes.subarray(0, a.slot), Buffer.from(took, 'latin1'), a.bytes.subarray(a.slot + a.width)]);
    a.width = took.length;
  } else a.bytes.write(took, a.slot, 'latin1');
  return a.bytes;
}

/**
 * Until when an answer holds, besides the wire's version: until the first `age_minutes` of
 * it changes, or the first of its items leaves the `since` window (nothing else can enter
 * the window without a new item, which changes the version). At most a minute.
 */
function holdsUntil(hits: readonly Hit[], now: number, windowMs: number): number {
  let until = now + MINUTE;
  for (const { item } of hits) {
    const age = now - item.published;
    until = Math.min(until, age > 0 ? now + MINUTE - (age % MINUTE) : item.published + MINUTE, item.published + windowMs + 1);
  }
  return until;
}

/** What an authorization pays for: the route and its normalised parameters. */
export function requestKey(path: string, p: RouteParams): string {
  return `${path} ${JSON.stringify([p.q, p.filter ?? null, p.since, p.limit, p.tags ?? null, p.min ?? null])}`;
}

export function buildRouteRuntimes(config: Readonly<Config>, wires: ReadonlyMap<string, WireReader>, paymentsOn: boolean): Map<string, RouteRuntime> {
  const runtimes = new Map<string, RouteRuntime>();
  for (const route of ROUTES) {
    const wire = wires.get(route.wire.id);
    if (!wire) throw new Error(`no index for wire ${route.wire.id}`);
    const isState = route.def.q === 'state';
    const search = (p: RouteParams, now: number): Hit[] => {
      const query: SearchQuery = { sinceMs: now - p.sinceWindowMs, limit: p.limit };
      if (p.q !== null) {
        if (isState) query.state = p.q;
        else query.q = p.q;
        if (p.terms) query.terms = p.terms;
      }
      if (p.filter !== undefined) query.filter = p.filter;
      if (p.tags) query.tags = p.tags;
      if (p.min !== undefined) query.min = p.min;
      return wire.search(query, now);
    };
    const run = (p: RouteParams, startedAt: number): string => {
      const now = Date.now();
      return serializeEnvelope(p.q, p.since, search(p, now), now, startedAt, route.withSummary);
    };
    // The same preview asked again gives the same answer until the wire changes or the clock
    // moves one of its figures; kept as the text around took_ms, it is answered without
    // parsing, searching or serialising. (A relevance score with q decays slowly with time;
    // within the minute an answer holds it moves by less than 0.05 %.)
    const answers = new Map<string, Answer>();
    const cached = (rawQuery: string, startedAt: number): Buffer | string | null => {
      const a = answers.get(rawQuery);
      if (!a) return null;
      const now = Date.now();
      if (a.version !== wire.version || now >= a.expires) {
        answers.delete(rawQuery);
        return null;
      }
      if (a.bytes === undefined) {
        const took = tookText(startedAt);
        if (now - a.at < ENCODE_AFTER_MS) return a.head + took + a.tail;
        a.bytes = Buffer.from(a.head + took + a.tail);
        a.slot = Buffer.byteLength(a.head);
        a.width = took.length;
        a.head = a.tail = '';
        return a.bytes;
      }
      return stamp(a as Answer & { bytes: Buffer }, startedAt);
    };
    const runAndRemember = (rawQuery: string, p: RouteParams, startedAt: number): string => {
      const now = Date.now();
      const version = wire.version;
      const hits = search(p, now);
      const [head, tail] = envelopeParts(p.q, p.since, hits, now, route.withSummary);
      if (answers.size >= MAX_ANSWERS) answers.clear();
      answers.set(rawQuery, { version, expires: holdsUntil(hits, now, p.sinceWindowMs), at: now, head, tail, bytes: undefined, slot: 0, width: 0 });
      return head + tookText(startedAt) + tail;
    };
    const offer = route.kind === 'paid' && config.payTo && paymentsOn ? buildOffer(route, config.payTo, config.publicUrl, config.paymentTimeoutSec) : null;
    runtimes.set(route.path, { route, parse: compileRouteParser(route), run, offer, cached, runAndRemember, cache: answers });
  }
  return runtimes;
}
