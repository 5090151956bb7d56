/**
 * What each wire route's query parameters are, as plain JSON schemas derived from the
 * catalogue: the one description that the request validator (http/params.ts compiles it),
 * the OpenAPI document, x402 discovery, llms.txt and the MCP tool schemas all read. Plain
 * objects, free of any schema library, so the client package can carry them.
 */
import { DURATION_PATTERN } from './duration.js';
import { facetsOf, MAX_VALUES, type FacetDef } from './facets.js';
import type { Route } from './index.js';

export const Q_MAX_LENGTH = 200;
export const DEFAULT_LIMIT = 10;

/** The JSON Schema keywords the parameters use (valid in OpenAPI 3.0 and MCP alike). */
export type ParamSchema =
  | { type: 'string'; minLength?: number; maxLength?: number; pattern?: string; default?: string; enum?: readonly string[] }
  | { type: 'integer'; minimum: number; maximum: number; default: number };

export interface ParamDoc {
  name: string;
  required: boolean;
  description: string;
  schema: ParamSchema;
}

export function routeParamDocs(route: Route): ParamDoc[] {
  const { wire, def } = route;
  const docs: ParamDoc[] = [];
  if (def.q === 'text') {
    docs.push({
      name: 'q',
      required: def.qRequired,
      description: 'Search terms; every term must match the title or summary.',
      schema: { type: 'string', minLength: 1, maxLength: Q_MAX_LENGTH },
    });
  } else if (def.q === 'state') {
    docs.push({
      name: 'q',
      required: false,
      description: 'Two-letter US state code of the place of performance, e.g. CA (a full state name does not match).',
      schema: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    });
  }
  docs.push({
    name: 'since',
    required: false,
    description: `Freshness window: an integer followed by m, h or d, at most ${wire.retention} (the default).`,
    schema: { type: 'string', pattern: DURATION_PATTERN, default: wire.retention },
  });
  docs.push({
    name: 'limit',
    required: false,
    description: `Number of results, 1 to ${def.maxLimit}.`,
    schema: { type: 'integer', minimum: 1, maximum: def.maxLimit, default: Math.min(DEFAULT_LIMIT, def.maxLimit) },
  });
  docs.push({
    name: wire.filter.name,
    required: false,
    description: `${wire.filter.description}.`,
    schema: { type: 'string', enum: wire.filter.values },
  });
  for (const f of facetsOf(wire.id)) docs.push({ name: f.param, required: false, description: f.doc, schema: { type: 'string', pattern: facetPattern(f) } });
  return docs;
}

/** A facet parameter's whole value: one value, or (`any`) up to MAX_VALUES joined by commas. */
export function facetPattern(f: FacetDef): string {
  const one = f.pattern.source.replace(/^\^|\$$/g, '');
  return f.kind === 'any' ? `^${one}(,${one}){0,${MAX_VALUES - 1}}$` : `^${one}$`;
}
