/** `/llms-full.txt`: the whole route list as plain text, for agents reading the service cold. */
import { fieldsOf, REDIRECTS, ROUTES, WIRES, type FieldDef, type Route } from '../catalog/index.js';
import { routeParamDocs } from '../catalog/params.js';
import { BLOCK_MINUTES, CLOSE, IDLE_TIMEOUT_SEC, MAX_MESSAGE_BYTES, MAX_SUBSCRIPTIONS, SERVER_MESSAGES, streamWires } from '../stream/protocol.js';

function describeParams(route: Route): string[] {
  return routeParamDocs(route).map((p) => {
    const values = p.name === route.wire.filter.name ? ` One of: ${route.wire.filter.values.join(', ')}.` : '';
    return `    - ${p.name}${p.required ? ' (required)' : ''}: ${p.description}${values}`;
  });
}

export function buildLlmsText(publicUrl: string): string {
  const lines: string[] = [
    '# Wires',
    '',
    `Base URL: ${publicUrl}`,
    '',
    'Real-time data wires: continuously polled public sources (news, SEC filings, vulnerability',
    'advisories, regulations, court opinions, bills, enforcement, recalls, crypto, weather alerts,',
    'earthquakes, arXiv, AI labs, central banks, Hacker News, cloud status, NASA, sports, contract',
    'awards, remote jobs), indexed in memory and searchable over HTTP. All routes are GET and return JSON.',
    '',
    '## Paying',
    '',
    'Paid routes cost 0.005 or 0.01 USD per call, settled with x402 v2 in USDC on Base (eip155:8453).',
    'No API key and no account: call the route, receive 402 with a PAYMENT-REQUIRED header (base64 JSON',
    'offer), sign the exact USDC transfer authorization it describes, and repeat the request with the',
    'PAYMENT-SIGNATURE header. Compare every offer with /.well-known/x402 before signing.',
    'Every paid wire has a free preview route returning at most the top 3 matches.',
    '',
    '## Result envelope',
    '',
    'query, since, count, took_ms, freshest, articles[] with title, url, source, category, published',
    "(ISO 8601 UTC), age_minutes, summary (omitted on /news/preview), relevance, and data: the wire's",
    'own fields (listed under each wire below) where its source states them; a field it does not state is absent.',
    'Errors: {"error":{"code","message","param","allowed"}}; 400 bad parameter, 402 payment, 404 unknown route.',
    '',
    '## Wires',
    '',
  ];
  for (const wire of WIRES) {
    lines.push(`### ${wire.title} (${wire.id})`, '', wire.description, `Tier: ${wire.tier}. Retention: ${wire.retention}.`, '');
    for (const route of ROUTES.filter((r) => r.wire === wire)) {
      const price = route.kind === 'paid' ? `${route.def.price} USD per call` : 'free, at most 3 results';
      lines.push(`- GET ${route.path} (${price}): ${route.def.summary}`, ...describeParams(route));
    }
    const fields = fieldsOf(wire.id);
    if (fields.length > 0) lines.push('', 'data:', ...fields.map((f) => `- ${f.name} (${fieldType(f)}): ${f.doc}`));
    lines.push('');
  }
  lines.push(...streamText(), '');
  lines.push(
    '## Free utility routes',
    '',
    '- GET /health: liveness and freshness (last_poll, observed_interval_sec, wires per tier, items per wire)',
    '- GET /sources: every source of every wire',
    "- GET /tickers?q=<name>|cik=<cik>|ticker=<ticker>: a company's ticker, CIK and listings from SEC's map (free; use it to fill ticker= or cik=)",
    '- GET /mcp: MCP catalogue (wires, filters, prices, preview routes; no items)',
    '- GET /openapi.json: OpenAPI 3.0.3 description',
    '- GET /.well-known/x402: price list with the exact x402 offer of every paid route',
    '- GET /llms-full.txt: this text',
    ...[...REDIRECTS].map(([from, to]) => `- GET ${from}: redirects (308) to ${to}`),
    '',
  );
  return lines.join('\n');
}

/** The push protocol, from the definitions the server runs on. */
function streamText(): string[] {
  const wires = [...streamWires().values()];
  return [
    '## Push: GET /stream (WebSocket)',
    '',
    `New items of a wire pushed the moment they are indexed. Connect to ws(s)://…/stream?wire=<id> (${wires.map((w) => w.wire.id).join(', ')}).`,
    `A stream is paid in blocks of ${BLOCK_MINUTES} minutes; a minute costs the wire's per-call price (a ${BLOCK_MINUTES}-minute block: ${[...new Set(wires.map((w) => w.blockPrice))].join(' or ')} USD; exact offers in the streams list of /.well-known/x402).`,
    "Pay in the upgrade request's PAYMENT-SIGNATURE (or X-PAYMENT) header; without it the upgrade answers 402 with the block offer.",
    'A browser, which cannot set headers, adds pay=message and pays in its first message.',
    "Several wires share one connection and payment with wire=a,b (a block costs the sum of theirs; the subscription is taken on each). The URL may carry one subscription in the wire's filter, q and field filters (/stream?wire=cve&src=cisa&q=linux, /stream?wire=edgar&ticker=NVDA): validated before the payment is read (a bad one answers the upgrade 400), and taken as soon as the block is paid, so a client need not send anything.",
    'Paid time is kept per payment: presenting the same payment again (a reconnect) gives the same paid_until, never a second block.',
    '',
    'Client messages (JSON text):',
    '- {"type":"subscribe","params":{"<filter>":"<value>","q":"<terms>"}}: the wire\'s filter, q and field filters (ticker, cik, item, min_mag where the wire has them), validated as on its paid route (since and limit do not apply); every q term must be in the title or summary. It is checked before payment: on an unpaid connection a valid one answers payment_required.',
    '- {"type":"unsubscribe","sub":"<key>"}',
    '- {"type":"pay","payment":"<base64 PaymentPayload, as in PAYMENT-SIGNATURE>"}: the first payment (pay=message) or a renewal; a renewal starts where the paid time ends.',
    '',
    'Server messages:',
    ...Object.entries(SERVER_MESSAGES).map(([name, text]) => `- ${name}: ${text}`),
    '',
    'Close codes:',
    ...Object.values(CLOSE).map(([code, reason]) => `- ${code}: ${reason}`),
    '',
    `Limits: ${MAX_SUBSCRIPTIONS} subscriptions per connection, ${MAX_MESSAGE_BYTES / 1024} KiB per client message; a connection silent for ${IDLE_TIMEOUT_SEC} s is pinged (clients answer pings automatically) and closed if the ping goes unanswered as long.`,
    "Subscriptions with identical parameters share one key; an item matching two of a connection's subscriptions is pushed once for each.",
  ];
}

/** A field's type as the docs word it: `string (date)`, `string[]`, `object[]`. */
export function fieldType(f: FieldDef): string {
  const s = f.schema;
  if (s.type === 'array') return `${s.items.type}[]`;
  return 'format' in s && s.format ? `${s.type} (${s.format})` : s.type;
}
