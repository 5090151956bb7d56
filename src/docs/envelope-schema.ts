/**
 * The result envelope's schema, written once: OpenAPI's components use it (with the article
 * as a `$ref`), and the x402 discovery extension of every offer embeds it whole.
 */
import { fieldsOf } from '../catalog/fields.js';

type Json = Record<string, unknown>;

export const ARTICLE_SCHEMA: Json = {
  type: 'object',
  required: ['title', 'url', 'source', 'category', 'published', 'age_minutes', 'relevance'],
  properties: {
    title: { type: 'string' },
    url: { type: 'string', description: 'Link to the original item.' },
    source: { type: 'string', description: 'Originating source.' },
    category: { type: 'string', description: "The item's filter value on its wire." },
    published: { type: 'string', format: 'date-time', description: "The item's own publication time (UTC)." },
    age_minutes: { type: 'integer', description: 'Age of the item in minutes at response time.' },
    summary: { type: 'string', description: 'Plain-text summary; omitted on /news/preview.' },
    relevance: { type: 'number', description: 'Ranking score: text relevance times recency.' },
    data: {
      type: 'object',
      description: "The wire's own fields, as its source states them (each wire's are listed in docs/routes.md); a field the source does not state is absent, and so is `data` when it states none.",
    },
  },
};

/** A wire's `data` object: its declared fields (src/catalog/fields.ts), each optional. */
export function dataSchema(wire: string): Json | null {
  const fields = fieldsOf(wire);
  if (fields.length === 0) return null;
  return { type: 'object', properties: Object.fromEntries(fields.map((f) => [f.name, { ...f.schema, description: f.doc }])) };
}

/** The envelope, its articles given by `article` (the schema itself, or a reference to it). */
export function envelopeSchema(article: Json = ARTICLE_SCHEMA): Json {
  return {
    type: 'object',
    required: ['query', 'since', 'count', 'took_ms', 'freshest', 'articles'],
    properties: {
      query: { type: 'string', nullable: true, description: 'Echo of the search terms.' },
      since: { type: 'string', description: 'Freshness window applied.' },
      count: { type: 'integer', description: 'Number of items in articles.' },
      took_ms: { type: 'number', description: 'Processing time in milliseconds.' },
      freshest: { type: 'string', format: 'date-time', nullable: true, description: 'Publication time of the newest returned item.' },
      articles: { type: 'array', items: article },
    },
  };
}
