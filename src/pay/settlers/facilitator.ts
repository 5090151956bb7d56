/**
 * Settlement through an x402 facilitator over HTTP (`FACILITATOR_URL`): `GET /supported` at
 * start, `POST /settle` per payment, with undici's connect, header and body timeouts and the
 * caller's abort signal.
 *
 * A request is retried only when it certainly never reached the facilitator (connection
 * refused or not established); after that, any doubt is reported as `unknown` and the
 * payment core asks again later, which cannot charge twice (the nonce is single-use on chain).
 */
import { Agent, request } from 'undici';
import type { ChainReader } from '../chain.js';
import { NETWORK } from '../offer.js';
import { normaliseReason, type PaymentToSettle, type SettleResult, type Settler } from '../settler.js';

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNRESET_BEFORE_SEND']);
const CONNECT_RETRIES = 2;

interface SettleResponse {
  success?: boolean;
  errorReason?: string;
  errorMessage?: string;
  transaction?: string;
}

export class FacilitatorSettler implements Settler {
  readonly kind = 'facilitator' as const;
  private readonly base: string;
  private readonly agent: Agent;

  constructor(
    url: string,
    timeoutMs: number,
    private readonly chain: ChainReader | null,
  ) {
    this.base = url.replace(/\/$/, '');
    this.agent = new Agent({ connect: { timeout: Math.min(timeoutMs, 5000) }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connections: 16 });
  }

  async check(): Promise<string | null> {
    try {
      const res = await request(`${this.base}/supported`, { dispatcher: this.agent, signal: AbortSignal.timeout(5000) });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return `facilitator ${this.base}/supported answered ${res.statusCode}`;
      }
      const body = (await res.body.json()) as { kinds?: { x402Version?: number; scheme?: string; network?: string }[] };
      const ok = body.kinds?.some((k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === NETWORK);
      return ok ? null : `facilitator ${this.base} does not support x402 v2 exact on ${NETWORK}`;
    } catch (err) {
      return `facilitator ${this.base} is unreachable: ${(err as Error).message}`;
    }
  }

  async settle(payment: PaymentToSettle, opts: { signal: AbortSignal; uncertain: boolean }): Promise<SettleResult> {
    const { payload, requirements } = payment;
    if (opts.uncertain && this.chain) {
      const auth = payload.payload.authorization;
      try {
        if (await this.chain.authorizationUsed(auth.from, auth.nonce)) return { kind: 'used' };
      } catch {
        /* the facilitator's own answer will do */
      }
    }
    const body = JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements });
    for (let attempt = 0; ; attempt++) {
      let status: number;
      let answer: SettleResponse | null;
      try {
        const res = await request(`${this.base}/settle`, {
          method: 'POST',
          dispatcher: this.agent,
          headers: { 'content-type': 'application/json' },
          body,
          signal: opts.signal,
        });
        status = res.statusCode;
        answer = (await res.body.json().catch(() => null)) as SettleResponse | null;
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (NOT_SENT.has(code) && !opts.signal.aborted) {
          if (attempt < CONNECT_RETRIES) {
            await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
            continue;
          }
          return { kind: 'failed', reason: 'unexpected_settle_error', message: `facilitator unreachable (${code})` };
        }
        return { kind: 'unknown', message: `facilitator request failed: ${code || (err as Error).message}` };
      }
      return interpret(status, answer);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function interpret(status: number, answer: SettleResponse | null): SettleResult {
  if (status >= 500 || !answer) return { kind: 'unknown', message: `facilitator answered ${status}${answer ? '' : ' without a settlement response'}` };
  if (answer.success && answer.transaction) return { kind: 'settled', tx: answer.transaction };
  const reason = answer.errorReason ?? 'unexpected_settle_error';
  const message = shortMessage(answer.errorMessage ?? reason);
  if (reason === 'settlement_pending' || reason === 'unexpected_settle_error') return { kind: 'unknown', message, ...(answer.transaction ? { tx: answer.transaction } : {}) };
  if (/nonce_already_used/.test(reason)) return { kind: 'used' };
  return { kind: 'failed', reason: normaliseReason(reason), message };
}

/** Library error texts can run to kilobytes; clients get the first line, bounded. */
export function shortMessage(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > 160 ? line.slice(0, 157) + '...' : line;
}
