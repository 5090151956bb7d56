/**
 * MCP tools, derived from the catalogue: one per route. A preview route is a free tool; a
 * paid route is a tool paid per call with x402 (`_meta["x402/payment"]`). Input schemas are
 * the catalogue's parameter schemas (catalog/params.ts).
 */
import { ROUTES, type Route } from '../catalog/index.js';
import { routeParamDocs } from '../catalog/params.js';
import { LOOKUP_PARAM_DOCS } from '../catalog/lookup-params.js';

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, object>; required?: string[]; additionalProperties: false };
}

/** `/edgar/filings` → `edgar_filings`, `/news/preview` → `news_preview`. */
export function toolName(route: Route): string {
  return route.path.slice(1).replace(/[^a-z0-9]+/g, '_');
}

function toolDef(route: Route): ToolDef {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const doc of routeParamDocs(route)) {
    properties[doc.name] = { ...doc.schema, description: doc.description };
    if (doc.required) required.push(doc.name);
  }
  const cost =
    route.kind === 'paid'
      ? `Costs ${route.def.price} USD per call, paid with x402 (USDC on Base) in _meta["x402/payment"]; without it the result is the payment offer. Free top 3: ${toolName({ ...route, path: route.previewPath } as Route)}.`
      : `Free: the top ${route.def.maxLimit} results.`;
  return {
    name: toolName(route),
    title: route.def.summary,
    description: `${route.wire.description} ${cost}`,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
  };
}

/** The free lookup in SEC's ticker map (/tickers): a name to a ticker and CIK before a paid call. */
export const TICKERS_TOOL: ToolDef = {
  name: 'tickers_lookup',
  title: "A company's ticker and CIK",
  description:
    "Free. Looks a company up in SEC's ticker map by name (q: every word in its name, the last a prefix), by cik or by ticker; give exactly one. Returns its CIK, first-listed ticker, every listed ticker and exchange: use them for the ticker= and cik= filters of the paid tools.",
  inputSchema: {
    type: 'object',
    properties: Object.fromEntries(LOOKUP_PARAM_DOCS.map((p) => [p.name, { ...p.schema, description: p.description }])),
    additionalProperties: false,
  },
};

export const TOOLS: readonly ToolDef[] = [...ROUTES.map(toolDef), TICKERS_TOOL];
export const ROUTE_BY_TOOL: ReadonlyMap<string, Route> = new Map(ROUTES.map((r) => [toolName(r), r]));
