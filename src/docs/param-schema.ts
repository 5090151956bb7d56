/** TypeBox schemas (the stream messages) as the plain JSON schemas an OpenAPI document carries. */
import type { TSchema } from '@sinclair/typebox';

type Json = Record<string, unknown>;

/** Keywords of a TypeBox schema that OpenAPI 3.0's Schema Object also has. */
const SCHEMA_KEYWORDS = ['type', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'default', 'description', 'format'];

/**
 * A TypeBox schema as an OpenAPI 3.0 Schema Object. TypeBox writes a union of literals as
 * `anyOf: [{const}]` (or a bare `const` for one value), and OpenAPI 3.0 has no `const`:
 * it becomes an `enum`.
 */
export function toOpenApiSchema(schema: TSchema): Json {
  const s = schema as Json;
  if (Array.isArray(s.anyOf) && s.anyOf.every((m: Json) => 'const' in m)) {
    return { type: 'string', enum: s.anyOf.map((m: Json) => m.const) };
  }
  if ('const' in s) return { type: 'string', enum: [s.const] }; // a union of one literal
  if (Array.isArray(s.anyOf)) return { anyOf: s.anyOf.map((m: TSchema) => toOpenApiSchema(m)) };
  const out: Json = {};
  for (const key of SCHEMA_KEYWORDS) if (key in s) out[key] = s[key];
  if (s.properties) {
    out.properties = Object.fromEntries(Object.entries(s.properties as Record<string, TSchema>).map(([k, v]) => [k, toOpenApiSchema(v)]));
    if (s.required) out.required = s.required;
    if (s.additionalProperties === false) out.additionalProperties = false;
  }
  // A TypeBox Record: any property name, each value of one schema.
  if (s.patternProperties) out.additionalProperties = toOpenApiSchema(Object.values(s.patternProperties as Record<string, TSchema>)[0]!);
  return out;
}
