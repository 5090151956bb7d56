/**
 * What serving one route takes, built once at start and shared by the HTTP front end and
 * the MCP endpoint: the compiled parameter parser, the query runner over the wire's index,
 * and the x402 offer of a paid route.
 */
import { ROUTES, type Route } from '../catalog/index.js';
import type { Config } from '../config.js';
import { buildOffer, type Offer } from '../pay/offer.js';
import type { Hit, SearchQuery } from '../search/item.js';
import { serializeEnvelope } from './envelope.js';
import { compileRouteParser, type ParseResult, type RouteParams } from './params.js';

/** What the front end needs from a wire's index. */
export interface WireReader {
  search(q: SearchQuery, now: number): Hit[];
}

export interface RouteRuntime {
  route: Route;
  parse: (rawQuery: string) => ParseResult;
  /** Runs the query and serialises the envelope; `startedAt` (performance.now()) dates took_ms. */
  run: (p: RouteParams, startedAt: number) => string;
  /** A paid route's offer; null for previews and when payments are off. */
  offer: Offer | null;
}

/** What an authorization pays for: the route and its normalised parameters. */
export function requestKey(path: string, p: RouteParams): string {
  return `${path} ${JSON.stringify([p.q, p.filter ?? null, p.since, p.limit])}`;
}

export function buildRouteRuntimes(config: Readonly<Config>, wires: ReadonlyMap<string, WireReader>, paymentsOn: boolean): Map<string, RouteRuntime> {
  const runtimes = new Map<string, RouteRuntime>();
  for (const route of ROUTES) {
    const wire = wires.get(route.wire.id);
    if (!wire) throw new Error(`no index for wire ${route.wire.id}`);
    const isState = route.def.q === 'state';
    const run = (p: RouteParams, startedAt: number): string => {
      const now = Date.now();
      const query: SearchQuery = { sinceMs: now - p.sinceWindowMs, limit: p.limit };
      if (p.q !== null) {
        if (isState) query.state = p.q;
        else query.q = p.q;
        if (p.terms) query.terms = p.terms;
      }
      if (p.filter !== undefined) query.filter = p.filter;
      return serializeEnvelope(p.q, p.since, wire.search(query, now), now, startedAt, route.withSummary);
    };
    const offer = route.kind === 'paid' && config.payTo && paymentsOn ? buildOffer(route, config.payTo, config.publicUrl, config.paymentTimeoutSec) : null;
    runtimes.set(route.path, { route, parse: compileRouteParser(route), run, offer });
  }
  return runtimes;
}
