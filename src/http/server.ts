/**
 * The uWebSockets.js front end: a thin adapter that maps a request to a precomputed route
 * handler and writes the answer. Every route is answered from memory; nothing here touches
 * the network or the disk.
 *
 * One `any('/*')` handler dispatches through a Map built at start from the catalogue, so
 * 404 and 405 are decided in one place and every route shares the same error handling.
 */
import { LOOKUP_PARAMS } from '../catalog/lookup-params.js';
import { answerLookup } from '../tickers/lookup.js';
import { splitQuery } from './params.js';
import type { CompanyMap } from '../tickers/company-map.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { REDIRECTS } from '../catalog/index.js';
import type { Config } from '../config.js';
import { buildOpenApi } from '../docs/openapi.js';
import { buildHomePage } from '../docs/home-page.js';
import { buildLlmsText } from '../docs/llms.js';
import { buildPriceList } from '../docs/price-list.js';
import { log } from '../log.js';
import { buildMcpCatalog } from '../mcp/catalog.js';
import { handleMcp, MAX_MCP_BODY } from '../mcp/endpoint.js';
import { presentPayment } from '../pay/intake.js';
import type { Offer } from '../pay/offer.js';
import { V1_NETWORK, type X402Version } from '../pay/payment-header.js';
import { buildPaywallPage } from '../pay/paywall.js';
import type { Outcome, Payments } from '../pay/payments.js';
import { apiError, errorBody, STATUS_TEXT } from './errors.js';
import {
  ALLOW,
  clientAddress,
  enterTiming,
  JSON_TYPE,
  observe,
  presentedPayment,
  refusePayment,
  send,
  sendError,
  SETTLEMENT_HEADER,
  timing,
  tooManyFailures,
  UNAVAILABLE_RETRY,
  type Method,
} from './respond.js';
import { requestKey, type RouteRuntime } from './route-runtime.js';
import type { LoadedUws } from './uws.js';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { OTHER_ROUTE, RequestStats } from '../metrics.js';
import type { WireIndex } from '../search/wire-index.js';
import type { CallbackAnswer, WebSubCallbacks } from '../ingest/websub.js';
import type { ConnectionGuard } from './connection-guard.js';
import { appOptions, type TlsFiles } from './tls.js';
import { createStream, STREAM_PATH, streamOffers, type StreamEndpoint } from './stream.js';
import type { StreamTiming } from '../stream/protocol.js';

export interface ServerDeps {
  config: Readonly<Config>;
  uws: LoadedUws;
  /** Route path → what serving it takes. */
  runtimes: ReadonlyMap<string, RouteRuntime>;
  /** Builds the /health record. */
  health: () => object;
  /** Builds the /sources list. */
  sources: () => object[];
  /** SEC's ticker map in hand, for /tickers (null until one is). */
  companies?: () => CompanyMap | null;
  /** The payment core; null when payments are not configured. */
  payments: Payments | null;
  /** Builds the /metrics registry around the request counters the front end keeps and the streams. */
  metrics: (requests: RequestStats, stream: StreamEndpoint) => Registry;
  /** The wires, whose stored items /stream pushes. */
  wires: ReadonlyMap<string, WireIndex>;
  /** Refuses new connections before the process runs out of file descriptors (none: no limit known). */
  connections?: ConnectionGuard | null;
  /** What answers the WebSub callbacks under /websub/: the subscriber, or the relay to the leader's; null without either. */
  websub?: WebSubCallbacks | null;
  streamTiming?: StreamTiming;
}

export interface RunningServer {
  port: number;
  close(): void;
}

type Handler = (res: HttpResponse, req: HttpRequest, method: Method) => void;

const SERVICE_VERSION = '0.1.0';

/** Does the request announce a body? (Content-Length other than 0, or any Transfer-Encoding.) */
function announcesBody(req: HttpRequest): boolean {
  const length = req.getHeader('content-length');
  return (length !== '' && length !== '0') || req.getHeader('transfer-encoding') !== '';
}

/** A free, precomputed document: encoded once, served as the same buffer every time. */
function staticHandler(body: string, contentType: string, cacheSeconds = 60): Handler {
  const buffer = Buffer.from(body);
  const headers = [['Cache-Control', `public, max-age=${cacheSeconds}`]] as const;
  return (res, _req, method) => send(res, method, 200, buffer, contentType, headers);
}

function wireHandler(rt: RouteRuntime, deps: ServerDeps): Handler {
  const { route, parse, run, offer } = rt;
  const previewHeaders = [['Cache-Control', 'no-store']] as const;
  const paymentUnavailable = apiError(503, 'payments_unavailable', `Payments are not configured on this server (${deps.config.paymentsProblem}). The free preview ${route.previewPath} still works.`, {
    details: { preview: route.previewPath },
  });
  const offerHeaders = offer
    ? ([
        ['PAYMENT-REQUIRED', offer.header],
        ['Cache-Control', 'no-store'],
        ['Vary', 'Accept'],
      ] as const)
    : [];
  const payments = deps.payments;
  let paywall: { body: Buffer; headers: readonly (readonly [string, string])[] } | null = null;

  const answer = (res: HttpResponse, outcome: Outcome, version: X402Version) => {
    if (outcome.kind === 'paid') {
      const settlement = Buffer.from(JSON.stringify(version === 1 ? { ...outcome.settlement, network: V1_NETWORK } : outcome.settlement)).toString('base64');
      send(res, 'get', 200, outcome.body, JSON_TYPE, [
        ['Cache-Control', 'private, no-store'],
        [SETTLEMENT_HEADER[version], settlement],
      ]);
    } else if (outcome.status === 402) {
      refusePayment(res, 'get', offer!, outcome.code, outcome.message, version);
    } else {
      sendError(res, 'get', apiError(outcome.status, outcome.code, outcome.message), false, outcome.status === 503 ? UNAVAILABLE_RETRY : []);
    }
  };

  return (res, req, method) => {
    const startedAt = timing.start;
    const rawQuery = req.getQuery() ?? '';
    if (route.kind === 'preview') {
      const answer = rt.cached(rawQuery, startedAt);
      if (answer !== null) return send(res, method, 200, answer, JSON_TYPE, previewHeaders);
    }
    const parsed = parse(rawQuery);
    if (!parsed.ok) return sendError(res, method, parsed.error);
    const p = parsed.params;
    if (route.kind === 'preview') return send(res, method, 200, rt.runAndRemember(rawQuery, p, startedAt), JSON_TYPE, previewHeaders);

    // Parameters are validated first: nobody is asked to pay for a query that cannot run.
    if (!offer || !payments) return sendError(res, method, paymentUnavailable);
    // HEAD returns no data, so it never takes a payment: it shows the offer.
    const presented = method === 'get' && presentedPayment(req);
    if (!presented) {
      // A browser gets the paywall page (built on first use: most routes never need it).
      if (req.getHeader('accept').includes('text/html')) {
        if (!paywall) {
          const page = buildPaywallPage(offer);
          paywall = { body: Buffer.from(page.html), headers: [...offerHeaders, ['Content-Security-Policy', page.csp], ['X-Content-Type-Options', 'nosniff'], ['Referrer-Policy', 'no-referrer']] };
        }
        return send(res, method, 402, paywall.body, 'text/html; charset=utf-8', paywall.headers);
      }
      return send(res, method, 402, offer.body, JSON_TYPE, offerHeaders);
    }
    // A client that has failed too many payments is refused before any decoding or
    // signature work: a flood of forged payments must not starve the serving thread.
    const intake = presentPayment(payments, {
      client: payments.failures.enabled ? clientAddress(res, req) : '',
      payment: presented,
      requirements: offer.requirements,
      requestKey: requestKey(route.path, p),
      produce: () => Buffer.from(run(p, startedAt)),
    });
    if (intake.kind === 'throttled') return sendError(res, method, tooManyFailures(intake.retryAfterSec), false, [['Retry-After', String(intake.retryAfterSec)]]);
    if (intake.kind === 'malformed') return sendError(res, method, apiError(400, 'invalid_payment', intake.message));
    if (intake.kind === 'rejected') return refusePayment(res, method, offer, intake.reason, intake.message, intake.version);

    // From here the answer is asynchronous (journal, settlement): uWS needs to know if the
    // client goes away. A client that drops a paid call can retry with the same payment.
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const { stats, slot } = timing;
    intake.outcome.then(
      (outcome) => {
        if (!aborted) res.cork(() => (enterTiming(stats, slot, startedAt), answer(res, outcome, intake.version)));
      },
      (err) => {
        log.error('paid call failed', { route: route.path, error: String((err as Error)?.stack ?? err) });
        if (!aborted) res.cork(() => (enterTiming(stats, slot, startedAt), sendError(res, 'get', INTERNAL)));
      },
    );
  };
}

function buildHandlers(deps: ServerDeps, streamOffers: ReadonlyMap<string, Offer>): Map<string, Handler> {
  const { config } = deps;
  const handlers = new Map<string, Handler>();
  const offers = new Map<string, Offer>();
  for (const [path, rt] of deps.runtimes) {
    if (rt.offer) offers.set(path, rt.offer);
    handlers.set(path, wireHandler(rt, deps));
  }
  for (const [from, to] of REDIRECTS) {
    handlers.set(from, (res, req, method) => {
      const query = req.getQuery();
      const location = query ? `${to}?${query}` : to;
      send(res, method, 308, JSON.stringify({ redirect: location }), JSON_TYPE, [['Location', location]]);
    });
  }
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  handlers.set('/openapi.json', staticHandler(json(buildOpenApi({ publicUrl: config.publicUrl })), JSON_TYPE));
  handlers.set('/llms-full.txt', staticHandler(buildLlmsText(config.publicUrl), 'text/plain; charset=utf-8'));
  handlers.set('/.well-known/x402', staticHandler(json(buildPriceList(offers, config.payTo, streamOffers)), JSON_TYPE));
  handlers.set('/mcp', staticHandler(json(buildMcpCatalog(config.publicUrl)), JSON_TYPE));
  // Health and sources carry live poll state: built per request (free, rarely called routes).
  const noStore = [['Cache-Control', 'no-store']] as const;
  handlers.set('/health', (res, _req, method) => send(res, method, 200, JSON.stringify(deps.health()), JSON_TYPE, noStore));
  handlers.set('/sources', (res, _req, method) => send(res, method, 200, JSON.stringify(deps.sources()), JSON_TYPE, noStore));
  handlers.set('/tickers', tickersHandler(deps));
  // A browser (Accept: text/html) gets the page; API clients keep the JSON index.
  const indexBody = Buffer.from(
    json({
      name: 'wires',
      docs: { openapi: '/openapi.json', llms: '/llms-full.txt', prices: '/.well-known/x402', mcp: '/mcp', health: '/health', sources: '/sources' },
    }),
  );
  const page = buildHomePage(config.publicUrl, { floorSec: config.pollFloorSec, ceilingSec: config.pollIntervalSec });
  const pageBody = Buffer.from(page.html);
  const common = [
    ['Cache-Control', 'public, max-age=60'],
    ['Vary', 'Accept'],
  ] as const;
  const pageHeaders = [...common, ['Content-Security-Policy', page.csp], ['X-Content-Type-Options', 'nosniff'], ['Referrer-Policy', 'no-referrer']] as const;
  handlers.set('/', (res, req, method) => {
    if (req.getHeader('accept').includes('text/html')) send(res, method, 200, pageBody, 'text/html; charset=utf-8', pageHeaders);
    else send(res, method, 200, indexBody, JSON_TYPE, common);
  });
  return handlers;
}

const UNAUTHORIZED = apiError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');

/**
 * GET /metrics: the Prometheus text format. With METRICS_TOKEN set, only a request bearing
 * it (compared in constant time) gets them.
 */
function metricsHandler(registry: Registry, token: string | null): Handler {
  const expected = token === null ? null : Buffer.from(`Bearer ${token}`);
  const authorized = (header: string) => {
    if (expected === null) return true;
    const given = Buffer.from(header);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const noStore = [['Cache-Control', 'no-store']] as const;
  return (res, req, method) => {
    if (!authorized(req.getHeader('authorization'))) {
      const headers = [
        ['Cache-Control', 'no-store'],
        ['WWW-Authenticate', 'Bearer realm="metrics"'],
      ] as const;
      return send(res, method, 401, errorBody(UNAUTHORIZED), JSON_TYPE, headers);
    }
    const { stats, slot, start } = timing;
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    registry.metrics().then(
      (text) => !aborted && res.cork(() => (enterTiming(stats, slot, start), send(res, method, 200, text, registry.contentType, noStore))),
      (err) => {
        log.error('metrics failed', { error: String((err as Error)?.stack ?? err) });
        if (!aborted) res.cork(() => (enterTiming(stats, slot, start), sendError(res, method, INTERNAL)));
      },
    );
  };
}

/** GET /tickers?q=|cik=|ticker=: a company's tickers and CIK from SEC's map, free. */
function tickersHandler(deps: ServerDeps): Handler {
  return (res, req, method) => {
    const split = splitQuery(req.getQuery() ?? '', LOOKUP_PARAMS);
    if (!split.ok) return sendError(res, method, split.error);
    const answer = answerLookup(deps.companies?.() ?? null, split.values);
    if (!answer.ok) return sendError(res, method, answer.error, false, answer.error.status === 503 ? UNAVAILABLE_RETRY : []);
    send(res, method, 200, answer.body, JSON_TYPE, [['Cache-Control', 'public, max-age=300']]);
  };
}

const NOT_FOUND = apiError(404, 'not_found', 'No such route. The route list is at /llms-full.txt and /openapi.json.');
const METHOD_NOT_ALLOWED = apiError(405, 'method_not_allowed', 'This route takes GET, HEAD and OPTIONS only.');
const INTERNAL = apiError(500, 'internal_error', 'Unexpected server error; nothing was charged.');

const BODY_NOT_ALLOWED = apiError(413, 'body_too_large', 'This request takes no body (only POST /mcp and WebSub notifications do); the connection is closed without reading it.');

const MCP_METHODS = apiError(405, 'method_not_allowed', 'POST /mcp speaks MCP (JSON-RPC over Streamable HTTP, JSON responses, no event stream); GET /mcp returns the catalogue.');

/** POST /mcp: reads the body under a cap, answers the JSON-RPC message. */
function mcpHandler(deps: ServerDeps) {
  const mcp = { runtimes: deps.runtimes, payments: deps.payments, version: SERVICE_VERSION, ...(deps.companies && { companies: deps.companies }) };
  return (res: HttpResponse, req: HttpRequest): void => {
    const length = Number(req.getHeader('content-length') || 0);
    const { stats, slot, start } = timing;
    const client = deps.payments?.failures.enabled ? clientAddress(res, req) : '';
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const answer = (status: number, body: string | null, close = false) => {
      if (aborted) return;
      aborted = true;
      res.cork(() => {
        enterTiming(stats, slot, start);
        observe(body === null ? 202 : status);
        res.writeStatus(body === null ? '202 Accepted' : (STATUS_TEXT[status] ?? String(status)));
        res.writeHeader('Access-Control-Allow-Origin', '*');
        // A 202 to a notification has no body, and says so (Content-Length: 0): under HTTP/1.1
        // an answer with neither a length nor chunking runs until the connection closes.
        if (body === null) return void res.end();
        res.writeHeader('Content-Type', JSON_TYPE);
        res.end(body, close);
      });
    };
    // The rest of an oversized body is not read: the connection is closed after the answer.
    const tooLarge = () => answer(413, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Request body over ${MAX_MCP_BODY} bytes` } }), true);
    if (length > MAX_MCP_BODY) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (size > MAX_MCP_BODY) return;
      size += chunk.byteLength;
      if (size > MAX_MCP_BODY) return tooLarge();
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      handleMcp(Buffer.concat(chunks).toString('utf8'), { ...mcp, client }).then(
        (r) => answer(r.status, r.body),
        (err) => {
          log.error('mcp call failed', { error: String((err as Error)?.stack ?? err) });
          answer(500, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }));
        },
      );
    });
  };
}

const WEBSUB_PREFIX = '/websub/';
const WEBSUB_SLOT = '/websub/:source';

/**
 * `/websub/<source id>`: the WebSub callback. GET is the hub's verification of intent, POST a
 * content notification, read under the fetcher's body cap (the same documents a poll takes).
 */
function websubHandler(deps: ServerDeps) {
  const websub = deps.websub!;
  const cap = websub.maxBodyBytes;
  return (res: HttpResponse, req: HttpRequest, m: string, path: string): void => {
    const { stats, slot, start } = timing;
    // Source ids are plain ASCII: the path is taken as it is, never percent-decoded.
    const sourceId = path.slice(WEBSUB_PREFIX.length);
    let done = false;
    res.onAborted(() => {
      done = true;
    });
    const answer = (a: CallbackAnswer, close = false) => {
      if (done) return;
      done = true;
      res.cork(() => {
        enterTiming(stats, slot, start);
        send(res, 'get', a.status, a.body, a.contentType === 'text/plain' ? 'text/plain; charset=utf-8' : JSON_TYPE, [['Cache-Control', 'no-store']], close);
      });
    };
    // Relayed to the leader in replica mode: answered when its answer comes back.
    const reply = (a: CallbackAnswer | Promise<CallbackAnswer>) => (a instanceof Promise ? void a.then(answer) : answer(a));
    if (m === 'get') return reply(websub.verify(sourceId, new URLSearchParams(req.getQuery() ?? '')));
    if (m !== 'post')
      return answer({ status: 405, body: JSON.stringify({ error: 'method_not_allowed', message: 'A WebSub callback takes GET (verification) and POST (notification).' }), contentType: 'json' });
    const headers = { signature: req.getHeader('x-hub-signature'), link: req.getHeader('link'), contentType: req.getHeader('content-type') };
    const tooLarge = () => answer({ status: 413, body: JSON.stringify({ error: 'body_too_large', message: `A notification body is at most ${cap} bytes.` }), contentType: 'json' }, true);
    if (Number(req.getHeader('content-length') || 0) > cap) {
      log.warn('websub: notification refused', { source: sourceId, error: 'body_too_large' });
      return tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > cap) {
        log.warn('websub: notification refused', { source: sourceId, error: 'body_too_large' });
        return tooLarge();
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) reply(websub.notify(sourceId, headers, Buffer.concat(chunks)));
    });
  };
}

const TOO_MANY_CONNECTIONS = apiError(503, 'too_many_connections', 'This server is near its limit of open connections; retry in a few seconds (another replica may have room).');
const UPGRADE_REQUIRED = apiError(426, 'upgrade_required', 'GET /stream is a WebSocket endpoint: connect with ws://…/stream?wire=<id> (see /llms-full.txt).');

export interface BuiltApp {
  /** The app that listens: the one that serves, or with TLS the acceptor (see below). */
  app: TemplatedApp;
  stream: StreamEndpoint;
  /** Every app made, for the stop. */
  apps: TemplatedApp[];
  /**
   * With TLS: new connections are served with a certificate from these files from now on,
   * open ones stay where they are (a reload: see tls.ts). Throws when the files do not load.
   */
  serveCertificate(tls: TlsFiles): void;
}

/** What this build has and its typings lack: an app that hands each accepted socket to a child app. */
interface Acceptor extends TemplatedApp {
  getDescriptor(): unknown;
  addChildAppDescriptor(descriptor: unknown): void;
  removeChildAppDescriptor(descriptor: unknown): void;
}

export function createApp(deps: ServerDeps): BuiltApp {
  const offers = streamOffers(deps.config, deps.payments !== null);
  const handlers = buildHandlers(deps, offers);
  // Requests that are no WebSocket upgrade reach the dispatcher.
  handlers.set(STREAM_PATH, (res, _req, method) => sendError(res, method, UPGRADE_REQUIRED, false, [['Upgrade', 'websocket']]));
  handlers.set('/metrics', () => {}); // a slot for its own requests; the handler follows
  const stats = new RequestStats([...handlers.keys(), ...(deps.websub ? [WEBSUB_SLOT] : []), OTHER_ROUTE]);
  const stream = createStream({ ...deps, offers }, stats);
  handlers.set('/metrics', metricsHandler(deps.metrics(stats, stream), deps.config.metricsToken));
  const mcpPost = mcpHandler(deps);
  const websub = deps.websub ? websubHandler(deps) : null;
  const dispatch = (res: HttpResponse, req: HttpRequest) => {
    let method: Method = 'get';
    const start = performance.now();
    try {
      // uWS gives the method in lower case and the path without the query.
      const m = req.getMethod();
      const path = req.getUrl();
      const handler = handlers.get(path);
      enterTiming(stats, handler ? stats.slot(path) : stats.slot(OTHER_ROUTE), start);
      if (m === 'head') method = 'head';
      if (path === '/mcp' && m === 'post') return mcpPost(res, req);
      if (websub && path.startsWith(WEBSUB_PREFIX) && (m === 'post' || !announcesBody(req))) {
        enterTiming(stats, stats.slot(WEBSUB_SLOT), start);
        return websub(res, req, m, path);
      }
      // Only POST /mcp reads a body: any other one is refused unread, and the connection
      // closed, instead of being read to its end (which could be gigabytes).
      if (announcesBody(req)) {
        const bodiless = m === 'get' || m === 'head' || m === 'options';
        return sendError(res, method, bodiless ? BODY_NOT_ALLOWED : METHOD_NOT_ALLOWED, true);
      }
      if (m === 'options') {
        observe(204);
        res.writeStatus(STATUS_TEXT[204]!);
        res.writeHeader('Access-Control-Allow-Origin', '*');
        res.writeHeader('Access-Control-Allow-Methods', ALLOW);
        res.writeHeader('Access-Control-Allow-Headers', 'PAYMENT-SIGNATURE, X-PAYMENT, PAYMENT, Content-Type, Mcp-Protocol-Version');
        res.writeHeader('Access-Control-Max-Age', '600');
        res.endWithoutBody();
        return;
      }
      if (!handler) return sendError(res, method, NOT_FOUND);
      if (path === '/mcp' && m !== 'get' && m !== 'head') return sendError(res, method, MCP_METHODS);
      // Streamable HTTP clients GET /mcp for a server-sent event stream; this server opens none.
      if (path === '/mcp' && (req.getHeader('accept') || '').includes('text/event-stream')) return sendError(res, method, MCP_METHODS);
      if (m !== 'get' && m !== 'head') return sendError(res, method, METHOD_NOT_ALLOWED);
      handler(res, req, method);
    } catch (err) {
      // A fault in our own code: answer JSON and keep serving, never crash the process.
      log.error('request failed', { url: safeUrl(req), error: String((err as Error)?.stack ?? err) });
      try {
        sendError(res, method, INTERNAL);
      } catch {
        /* the response was already (partly) written */
      }
    }
  };
  const guard = deps.connections;
  const apps: TemplatedApp[] = [];
  const make = (tls: TlsFiles | null) => {
    const app = (tls ? deps.uws.uws.SSLApp(appOptions(tls)) : deps.uws.uws.App()) as Acceptor;
    apps.push(app);
    if (guard) {
      // Every connection's open and close (see connection-guard.ts): one refused is answered
      // before its request is read, and closed, which frees its descriptor at once.
      app.filter((res, count) => {
        if (Number(count) < 0) return guard.closed();
        if (!guard.opened()) res.cork(() => sendError(res, 'get', TOO_MANY_CONNECTIONS, true, UNAVAILABLE_RETRY));
      });
    }
    stream.route(app);
    app.any('/*', dispatch);
    return app;
  };
  const { tls } = deps.config;
  if (!tls) {
    const app = make(null);
    return { app, stream, apps, serveCertificate: () => {} };
  }
  // An SSLApp keeps the certificate it was made with. So with TLS the listening app only
  // accepts: uWS hands each new socket, before its handshake, to the serving child app, and
  // a reload puts a child with the new certificate in the old one's place. The listening
  // socket stays open throughout, so no connection can be refused or reset by a reload.
  const acceptor = deps.uws.uws.SSLApp(appOptions(tls)) as Acceptor;
  apps.push(acceptor);
  let serving = make(tls);
  acceptor.addChildAppDescriptor(serving.getDescriptor());
  const serveCertificate = (files: TlsFiles) => {
    const next = make(files);
    acceptor.addChildAppDescriptor(next.getDescriptor());
    acceptor.removeChildAppDescriptor(serving.getDescriptor());
    serving = next;
  };
  return { app: acceptor, stream, apps, serveCertificate };
}

function safeUrl(req: HttpRequest): string {
  try {
    return req.getUrl();
  } catch {
    return '?';
  }
}

/** The build has listen(host, port, options, cb) and the option; its typings have neither. */
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => TemplatedApp;
const listenWithOptions = (app: TemplatedApp) => (app.listen as unknown as ListenWithOptions).bind(app);
const EXCLUSIVE_PORT = 1; // LIBUS_LISTEN_EXCLUSIVE_PORT
const SHARED = 0; // LIBUS_LISTEN_DEFAULT: SO_REUSEPORT

export class ListenError extends Error {
  override name = 'ListenError';
}

export function listen({ app, stream, apps }: BuiltApp, deps: ServerDeps): Promise<RunningServer> {
  const { uws } = deps.uws;
  return new Promise((resolve, reject) => {
    // Exclusively: by default this build listens with port reuse, and a second instance on
    // the same port would start without error and take half of the connections. Replicas
    // that share a box's port ask for exactly that (SHARED_PORT).
    const options = deps.config.redis?.sharedPort ? SHARED : EXCLUSIVE_PORT;
    listenWithOptions(app)(deps.config.host, deps.config.port, options, (socket: us_listen_socket | false) => {
      if (!socket) return reject(new ListenError(`cannot listen on ${deps.config.host}:${deps.config.port}: the port is in use by another process, or the address is not this machine's`));
      resolve({
        port: uws.us_socket_local_port(socket as never),
        // App.close() also drops open keep-alive connections, so a graceful stop does not
        // wait on idle clients.
        close: () => {
          stream.close();
          uws.us_listen_socket_close(socket);
          for (const a of apps) a.close();
        },
      });
    });
  });
}
