/**
 * `POST /mcp`: MCP over Streamable HTTP, answered with plain JSON (no server-initiated
 * streams). Deliberately stateless: no `Mcp-Session-Id` is issued, every request stands
 * alone, so any instance can answer any call. Batches (removed from MCP in 2025-06-18) are
 * refused with a JSON-RPC error.
 *
 * Tools are the catalogue's routes (tools.ts). Paid tools follow x402's MCP transport: without
 * `_meta["x402/payment"]` the result is `isError` with the PaymentRequired in
 * `structuredContent` and `content[0].text`; with it, the same verification, journal and
 * settlement as HTTP, and `_meta["x402/payment-response"]` in the result.
 */
import { errorBody } from '../http/errors.js';
import { splitQuery } from '../http/params.js';
import { requestKey, type RouteRuntime } from '../http/route-runtime.js';
import { NETWORK, type Offer } from '../pay/offer.js';
import { presentPayment } from '../pay/intake.js';
import { V1_NETWORK } from '../pay/payment-header.js';
import type { Payments } from '../pay/payments.js';
import { answerMcp, ERR, rpcError, type RpcOutcome } from './jsonrpc.js';
import { ROUTE_BY_TOOL, TICKERS_TOOL, TOOLS } from './tools.js';
import { LOOKUP_PARAMS } from '../catalog/lookup-params.js';
import { answerLookup } from '../tickers/lookup.js';
import type { CompanyMap } from '../tickers/company-map.js';

export const MAX_MCP_BODY = 256 * 1024;

export interface McpDeps {
  runtimes: ReadonlyMap<string, RouteRuntime>;
  payments: Payments | null;
  version: string;
  /** The caller's address, for the failed-payment budget. */
  client?: string;
  /** SEC's ticker map in hand, for the lookup tool. */
  companies?: () => CompanyMap | null;
}

export interface McpReply {
  status: number;
  /** null: a notification, answered 202 with no body. */
  body: string | null;
}

const STATUS = { message: 200, invalid: 400, none: 202 } as const;
const INSTRUCTIONS = 'Real-time data wires. *_preview tools are free (top 3); the others cost 0.005 or 0.01 USD per call via x402 (USDC on Base).';
const text = (t: string) => [{ type: 'text', text: t }];
const ok = (result: unknown): RpcOutcome => ({ result });
const toolError = (message: string, extra: object = {}) => ok({ isError: true, content: text(message), ...extra });

export async function handleMcp(raw: string, deps: McpDeps): Promise<McpReply> {
  const { kind, body } = await answerMcp(raw, {
    info: { name: 'wires', version: deps.version },
    instructions: INSTRUCTIONS,
    tools: TOOLS,
    callTool: (params) => callTool(params, deps),
  });
  return { status: STATUS[kind], body };
}

/** A tool's arguments as the query string its HTTP route would get, or why they cannot be one. */
function queryOf(args: unknown): { ok: true; query: string } | { ok: false; outcome: RpcOutcome } {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { ok: false, outcome: toolError('arguments must be an object') };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return { ok: false, outcome: toolError(`argument ${k} must be a string, a number or a boolean`) };
    query.append(k, String(v));
  }
  return { ok: true, query: query.toString() };
}

async function callTool(params: Record<string, unknown>, deps: McpDeps): Promise<RpcOutcome> {
  const startedAt = performance.now();
  // The same parsers as HTTP, so a tool call is refused exactly where the route would be.
  const args = queryOf(params.arguments ?? {});
  if (params.name === TICKERS_TOOL.name) return args.ok ? lookupTool(args.query, deps) : args.outcome;
  const route = typeof params.name === 'string' ? ROUTE_BY_TOOL.get(params.name) : undefined;
  if (!route) return rpcError(ERR.invalidParams, `Unknown tool: ${String(params.name)}. tools/list names them.`);
  const rt = deps.runtimes.get(route.path)!;
  if (!args.ok) return args.outcome;
  const parsed = rt.parse(args.query);
  if (!parsed.ok) return toolError(errorBody(parsed.error));
  const p = parsed.params;
  if (route.kind === 'preview') return ok({ content: text(rt.run(p, startedAt)) });

  if (!rt.offer || !deps.payments) return toolError(`Payments are not configured on this server; the free tool ${route.previewPath.slice(1).replace(/\//g, '_')} still works.`);
  const offer = rt.offer;
  // x402's MCP transport puts the payload object in `x402/payment`; x402-mcp (v1) puts it
  // base64-encoded in `x402.payment`. Either may carry v1 or v2.
  const meta = (params._meta ?? {}) as Record<string, unknown>;
  const payment = meta['x402/payment'] ?? meta['x402.payment'];
  if (payment === undefined) return ok(paymentRequired(offer, 'Payment required: pay with x402 in _meta["x402/payment"]'));
  const intake = presentPayment(deps.payments, {
    client: deps.client ?? '',
    payment,
    where: 'x402/payment',
    requirements: offer.requirements,
    requestKey: requestKey(route.path, p),
    produce: () => Buffer.from(rt.run(p, startedAt)),
  });
  if (intake.kind === 'throttled') {
    return toolError(`too_many_failed_payments: Too many failed payments from this address; retry in ${intake.retryAfterSec} s. Nothing was charged.`);
  }
  if (intake.kind === 'malformed') return ok(paymentRequired(offer, `invalid_payment: ${intake.message}`));
  if (intake.kind === 'rejected') return ok(paymentRequired(offer, `${intake.reason}: ${intake.message}`, intake.reason));
  const outcome = await intake.outcome;
  if (outcome.kind === 'paid') return ok({ content: text(outcome.body.toString('utf8')), _meta: settlementMeta(outcome.settlement) });
  if (outcome.status === 402) return ok(paymentRequired(offer, `${outcome.code}: ${outcome.message}`, outcome.code));
  return toolError(`${outcome.code}: ${outcome.message}`);
}

/**
 * x402's MCP signalling: the v2 PaymentRequired in structuredContent and as the first text;
 * the second text is the v1 form (`accepts` with `maxAmountRequired`, network `base`),
 * which x402-mcp's agents read.
 */
function paymentRequired(offer: Offer, message: string, failure?: string): object {
  const required = { ...offer.paymentRequired, error: message };
  const v1 = { x402Version: 1, error: message, accepts: offer.v1Accepts };
  return {
    isError: true,
    structuredContent: required,
    content: [...text(JSON.stringify(required)), ...text(JSON.stringify(v1))],
    ...(failure ? { _meta: settlementMeta({ success: false, errorReason: failure, transaction: '', network: NETWORK }) } : {}),
  };
}

/** The ticker lookup, answered as /tickers answers. */
function lookupTool(query: string, deps: McpDeps): RpcOutcome {
  const split = splitQuery(query, LOOKUP_PARAMS);
  const answer = split.ok ? answerLookup(deps.companies?.() ?? null, split.values) : split;
  return answer.ok ? ok({ content: text(answer.body) }) : toolError(errorBody(answer.error));
}

/** The settlement response under both transports' keys (`x402.payment-response` with v1's network name). */
function settlementMeta(settlement: object): object {
  return { 'x402/payment-response': settlement, 'x402.payment-response': { ...settlement, network: V1_NETWORK } };
}
