/** `/llms-full.txt`: the whole route list as plain text, for agents reading the service cold. */
import { REDIRECTS, ROUTES, WIRES, type Route } from '../catalog/index.js';
import { routeParamDocs } from '../http/params.js';

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
    '(ISO 8601 UTC), age_minutes, summary (omitted on /news/preview), relevance.',
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
    lines.push('');
  }
  lines.push(
    '## Free utility routes',
    '',
    '- GET /health: liveness and freshness (last_poll, observed_interval_sec, wires per tier, items per wire)',
    '- GET /sources: every source of every wire',
    '- GET /mcp: MCP catalogue (wires, filters, prices, preview routes; no items)',
    '- GET /openapi.json: OpenAPI 3.0.3 description',
    '- GET /.well-known/x402: price list with the exact x402 offer of every paid route',
    '- GET /llms-full.txt: this text',
    ...[...REDIRECTS].map(([from, to]) => `- GET ${from}: redirects (308) to ${to}`),
    '',
  );
  return lines.join('\n');
}
