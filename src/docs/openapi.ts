/**
 * `/openapi.json`: the OpenAPI 3.0.3 description, generated from the catalogue and the same
 * TypeBox parameter schemas the server validates with, so the document cannot disagree with
 * the routes.
 */
import { REDIRECTS, ROUTES, WIRES, type Route } from '../catalog/index.js';
import { routeParamDocs } from '../catalog/params.js';
import { NETWORK, USDC_BASE } from '../pay/offer.js';
import { ARTICLE_SCHEMA, dataSchema, envelopeSchema } from './envelope-schema.js';
import { LOOKUP_PARAM_DOCS } from '../catalog/lookup-params.js';
import { toOpenApiSchema } from './param-schema.js';
import { BLOCK_MINUTES, ClientMessage, CLOSE, IDLE_TIMEOUT_SEC, MAX_BUFFERED_BYTES, MAX_MESSAGE_BYTES, MAX_SUBSCRIPTIONS, SERVER_MESSAGES, STREAM_TIMING, streamWires } from '../stream/protocol.js';

type Json = Record<string, unknown>;

/** `/edgar/filings` → `edgarFilings`, `/news/preview` → `newsPreview`. */
function operationId(path: string): string {
  return path
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((part, i) => (i === 0 ? part : part[0]!.toUpperCase() + part.slice(1)))
    .join('');
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: Json) => ({ 'application/json': { schema } });

function wireOperation(route: Route): Json {
  const parameters: Json[] = routeParamDocs(route).map((p) => ({
    name: p.name,
    in: 'query',
    required: p.required,
    description: p.description,
    schema: p.schema,
  }));
  const responses: Json = {
    200: { description: 'The result envelope.', content: jsonContent(ref(dataSchema(route.wire.id) ? `${schemaName(route.wire.id)}Envelope` : 'Envelope')) },
    400: { description: 'A parameter is invalid, unknown, repeated or empty, or a payment header cannot be read.', content: jsonContent(ref('Error')) },
  };
  const op: Json = {
    operationId: operationId(route.path),
    summary: route.def.summary,
    tags: [route.wire.id],
    parameters,
    responses,
  };
  if (route.kind === 'preview') {
    op.description = `${route.wire.description} Free: at most the top ${route.def.maxLimit} results.${route.withSummary ? '' : ' Summaries are omitted.'}`;
    return op;
  }
  op.description = `${route.wire.description} Costs ${route.def.price} USD per call, paid with x402 v2 (USDC on Base). Free preview: ${route.previewPath}.`;
  parameters.push({
    name: 'PAYMENT-SIGNATURE',
    in: 'header',
    required: false,
    description: 'Base64 of an x402 v2 PaymentPayload for the offer of the 402 answer. X-PAYMENT (v1) and PAYMENT are accepted as aliases.',
    schema: { type: 'string' },
  });
  responses[402] = {
    description: 'Payment required: the offer is in the PAYMENT-REQUIRED header; nothing is owed.',
    headers: {
      'PAYMENT-REQUIRED': {
        description: 'Base64 of the x402 v2 PaymentRequired object (see the PaymentRequired schema).',
        schema: { type: 'string' },
      },
      'PAYMENT-RESPONSE': {
        description: 'When a payment was presented and refused: base64 of an x402 v2 SettlementResponse with success false and the errorReason.',
        schema: { type: 'string' },
      },
    },
    content: jsonContent(ref('PaymentError')),
  };
  responses[503] = { description: 'Payments are not configured on this server; the preview still works.', content: jsonContent(ref('Error')) };
  op['x-x402'] = { price: route.def.price, currency: 'USD', amount: route.amount, network: NETWORK, asset: USDC_BASE, scheme: 'exact' };
  return op;
}

function freeOperation(id: string, summary: string, schema: Json, type = 'application/json'): Json {
  return { get: { operationId: id, summary, tags: ['service'], responses: { 200: { description: summary, content: { [type]: { schema } } } } } };
}

/** `edgar` → `Edgar`: the prefix of a wire's own schemas. */
const schemaName = (wire: string) => wire[0]!.toUpperCase() + wire.slice(1);

/** Per wire with fields: its `data`, its article (the common one with that `data`) and its envelope. */
function wireSchemas(): Json {
  const out: Json = {};
  for (const w of WIRES) {
    const data = dataSchema(w.id);
    if (!data) continue;
    const name = schemaName(w.id);
    out[`${name}Data`] = data;
    out[`${name}Article`] = { allOf: [ref('Article'), { type: 'object', properties: { data: ref(`${name}Data`) } }] };
    out[`${name}Envelope`] = envelopeSchema(ref(`${name}Article`));
  }
  return out;
}

const COMPONENTS: Json = {
  schemas: {
    Article: ARTICLE_SCHEMA,
    Envelope: envelopeSchema(ref('Article')),
    ...wireSchemas(),
    Error: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            param: { type: 'string', description: 'The offending parameter.' },
            allowed: { type: 'array', items: { type: 'string' }, description: 'Its allowed values.' },
          },
        },
      },
    },
    PaymentError: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'price', 'currency', 'asset', 'network', 'payTo', 'preview'],
          properties: {
            code: { type: 'string', enum: ['payment_required', 'payment_not_accepted', 'invalid_x402_version', 'invalid_scheme', 'invalid_network'] },
            message: { type: 'string' },
            price: { type: 'string', description: 'USD per call, e.g. "0.005".' },
            currency: { type: 'string', enum: ['USD'] },
            asset: { type: 'string', enum: ['USDC'] },
            network: { type: 'string', enum: [NETWORK] },
            payTo: { type: 'string' },
            preview: { type: 'string', description: 'The free route returning the top 3.' },
            prices: { type: 'string', description: 'The price list to compare offers with.' },
          },
        },
      },
    },
    PaymentRequirements: {
      type: 'object',
      required: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'],
      properties: {
        scheme: { type: 'string', enum: ['exact'] },
        network: { type: 'string', enum: [NETWORK] },
        amount: { type: 'string', description: 'USDC atomic units (6 decimals): "5000" is 0.005 USD.' },
        asset: { type: 'string', enum: [USDC_BASE] },
        payTo: { type: 'string' },
        maxTimeoutSeconds: { type: 'integer' },
        extra: { type: 'object', properties: { name: { type: 'string' }, version: { type: 'string' } } },
      },
    },
    StreamClientMessage: toOpenApiSchema(ClientMessage),
    PaymentRequired: {
      type: 'object',
      description: 'Decoded PAYMENT-REQUIRED header (x402 v2).',
      required: ['x402Version', 'resource', 'accepts'],
      properties: {
        x402Version: { type: 'integer', enum: [2] },
        error: { type: 'string' },
        resource: {
          type: 'object',
          required: ['url'],
          properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } },
        },
        accepts: { type: 'array', items: ref('PaymentRequirements') },
      },
    },
  },
};

/** GET /stream: the WebSocket upgrade, its answers, and the protocol spoken after it. */
function streamOperation(): Json {
  const wires = [...streamWires().keys()];
  const FILTER_NAMES = [...new Set([...streamWires().values()].map((s) => s.wire.filter.name))];
  return {
    get: {
      operationId: 'stream',
      summary: 'Push: new items of a wire over WebSocket, paid in blocks of minutes',
      tags: ['stream'],
      description:
        `A WebSocket endpoint. Each new or updated item that matches one of the connection's subscriptions is pushed once, as the envelope's article JSON. ` +
        `A block of ${BLOCK_MINUTES} minutes costs ${BLOCK_MINUTES} calls of the wire's paid route (see streams in /.well-known/x402), paid with x402 in the upgrade's PAYMENT-SIGNATURE (or X-PAYMENT) header, ` +
        `or, with pay=message, in the first message. The server announces the end ${STREAM_TIMING.renewNoticeMs / 1000} s ahead with the next offer; a client renews in-band. ` +
        'Messages are in x-websocket.',
      parameters: [
        { name: 'wire', in: 'query', required: true, description: 'The wire to stream.', schema: { type: 'string', enum: wires } },
        { name: 'pay', in: 'query', required: false, description: 'message: the upgrade carries no payment; the first message pays (for browsers).', schema: { type: 'string', enum: ['message'] } },
        {
          name: 'subscription',
          in: 'query',
          required: false,
          style: 'form',
          explode: true,
          description:
            "One subscription taken as soon as the block is paid, in the wire's filter parameter and q as on its paid route (e.g. wire=cve&src=cisa&q=linux); validated before the payment is read: a bad one answers 400.",
          schema: { type: 'object', properties: Object.fromEntries([...FILTER_NAMES, 'q'].map((n) => [n, { type: 'string' }])), additionalProperties: false },
        },
        { name: 'PAYMENT-SIGNATURE', in: 'header', required: false, description: 'Base64 of an x402 PaymentPayload for the block offer. X-PAYMENT (v1) is an alias.', schema: { type: 'string' } },
      ],
      responses: {
        101: { description: 'Switching to WebSocket; the first message is `paid` or `payment_required`.' },
        400: { description: 'Unknown wire or parameter, or an unreadable payment.', content: jsonContent(ref('Error')) },
        402: { description: 'Payment required (or refused): the block offer is in the PAYMENT-REQUIRED header.', content: jsonContent(ref('PaymentError')) },
        426: { description: 'A plain GET: connect with a WebSocket client.', content: jsonContent(ref('Error')) },
        503: { description: 'Payments are not configured, or the server holds its maximum of streams (Retry-After).', content: jsonContent(ref('Error')) },
      },
      'x-websocket': {
        clientMessages: ref('StreamClientMessage'),
        serverMessages: SERVER_MESSAGES,
        closeCodes: Object.fromEntries(Object.values(CLOSE).map(([code, reason]) => [code, reason])),
        blockMinutes: BLOCK_MINUTES,
        limits: { subscriptionsPerConnection: MAX_SUBSCRIPTIONS, messageBytes: MAX_MESSAGE_BYTES, unreadBytes: MAX_BUFFERED_BYTES, idleTimeoutSec: IDLE_TIMEOUT_SEC },
      },
    },
  };
}

export function buildOpenApi(opts: { publicUrl: string }): object {
  const paths: Json = {};
  for (const route of ROUTES) paths[route.path] = { get: wireOperation(route) };
  for (const [from, to] of REDIRECTS) {
    paths[from] = {
      get: {
        operationId: operationId(from),
        summary: `Redirects to ${to} (a spelling used in examples)`,
        deprecated: true,
        tags: ['service'],
        responses: { 308: { description: `Permanent redirect to ${to}, query kept.`, headers: { Location: { schema: { type: 'string' } } } } },
      },
    };
  }
  const object = { type: 'object', additionalProperties: true };
  paths['/health'] = freeOperation('health', 'Liveness and freshness of the pipeline', {
    type: 'object',
    required: ['status', 'last_poll', 'observed_interval_sec', 'tiers'],
    properties: {
      status: { type: 'string', enum: ['ok', 'degraded', 'down'] },
      last_poll: { type: 'string', format: 'date-time', nullable: true },
      observed_interval_sec: { type: 'number', nullable: true },
      tiers: { type: 'object', properties: { breaking: { type: 'integer' }, timely: { type: 'integer' }, sparse: { type: 'integer' } } },
    },
    additionalProperties: true,
  });
  paths['/sources'] = freeOperation('sources', 'Every source of every wire, with its poll state', { type: 'array', items: object });
  paths['/tickers'] = tickersOperation();
  paths['/mcp'] = freeOperation('mcpCatalog', 'MCP catalogue: wires, filters, prices and preview routes (no items)', object);
  paths['/llms-full.txt'] = freeOperation('llmsFull', 'The full route list as text', { type: 'string' }, 'text/plain');
  paths['/openapi.json'] = freeOperation('openapi', 'This document', object);
  paths['/stream'] = streamOperation();
  paths['/.well-known/x402'] = freeOperation('priceList', 'Price list: the exact x402 offer of every paid route', object);
  return {
    openapi: '3.0.3',
    info: {
      title: 'Wires',
      version: '3.0.0',
      description:
        'Real-time data wires: continuously polled public sources, searchable in memory. Paid routes cost 0.005 or 0.01 USD per call, settled with x402 v2 in USDC on Base (eip155:8453); every paid wire has a free top-3 preview. No API keys: the wallet is the account.',
    },
    servers: [{ url: opts.publicUrl }],
    paths,
    components: COMPONENTS,
  };
}

/** `/tickers`: free lookups in SEC's ticker map (src/tickers/lookup.ts). */
function tickersOperation(): Json {
  const company = {
    type: 'object',
    properties: {
      cik: { type: 'string' },
      name: { type: 'string' },
      ticker: { type: 'string', description: 'The first-listed ticker.' },
      tickers: { type: 'array', items: { type: 'string' } },
      exchange: { type: 'string', nullable: true },
    },
  };
  return {
    get: {
      operationId: 'tickers',
      summary: "A company's ticker, CIK and listings from SEC's ticker map: give exactly one of q, cik or ticker",
      tags: ['service'],
      parameters: LOOKUP_PARAM_DOCS.map((p) => ({ name: p.name, in: 'query', required: false, description: p.description, schema: p.schema })),
      responses: {
        200: {
          description: 'The companies found.',
          content: jsonContent({ type: 'object', properties: { query: { type: 'object' }, count: { type: 'integer' }, companies: { type: 'array', items: company } } }),
        },
        400: { description: 'Not exactly one of q, cik and ticker, or a malformed one.', content: jsonContent(ref('Error')) },
        503: { description: 'The map is not loaded yet on this server.', content: jsonContent(ref('Error')) },
      },
    },
  };
}
