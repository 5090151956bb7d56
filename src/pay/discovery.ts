/**
 * The x402 Bazaar discovery extension of a paid route: what to send (its query parameters, with
 * types, enums and which are required) and what comes back (the envelope's JSON schema and an
 * example), so x402 indexes can list the service and agents can call it without reading our
 * docs. Built once per route at start, from the catalogue.
 *
 * The object is the one `declareDiscoveryExtension` of `@x402/extensions/bazaar` makes for a GET
 * query route (test/routes.test.ts checks it is, for every route), written here: that module
 * loads a JSON-schema validator (ajv) with it, about 60 ms of every start, for a function that
 * only assembles an object.
 */
import type { Route } from '../catalog/index.js';
import { envelopeSchema } from '../docs/envelope-schema.js';
import { routeParamDocs } from '../catalog/params.js';

/** What the route declares: `declareDiscoveryExtension`'s arguments. */
export function discoveryDeclaration(route: Route) {
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
  return {
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
  };
}

export function discoveryExtension(route: Route): Record<string, unknown> {
  const { input, inputSchema, output } = discoveryDeclaration(route);
  return {
    bazaar: {
      info: {
        // Every paid route is a GET (the library's server hook, which this service does not run, would add it per request).
        input: { type: 'http', method: 'GET', queryParams: input },
        output: { type: 'json', example: output.example },
      },
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          input: {
            type: 'object',
            properties: {
              type: { type: 'string', const: 'http' },
              method: { type: 'string', enum: ['GET', 'HEAD', 'DELETE'] },
              queryParams: { type: 'object', ...inputSchema },
            },
            required: ['type', 'method'],
            additionalProperties: false,
          },
          output: {
            type: 'object',
            properties: { type: { type: 'string' }, example: { type: 'object', ...output.schema } },
            required: ['type'],
          },
        },
        required: ['input'],
      },
    },
  };
}
