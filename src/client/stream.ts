/**
 * The client side of the service's push stream (WebSocket `/stream?wire=<id>`, see
 * src/stream/protocol.ts): one connection, one subscription, paid in blocks of minutes.
 *
 * It connects with `?pay=message`, so the first block and every renewal are paid the same
 * way: a `payment_required`/`renew` message carries the offer, the client's payer (the
 * WiresClient's own checks and signature) signs it, and a `pay` message sends it. The spend
 * is counted when the service answers `paid`, as a paid call counts it on its 200.
 *
 * Items are buffered as they arrive, whether or not anyone is iterating, so a poller (the MCP
 * tool) can `take()` them later; the buffer keeps the newest `maxBuffered`.
 */
import WebSocket from 'ws';
import { CLOSE_NAMES } from '../stream/close-codes.js';
import { serviceError, WiresError, type Article, type PaymentRequired } from './client.js';

export interface StreamItem {
  /** The subscription's key, e.g. "news?category=markets&q=fed". */
  sub: string;
  /** True when an item already pushed changed. */
  update: boolean;
  item: Article;
}

export type StreamEvent =
  | { type: 'paid'; usd: number; paidUntil: string; settlement: unknown }
  /** A renewal the client's limits (or the service) refused: the stream ends at `paidUntil`. */
  | { type: 'renew_refused'; error: WiresError; paidUntil: string | null };

export interface StreamOptions {
  /** Told of each block paid and of a refused renewal (e.g. to log them). */
  onEvent?: (event: StreamEvent) => void;
  /** Items kept while nobody reads them; older ones are dropped (counted in `dropped`). Default 10000. */
  maxBuffered?: number;
}

/**
 * What the stream needs from its WiresClient: sign a block's offer (its price is then reserved
 * against the spend limit), and settle that reservation: paid, or refused.
 */
export interface Payer {
  pay(required: PaymentRequired): Promise<{ header: string; usd: number }>;
  paid(usd: number): void;
  refused(usd: number): void;
}

type ServerMessage =
  | { type: 'payment_required' | 'renew'; payment_required: PaymentRequired; paid_until?: string }
  | { type: 'paid'; paid_until: string; settlement: unknown }
  | { type: 'subscribed' | 'unsubscribed'; sub: string }
  | { type: 'item'; sub: string; update: boolean; item: Article }
  | { type: 'error'; error: { code?: string; message?: string; [k: string]: unknown }; payment_required?: PaymentRequired };

export class WireStream implements AsyncIterable<StreamItem> {
  /** The subscription's key once subscribed. */
  sub: string | null = null;
  /** End of the paid time (ISO), once paid. */
  paidUntil: string | null = null;
  /** Items dropped because the buffer was full. */
  dropped = 0;
  /** Why the stream ended (null while open, or after a close asked by this side). */
  error: WiresError | null = null;
  /** Resolves with the subscription key once paid and subscribed; rejects if the stream ends first. */
  readonly ready: Promise<string>;

  private readonly ws: WebSocket;
  private readonly buffer: StreamItem[] = [];
  private ended = false;
  private wake: (() => void) | null = null;
  /** USD of the payment sent and not yet answered. */
  private pending = 0;
  /** The last renewal refused: the reason the stream will end when its paid time does. */
  private refusal: WiresError | null = null;
  private settle!: { resolve: (sub: string) => void; reject: (err: WiresError) => void };

  constructor(
    url: string,
    private readonly params: Record<string, string>,
    private readonly opts: StreamOptions,
    private readonly payer: Payer,
  ) {
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.ready.catch(() => {}); // the same error reaches the iterator; nobody has to await this
    this.ws = new WebSocket(url);
    this.ws.on('message', (data) => this.onMessage(String(data)));
    // A refused upgrade (400 unknown wire, 503…) is an HTTP answer with the service's error body.
    this.ws.on('unexpected-response', (req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', async () => {
        this.finish(await serviceError(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500 })));
        req.destroy();
      });
    });
    this.ws.on('error', (err) => this.finish(new WiresError('stream_failed', `stream connection failed: ${err.message}`)));
    this.ws.on('close', (code, reason) => this.onClose(code, reason.toString()));
  }

  /** The items received since the last take (for pollers; an iterator reads the same buffer). */
  take(): StreamItem[] {
    return this.buffer.splice(0);
  }

  /** True once the connection is closed (by either side). */
  get closed(): boolean {
    return this.ended;
  }

  /** Closes the connection; the iteration ends without error once buffered items are read. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.ws.close(1000);
    this.settle.reject(new WiresError('stream_closed', 'the stream was closed'));
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StreamItem> {
    try {
      for (;;) {
        const next = this.buffer.shift();
        if (next) yield next;
        else if (this.ended) {
          if (this.error) throw this.error;
          return;
        } else await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      // Reached by `break`/`return` in the caller's `for await` too: the socket goes with it.
      this.close();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private send(message: object): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Signs the offer and sends it; a refusal before the first block ends the stream. */
  private async pay(required: PaymentRequired, renewal: boolean): Promise<void> {
    try {
      const { header, usd } = await this.payer.pay(required);
      this.pending = usd;
      this.send({ type: 'pay', payment: header });
    } catch (err) {
      this.refused(err instanceof WiresError ? err : new WiresError('payment_failed', String((err as Error)?.message ?? err)), renewal);
    }
  }

  private refused(error: WiresError, renewal: boolean): void {
    if (this.pending) this.payer.refused(this.pending);
    this.pending = 0;
    if (!renewal) return this.finish(error);
    // The paid time still runs: keep streaming until the service closes at its end.
    this.refusal = error;
    this.opts.onEvent?.({ type: 'renew_refused', error, paidUntil: this.paidUntil });
  }

  private onMessage(text: string): void {
    let m: ServerMessage;
    try {
      m = JSON.parse(text) as ServerMessage;
    } catch {
      return; // not the protocol; nothing to act on
    }
    switch (m.type) {
      case 'payment_required':
        return void this.pay(m.payment_required, false);
      case 'renew':
        return void this.pay(m.payment_required, true);
      case 'paid': {
        const first = this.paidUntil === null;
        const usd = this.pending;
        this.pending = 0;
        this.refusal = null;
        this.paidUntil = m.paid_until;
        this.payer.paid(usd);
        this.opts.onEvent?.({ type: 'paid', usd, paidUntil: m.paid_until, settlement: m.settlement });
        if (first) this.send({ type: 'subscribe', params: this.params });
        return;
      }
      case 'subscribed':
        this.sub = m.sub;
        return this.settle.resolve(m.sub);
      case 'item': {
        const max = this.opts.maxBuffered ?? 10_000;
        if (this.buffer.length >= max) {
          this.buffer.shift();
          this.dropped++;
        }
        this.buffer.push({ sub: m.sub, update: m.update, item: m.item });
        return this.notify();
      }
      case 'error': {
        const e = m.error ?? {};
        const error = new WiresError(e.code ?? 'stream_error', e.message ?? 'the stream refused a message', e);
        // Before the subscription, any refusal (payment, parameters) means no stream.
        if (this.sub === null) return this.refused(error, false);
        if (m.payment_required || this.pending) this.refused(error, true);
        return;
      }
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.ended) return;
    const name = CLOSE_NAMES.get(code) ?? 'stream_closed';
    // Expired after a refused renewal: the refusal is the reason worth telling.
    const error =
      code === 4402 && this.refusal
        ? new WiresError(this.refusal.code, `the stream ended when its paid time ran out: the renewal was refused: ${this.refusal.message}`, { closeCode: code, reason })
        : new WiresError(name, `the stream was closed by the service (${code}${reason ? `: ${reason}` : ''})`, { closeCode: code, reason });
    this.finish(error);
  }

  /** Ends the stream with `error`: the iterator throws it after the buffered items. */
  private finish(error: WiresError): void {
    if (this.ended) return;
    this.ended = true;
    // A payment sent and never answered (the connection ended first) may have been taken.
    if (this.pending) this.payer.paid(this.pending);
    this.pending = 0;
    this.error = error;
    this.settle.reject(error);
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    this.notify();
  }
}

export function openStream(url: string, params: Record<string, string>, opts: StreamOptions, payer: Payer): WireStream {
  return new WireStream(url, params, opts, payer);
}
