/**
 * Query-string parameters of the wire routes: the catalogue's parameter schemas
 * (catalog/params.ts) compiled once per route at start with TypeBox, plus the parsing rules
 * that a schema cannot state.
 *
 * Deliberate rules (documented in docs/routes.md):
 * - `+` is a space and percent-encoding is decoded; a malformed escape is a 400.
 * - A parameter given twice is a 400 (which one did the client mean?).
 * - An unknown parameter is a 400: on a paid route a misspelt filter would otherwise return,
 *   and charge for, an unfiltered result.
 * - An empty value is a 400: `category=` is almost always a client templating bug.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { durationMs } from '../catalog/duration.js';
import { facetsOf, facetTag, MAX_VALUES } from '../catalog/facets.js';
import type { Route } from '../catalog/index.js';
import { DEFAULT_LIMIT, type ParamSchema, Q_MAX_LENGTH, routeParamDocs } from '../catalog/params.js';
import { STATE_CODES } from '../catalog/states.js';
import { MAX_QUERY_TERMS, tokenizeQuery } from '../search/tokenize.js';
import { apiError, type ApiError } from './errors.js';

export const MAX_QUERY_STRING = 2048;

/** Parameters of a validated request, ready for the search. */
export interface RouteParams {
  /** Normalised search terms (or state code), null when absent. */
  q: string | null;
  /** `q` tokenized (distinct terms), for the search; absent for a state code. */
  terms?: readonly string[];
  /** The `since` window as given, or the wire's default. */
  since: string;
  sinceWindowMs: number;
  limit: number;
  filter?: string;
  /** Filters on structured fields: per facet parameter, its tags (catalog/facets.ts). */
  tags?: string[][];
  /** The `min` facet's value. */
  min?: number;
}

export type ParseResult = { ok: true; params: RouteParams } | { ok: false; error: ApiError };

/** A parameter's plain schema as TypeBox, which compiles it to a checker. */
function typeBox(schema: ParamSchema): TSchema {
  if (schema.type === 'integer') return Type.Integer(schema);
  const { enum: values, ...rest } = schema;
  return values ? Type.Union(values.map((v) => Type.Literal(v))) : Type.String(rest);
}

export function routeSchema(route: Route): TObject {
  const props: Record<string, TSchema> = {};
  for (const p of routeParamDocs(route)) props[p.name] = p.required ? typeBox(p.schema) : Type.Optional(typeBox(p.schema));
  return Type.Object(props, { additionalProperties: false });
}

/** Compiles the validator of one route. Call once per route at start. */
export function compileRouteParser(route: Route): (rawQuery: string) => ParseResult {
  const docs = routeParamDocs(route);
  const names = docs.map((d) => d.name);
  const check = TypeCompiler.Compile(routeSchema(route));
  const { wire, def } = route;
  const filterName = wire.filter.name;
  const facets = facetsOf(wire.id);
  const defaultLimit = Math.min(DEFAULT_LIMIT, def.maxLimit);

  const invalid = (param: string): ApiError => {
    const facet = facets.find((f) => f.param === param);
    if (facet) return apiError(400, 'invalid_parameter', `${param} must be ${facet.kind === 'any' ? `1 to ${MAX_VALUES} comma-separated values, each ` : ''}${facet.expected}`, { param });
    switch (param) {
      case 'q':
        return def.q === 'state'
          ? apiError(400, 'invalid_parameter', 'q must be a two-letter US state code such as CA; a full state name does not match', { param, allowed: STATE_CODES })
          : apiError(400, 'invalid_parameter', `q must be 1 to ${Q_MAX_LENGTH} characters and contain a letter or digit`, { param });
      case 'since':
        return apiError(400, 'invalid_parameter', `since must be an integer followed by m, h or d (e.g. 30m, 6h, 2d), from 1m up to ${wire.retention} on this wire`, { param });
      case 'limit':
        return apiError(400, 'invalid_parameter', `limit must be an integer from 1 to ${def.maxLimit}`, { param });
      default:
        return apiError(400, 'invalid_parameter', `${param} must be one of: ${wire.filter.values.join(', ')} (lowercase)`, {
          param,
          allowed: wire.filter.values,
        });
    }
  };

  return (rawQuery: string): ParseResult => {
    const split = splitQuery(rawQuery, names);
    if (!split.ok) return split;
    const values = split.values;

    // Convert before the schema check: digits become a number, anything else stays a string
    // and fails the integer check.
    if (values.limit !== undefined && /^\d{1,4}$/.test(values.limit as string)) values.limit = Number(values.limit);
    if (!check.Check(values as unknown)) {
      const first = check.Errors(values).First();
      const param = first?.path.slice(1) || (def.qRequired ? 'q' : names[0]!);
      if (param === 'q' && values.q === undefined) {
        return { ok: false, error: apiError(400, 'missing_parameter', 'q is required on this route', { param: 'q' }) };
      }
      return { ok: false, error: invalid(param) };
    }

    let q: string | null = null;
    let terms: string[] | undefined;
    if (values.q !== undefined) {
      const text = (values.q as string).trim().replace(/\s+/g, ' ');
      if (def.q === 'state') {
        q = text.toUpperCase();
        if (!STATE_CODES.includes(q)) return { ok: false, error: invalid('q') };
      } else {
        if (!/[\p{L}\p{N}]/u.test(text)) return { ok: false, error: invalid('q') };
        // Every term must match; beyond the search's limit a term would be ignored, so refuse.
        terms = [...new Set(tokenizeQuery(text))];
        if (terms.length > MAX_QUERY_TERMS) {
          return {
            ok: false,
            error: apiError(
              400,
              'invalid_parameter',
              `q has ${terms.length} search terms; at most ${MAX_QUERY_TERMS} (a run of Chinese or Japanese characters counts one term per pair of characters)`,
              { param: 'q' },
            ),
          };
        }
        q = text;
      }
    }

    const since = (values.since as string | undefined) ?? wire.retention;
    const sinceWindowMs = durationMs(since)!;
    if (sinceWindowMs < 60_000 || sinceWindowMs > route.retentionMs) return { ok: false, error: invalid('since') };

    const params: RouteParams = { q, since, sinceWindowMs, limit: (values.limit as number | undefined) ?? defaultLimit };
    if (terms) params.terms = terms;
    const filter = values[filterName] as string | undefined;
    if (filter !== undefined) params.filter = filter;
    for (const f of facets) {
      const value = values[f.param] as string | undefined;
      if (value === undefined) continue;
      if (f.kind === 'min') params.min = Number(value);
      else (params.tags ??= []).push([...new Set(value.split(',').map((v) => facetTag(f, f.normalise(v))))].sort());
    }
    return { ok: true, params };
  };
}

/**
 * Splits a raw query string into name → value, applying the rules in the header comment.
 * Returns an ApiError for the first problem found.
 */
export function splitQuery(raw: string, allowed: readonly string[]): { ok: true; values: Record<string, unknown> } | { ok: false; error: ApiError } {
  const out: Record<string, unknown> = {};
  const fail = (error: ApiError) => ({ ok: false, error }) as const;
  if (raw.length > MAX_QUERY_STRING) {
    return fail(apiError(414, 'query_too_long', `query string longer than ${MAX_QUERY_STRING} characters`));
  }
  for (const pair of raw.split('&')) {
    if (pair === '') continue; // "a=1&&b=2" and a trailing "&" are harmless
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    const name = decode(rawName);
    if (name === undefined) return fail(apiError(400, 'invalid_encoding', 'malformed percent-encoding in a parameter name'));
    if (!allowed.includes(name)) {
      return fail(
        apiError(400, 'unknown_parameter', `unknown parameter "${name.slice(0, 64)}"; this route takes: ${allowed.join(', ')}`, {
          param: name.slice(0, 64),
          allowed,
        }),
      );
    }
    if (Object.hasOwn(out, name)) {
      return fail(apiError(400, 'duplicate_parameter', `${name} is given more than once`, { param: name }));
    }
    const value = decode(rawValue);
    if (value === undefined) return fail(apiError(400, 'invalid_encoding', `malformed percent-encoding in ${name}`, { param: name }));
    if (value === '') return fail(apiError(400, 'empty_parameter', `${name} is empty; omit it instead`, { param: name }));
    out[name] = value;
  }
  return { ok: true, values: out };
}

function decode(text: string): string | undefined {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}
