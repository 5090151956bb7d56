/**
 * A small client for the service, used by the `wires` CLI and the `wires-mcp` stdio server
 * and importable by a bot: typed wires and filters, free previews, and paid calls that sign
 * the x402 authorization themselves, within spending limits.
 *
 * Before signing, every offer is compared with the service's published price list
 * (`/.well-known/x402`) and with the limits; a mismatch or an over-limit call is refused
 * without signing. The private key never appears in an error or a log line.
 */
import { facetsOf } from '../catalog/facets.js';
import { randomBytes } from 'node:crypto';
import { ROUTES, WIRES, type Route } from '../catalog/index.js';
import { Wallet } from './sign.js';
import { openStream, type StreamOptions, type WireStream } from './stream.js';
import type { WireData, WireFacets, WireFilters, WireId } from './wires.gen.js';

export type { WireData, WireFacets, WireFilters, WireId } from './wires.gen.js';

export interface Article<D = Record<string, unknown>> {
  title: string;
  url: string;
  source: string;
  /** The value of the wire's filter this item belongs to. */
  category: string;
  published: string;
  age_minutes: number;
  relevance: number;
  summary?: string;
  /** The wire's structured fields its source states (WireData of the wire). */
  data?: D;
  [field: string]: unknown;
}

export interface Envelope<D = Record<string, unknown>> {
  query: string | null;
  since: string;
  count: number;
  took_ms: number;
  freshest: string | null;
  articles: Article<D>[];
}

export interface WireParams {
  q?: string;
  since?: string;
  limit?: number;
}

export interface CallResult<D = Record<string, unknown>> {
  envelope: Envelope<D>;
  /** USD paid for this call; 0 for a preview. */
  paidUsd: number;
  route: string;
  /** The x402 SettlementResponse of a paid call. */
  settlement?: { success: boolean; transaction: string; network: string; payer?: string; extra?: Record<string, unknown> };
}

export interface ClientOptions {
  /** The service, e.g. http://localhost:4021. */
  url: string;
  /** Pays paid calls when set (0x + 64 hex digits). */
  privateKey?: string;
  /** Refuses offers above this price per call (default 0.01). */
  maxPricePerCallUsd?: number;
  /** Refuses calls that would take this process's spend above this (default 1). */
  maxSpendUsd?: number;
  fetch?: typeof fetch;
}

/** A call the client refused before signing anything, or the service refused. */
export class WiresError extends Error {
  override name = 'WiresError';
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** The message, and the allowed values where the message does not already list them. */
  explain(separator = ' '): string {
    const allowed = (this.details.allowed as string[] | undefined)?.join(', ');
    return allowed && !this.message.includes(allowed) ? `${this.message}${separator}(allowed: ${allowed})` : this.message;
  }
}

/** x402 v2 PaymentRequired, as a 402's PAYMENT-REQUIRED header or a stream message carries it. */
export interface PaymentRequired {
  accepts?: Offer[];
  resource?: unknown;
}

interface Offer {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

const atomicToUsd = (amount: string) => Number(amount) / 1e6;

/** Minutes a stream payment buys, when the price list does not say (it is the service's block). */
const STREAM_BLOCK_MINUTES = 10;

export class WiresClient {
  readonly url: string;
  private readonly account: Wallet | null;
  private readonly maxPrice: number;
  private readonly maxSpend: number;
  private readonly http: typeof fetch;
  private spent = 0;
  /**
   * USD of payments signed and not yet accepted or refused. The spend limit counts them, so
   * concurrent payments (two calls, two streams) cannot together pass it.
   */
  private reserved = 0;
  private priceList: Promise<Map<string, Offer>> | null = null;
  /** Price-list path → minutes one payment buys, for the streams (a call buys one "unit"). */
  private readonly blockMinutes = new Map<string, number>();

  constructor(opts: ClientOptions) {
    this.url = opts.url.replace(/\/$/, '');
    this.http = opts.fetch ?? fetch;
    this.maxPrice = opts.maxPricePerCallUsd ?? 0.01;
    this.maxSpend = opts.maxSpendUsd ?? 1;
    if (opts.privateKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(opts.privateKey)) {
      throw new WiresError('invalid_key', 'the wallet private key must be 0x followed by 64 hex digits');
    }
    try {
      this.account = opts.privateKey ? new Wallet(opts.privateKey) : null;
    } catch {
      throw new WiresError('invalid_key', 'the wallet private key is not a valid secp256k1 key');
    }
  }

  /** The paying address, or null without a key. */
  get address(): string | null {
    return this.account?.address ?? null;
  }

  /** USD spent by this client so far. */
  get spentUsd(): number {
    return this.spent;
  }

  get canPay(): boolean {
    return this.account !== null;
  }

  /** Calls a wire: paid when a key is set (unless `preview`), else its free top-3 preview. */
  wire<W extends WireId>(wire: W, params: WireParams & WireFilters[W] & WireFacets[W] = {}, opts: { preview?: boolean } = {}): Promise<CallResult<WireData[W]>> {
    const def = WIRES.find((w) => w.id === wire);
    if (!def) throw new WiresError('unknown_wire', `unknown wire "${wire}"`, { allowed: WIRES.map((w) => w.id) });
    const all = params as Record<string, string | number>;
    const result = opts.preview || !this.account ? this.call(def.preview.path, previewParams(def.preview.path, all)) : this.call(def.paid[0]!.path, all);
    return result as Promise<CallResult<WireData[W]>>;
  }

  /**
   * Opens a push stream of `wire` (WebSocket `/stream?wire=…`) subscribed to `params` (its
   * filter and/or q) and yields items as the service stores them. It needs a wallet key: it
   * pays for a block of minutes at once and for the next block when the service asks, with
   * the same offer checks as a paid call. `maxSpendUsd` caps the total; `maxPricePerCallUsd`
   * is compared with the block's price per minute (a block of 10 minutes at 0.05 USD passes a
   * 0.005 limit), since a minute of stream replaces about one poll. When a renewal is refused
   * the stream runs to the end of its paid time, then the iteration throws that refusal.
   * Breaking out of `for await` (or `close()`) closes the connection.
   */
  stream<W extends WireId>(wire: W | readonly W[], params: { q?: string } & WireFilters[W] & WireFacets[W] = {} as WireFilters[W], opts: StreamOptions = {}): WireStream {
    // Several wires: one connection and one payment, their blocks' prices summed; the
    // subscription is taken on each, so it must be valid on each.
    const asked: readonly string[] = typeof wire === 'string' ? [wire] : wire;
    const defs = WIRES.filter((w) => asked.includes(w.id));
    const unknown = asked.find((id) => !defs.some((w) => w.id === id));
    if (unknown !== undefined || defs.length === 0 || defs.length !== asked.length) {
      throw new WiresError('unknown_wire', `unknown or repeated wire "${unknown ?? asked.join(',')}"`, { allowed: WIRES.map((w) => w.id) });
    }
    // Checked here before anything is signed, so a typo costs nothing.
    for (const def of defs) {
      const allowed = [def.filter.name, 'q', ...facetsOf(def.id).map((f) => f.param)];
      for (const [name, value] of Object.entries(params as Record<string, string>)) {
        if (!allowed.includes(name)) {
          throw new WiresError('unknown_parameter', `unknown parameter "${name}"; the ${def.id} stream takes: ${allowed.join(', ')}`, { status: 400, param: name, allowed });
        }
        if (name === def.filter.name && !def.filter.values.includes(value)) {
          throw new WiresError('invalid_parameter', `${name} must be one of: ${def.filter.values.join(', ')}`, { status: 400, param: name, allowed: def.filter.values });
        }
      }
    }
    const path = `/stream?wire=${defs.map((w) => w.id).join(',')}`;
    return openStream(`${this.url.replace(/^http/, 'ws')}${path}&pay=message`, params as Record<string, string>, opts, {
      // Every block goes through the same checks and signature as a paid call.
      pay: async (required) => {
        if (!this.account) throw new WiresError('payment_required', `streams are paid (${path}); set a wallet key (WALLET_PRIVATE_KEY) to open one`);
        return this.authorizeOffer(path, required);
      },
      paid: (usd) => this.settle(usd, true),
      refused: (usd) => this.settle(usd, false),
    });
  }

  /** Calls a route by path, paying if it is a paid one. */
  async call(path: string, params: Record<string, string | number | undefined> = {}): Promise<CallResult> {
    const route = ROUTES.find((r) => r.path === path);
    if (!route) throw new WiresError('unknown_route', `unknown route ${path}`);
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) qs.append(k, String(v));
    const target = `${this.url}${path}${qs.size ? '?' + qs : ''}`;
    const first = await this.http(target);
    if (first.status === 200) return { envelope: (await first.json()) as Envelope, paidUsd: 0, route: path };
    if (first.status !== 402) throw await serviceError(first);
    return this.pay(route, target, first);
  }

  private async pay(route: Route, target: string, first: Response): Promise<CallResult> {
    const { header, usd: priceUsd } = await this.authorize(route, first);
    let paid: Response;
    try {
      paid = await this.http(target, { headers: { 'PAYMENT-SIGNATURE': header } });
    } catch (err) {
      // Sent, and no answer: the service may have taken it, so it counts.
      this.settle(priceUsd, true);
      throw err;
    }
    this.settle(priceUsd, paid.status === 200);
    if (paid.status !== 200) throw await serviceError(paid);
    const settlement = JSON.parse(Buffer.from(paid.headers.get('payment-response') ?? '', 'base64').toString('utf8') || '{}');
    return { envelope: (await paid.json()) as Envelope, paidUsd: priceUsd, route: route.path, settlement };
  }

  /**
   * A PAYMENT-SIGNATURE value for one call of `url` (a paid route with its query), after the
   * same checks as a paid call. For tools that send the request themselves (curl).
   */
  async paymentHeader(url: string): Promise<string> {
    const route = ROUTES.find((r) => r.path === new URL(url).pathname);
    if (!route) throw new WiresError('unknown_route', `unknown route ${new URL(url).pathname}`);
    const first = await this.http(url);
    if (first.status !== 402) throw new WiresError('not_payable', `${url} answered ${first.status}, not 402`);
    const { header, usd } = await this.authorize(route, first);
    // Handed out signed: whoever sends it spends it.
    this.settle(usd, true);
    return header;
  }

  /** Reads the 402's offer, checks it, and signs an authorization for exactly its price. */
  private async authorize(route: Route, first: Response): Promise<{ header: string; usd: number }> {
    const body = (await first.json().catch(() => ({}))) as { error?: { message?: string } };
    if (!this.account) throw new WiresError('payment_required', `${route.path} costs ${route.def.price} USD per call; set a wallet key to pay, or use the preview ${route.previewPath}`);
    const required = JSON.parse(Buffer.from(first.headers.get('payment-required') ?? '', 'base64').toString('utf8') || '{}') as PaymentRequired;
    return this.authorizeOffer(route.path, required, body.error?.message);
  }

  /**
   * Every payment this client makes goes through here: the exact offer on Base of `required`
   * (a call's 402 or a stream's block), checked against the price list and the limits, then
   * signed. Returns the header value and the USD it pays, reserved against the spend limit
   * until the caller settles it (`settle`).
   */
  private async authorizeOffer(path: string, required: PaymentRequired, why = ''): Promise<{ header: string; usd: number }> {
    const offer = required.accepts?.find((a) => a.scheme === 'exact' && a.network === 'eip155:8453');
    if (!offer) throw new WiresError('no_offer', `no x402 exact offer on Base for ${path}: ${why}`.trim());
    const usd = await this.checkOffer(path, offer, true);
    try {
      const payload = this.sign(offer, required.resource);
      return { header: Buffer.from(JSON.stringify(payload)).toString('base64'), usd };
    } catch (err) {
      this.settle(usd, false);
      throw err;
    }
  }

  /** Ends a reservation: spent when the service took the payment, released when it refused. */
  private settle(usd: number, spent: boolean): void {
    this.reserved = Math.max(0, this.reserved - usd);
    if (spent) this.spent += usd;
  }

  /**
   * Refuses (before any signature) an offer that is not the published price or is over a limit;
   * returns its price in USD. With `reserve`, the price is reserved against the spend limit in
   * the same step as the check, so no concurrent payment can slip in between.
   */
  async checkOffer(path: string, offer: Offer, reserve = false): Promise<number> {
    const prices = await this.prices();
    const listed = prices.get(path) ?? combinedStreamOffer(prices, path, this.blockMinutes);
    if (!listed || JSON.stringify(listed) !== JSON.stringify(offer)) {
      throw new WiresError('price_mismatch', `the offer for ${path} differs from the service's published price list (/.well-known/x402); not signing`);
    }
    const price = atomicToUsd(offer.amount);
    // A stream's payment buys minutes: its per-minute price is what the per-call limit caps
    // (of each wire, on a stream of several: a minute of each replaces a poll of each).
    const minutes = this.blockMinutes.get(path);
    if (minutes !== undefined) {
      const perMinute = price / minutes / streamWiresOf(path).length;
      if (perMinute > this.maxPrice + 1e-12) {
        throw new WiresError(
          'over_price_limit',
          `${path} costs ${price} USD per ${minutes} minutes (${perMinute} USD a minute), above the limit of ${this.maxPrice} USD per call (compared per minute)`,
        );
      }
    } else if (price > this.maxPrice) throw new WiresError('over_price_limit', `${path} costs ${price} USD, above the limit of ${this.maxPrice} USD per call`);
    const committed = this.spent + this.reserved;
    if (committed + price > this.maxSpend + 1e-9) {
      const pending = this.reserved > 0 ? ` (${+this.reserved.toFixed(6)} USD of it in payments not yet answered)` : '';
      throw new WiresError('over_spend_limit', `paying ${price} USD would take this session's spend to ${(committed + price).toFixed(3)} USD${pending}, above the limit of ${this.maxSpend} USD`);
    }
    if (reserve) this.reserved += price;
    return price;
  }

  /** The published price list: path → the offer a client should see (streams: `/stream?wire=<id>`). */
  prices(): Promise<Map<string, Offer>> {
    this.priceList ??= this.http(`${this.url}/.well-known/x402`)
      .then((r) => r.json() as Promise<PriceList>)
      .then((list) => {
        const map = new Map(list.routes.map((r) => [r.path, r.accepts[0]!]));
        for (const s of list.streams ?? streamsFromRoutes(list.routes)) {
          map.set(s.path, s.accepts[0]!);
          this.blockMinutes.set(s.path, s.block_minutes);
        }
        return map;
      })
      .catch((err) => {
        this.priceList = null;
        throw new WiresError('no_price_list', `cannot read ${this.url}/.well-known/x402: ${(err as Error).message}`);
      });
    return this.priceList;
  }

  /** A company's ticker, CIK and listings from SEC's map (free): one of `q`, `cik` or `ticker`. */
  async tickers(params: Record<string, string | number>): Promise<unknown> {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    const res = await this.http(`${this.url}/tickers?${query}`);
    if (!res.ok) throw await serviceError(res);
    return res.json();
  }

  async health(): Promise<unknown> {
    return (await this.http(`${this.url}/health`)).json();
  }

  private sign(offer: Offer, resource: unknown): object {
    const validBefore = Math.floor(Date.now() / 1000) + offer.maxTimeoutSeconds;
    const authorization = {
      from: this.account!.address,
      to: offer.payTo,
      value: offer.amount,
      validAfter: '0',
      validBefore: String(validBefore),
      nonce: `0x${randomBytes(32).toString('hex')}`,
    };
    const domain = { name: offer.extra.name, version: offer.extra.version, chainId: Number(offer.network.split(':')[1]), verifyingContract: offer.asset };
    const signature = this.account!.signTransfer(domain, authorization);
    // A payment-identifier id never goes on chain: with it, resending this exact payment
    // after a lost response gets the answer again, charged once (without it, the service
    // treats a resend after settlement began as a replay).
    const id = `wires_${randomBytes(16).toString('hex')}`;
    return { x402Version: 2, resource, accepted: offer, payload: { signature, authorization }, extensions: { 'payment-identifier': { info: { required: false, id } } } };
  }
}

/**
 * A call's parameters as the free preview at `previewPath` takes them: `limit` capped at the
 * preview's maximum (3), `q` dropped where the preview takes none. A `limit` that is not a
 * whole number is left for the service to refuse.
 */
export function previewParams<P extends Record<string, string | number | undefined>>(previewPath: string, params: P): P {
  const route = ROUTES.find((r) => r.path === previewPath && r.kind === 'preview');
  if (!route) throw new WiresError('unknown_route', `unknown preview route ${previewPath}`);
  const out: Record<string, string | number | undefined> = { ...params };
  if (out.limit !== undefined && /^\d+$/.test(String(out.limit))) {
    const capped = Math.min(Number(out.limit), route.def.maxLimit);
    out.limit = typeof out.limit === 'number' ? capped : String(capped);
  }
  if (route.def.q === 'none') delete out.q;
  return out as P;
}

interface PriceList {
  routes: { path: string; wire: string; accepts: Offer[] }[];
  streams?: { path: string; block_minutes: number; accepts: Offer[] }[];
}

/**
 * For a service whose price list predates its `streams` entries: a wire's stream is priced as
 * its first searchable paid route, times the block's minutes (how the service prices it).
 */
function streamsFromRoutes(routes: PriceList['routes']): NonNullable<PriceList['streams']> {
  const out = new Map<string, NonNullable<PriceList['streams']>[number]>();
  for (const r of routes) {
    const route = ROUTES.find((x) => x.path === r.path);
    const path = `/stream?wire=${r.wire}`;
    if (!route || route.def.q === 'none' || out.has(path) || !r.accepts[0]) continue;
    const amount = (BigInt(r.accepts[0].amount) * BigInt(STREAM_BLOCK_MINUTES)).toString();
    out.set(path, { path, block_minutes: STREAM_BLOCK_MINUTES, accepts: [{ ...r.accepts[0], amount }] });
  }
  return [...out.values()];
}

/** A WiresError from a service's error answer (an HTTP call, or a refused stream upgrade). */
export async function serviceError(res: Response): Promise<WiresError> {
  const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; param?: string; allowed?: string[] } } | null;
  const e = body?.error;
  return new WiresError(e?.code ?? `http_${res.status}`, e?.message ?? `the service answered ${res.status}`, {
    status: res.status,
    ...(e?.param ? { param: e.param } : {}),
    ...(e?.allowed ? { allowed: e.allowed } : {}),
  });
}

/** `/stream?wire=news,edgar` → its wires; any other path → []. */
function streamWiresOf(path: string): string[] {
  const m = /^\/stream\?wire=([a-z0-9,-]+)$/.exec(path);
  return m ? m[1]!.split(',') : [];
}

/**
 * The offer a stream of several wires should carry: the price list's offer of its first wire
 * for the sum of their blocks (the service prices it so); undefined when a wire is not listed.
 * Its block length is noted with the others.
 */
function combinedStreamOffer(prices: ReadonlyMap<string, Offer>, path: string, blockMinutes: Map<string, number>): Offer | undefined {
  const wires = streamWiresOf(path);
  if (wires.length < 2) return undefined;
  const listed = wires.map((w) => prices.get(`/stream?wire=${w}`));
  if (listed.some((o) => o === undefined)) return undefined;
  const minutes = blockMinutes.get(`/stream?wire=${wires[0]}`);
  if (minutes !== undefined) blockMinutes.set(path, minutes);
  return { ...listed[0]!, amount: listed.reduce((sum, o) => sum + BigInt(o!.amount), 0n).toString() };
}
