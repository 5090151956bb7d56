/**
 * The x402 Bazaar discovery extension of a paid route (`@x402/extensions`): what to send
 * (its query parameters, with types, enums and which are required) and what comes back (the
 * envelope's JSON schema and an example), so x402 indexes can list the service and agents
 * can call it without reading our docs. Built once per route at start, from the catalogue.
 */
import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import type { Route } from '../catalog/index.js';
import { envelopeSchema } from '../docs/envelope-schema.js';
import { routeParamDocs } from '../catalog/params.js';

export function discoveryExtension(route: Route): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of routeParamDocs(route)) {
    properties[p.name] = { ...p.schema, description: p.description };
    if (p.required) required.push(p.name);
  }
  const { wire } = route;
  const example: Record<string, string | number> = { [wire.filter.name]: wire.filter.values[0]!, limit: 3 };
  if (route.def.q === 'text') example.q = 'rate cut';
  if (route.def.q === 'state') example.q = 'CA';
  const extension = declareDiscoveryExtension({
    input: example,
    inputSchema: { properties, required, additionalProperties: false },
    output: {
      example: {
        query: example.q ?? null,
        since: wire.retention,
        count: 1,
        took_ms: 0.05,
        freshest: '2026-11-23T03:58:00.000Z',
        articles: [{ title: '…', url: 'https://…', source: wire.sources[0]!.name, category: wire.filter.values[0], published: '2026-11-23T03:58:00.000Z', age_minutes: 2, relevance: 1 }],
      },
      schema: envelopeSchema(),
    },
  });
  // The method is not declared but added per request by the library's server hook, which
  // this service does not run: every paid route is a GET, so it is set here.
  const bazaar = extension.bazaar as { info: { input: Record<string, unknown> } };
  bazaar.info.input.method = 'GET';
  return extension;
}
