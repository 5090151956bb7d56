/**
 * `GET /mcp`: the MCP discovery catalogue. It lists wires, filters, prices and preview routes
 * and never items (spec 4.4: the remote endpoint returns only the catalogue).
 */
import { WIRES } from '../catalog/index.js';
import { NETWORK } from '../pay/offer.js';

export function buildMcpCatalog(publicUrl: string): object {
  return {
    name: 'wires',
    description: 'Real-time data wires. Paid routes settle per call with x402 v2 (USDC on Base); previews are free.',
    endpoint: publicUrl + '/mcp',
    payment: { protocol: 'x402', x402Version: 2, network: NETWORK, asset: 'USDC', prices: '/.well-known/x402' },
    wires: WIRES.map((w) => ({
      id: w.id,
      title: w.title,
      description: w.description,
      filter: { name: w.filter.name, values: w.filter.values },
      paid: w.paid.map((r) => ({ path: r.path, price: r.price, currency: 'USD', q: r.q, q_required: r.qRequired })),
      preview: { path: w.preview.path, max_results: w.preview.maxLimit },
      tier: w.tier,
      retention: w.retention,
    })),
  };
}
