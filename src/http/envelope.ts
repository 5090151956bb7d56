import type { Hit, StoredItem } from '../search/item.js';

/**
 * Serialises the result envelope (spec 2.1/2.2) straight to a string.
 *
 * Each item carries its request-independent JSON (`jsonHead`, `jsonSummary`) from ingest
 * time; only `age_minutes` and `relevance` are computed here, so a response is a handful of
 * concatenations and no intermediate objects.
 */
export function serializeEnvelope(query: string | null, since: string, hits: readonly Hit[], now: number, startedAt: number, withSummary: boolean): string {
  const [head, tail] = envelopeParts(query, since, hits, now, withSummary);
  return head + tookText(startedAt) + tail;
}

/** "0.000" to "9.999": the took_ms of nearly every answer, formatted once. */
const TOOK_TEXT = Array.from({ length: 10_000 }, (_, us) => (us / 1000).toFixed(3));

/**
 * took_ms as written: from `startedAt` (performance.now()) to now, in ms with three decimals
 * ("0.004", "0.010"), so that it has the same length from one answer to the next and a kept
 * answer's bytes can take it in place (route-runtime.ts). Under 10 ms it is a table lookup:
 * formatting the number costs more than the rest of writing a kept answer's time.
 */
export function tookText(startedAt: number): string {
  const us = Math.round((performance.now() - startedAt) * 1000);
  return us < TOOK_TEXT.length ? TOOK_TEXT[us]! : (us / 1000).toFixed(3);
}

/** The envelope around its `took_ms` value: `head + took_ms + tail` is the whole answer. */
export function envelopeParts(query: string | null, since: string, hits: readonly Hit[], now: number, withSummary: boolean): [string, string] {
  let articles = '';
  let freshest = 0;
  for (let i = 0; i < hits.length; i++) {
    const hit = hits[i]!;
    const item = hit.item;
    if (item.published > freshest) freshest = item.published;
    if (i > 0) articles += ',';
    articles += articleJson(item, now, withSummary, hit.relevance);
  }
  return [
    '{"query":' + (query === null ? 'null' : JSON.stringify(query)) + ',"since":"' + since + '","count":' + hits.length + ',"took_ms":',
    ',"freshest":' + (freshest ? '"' + new Date(freshest).toISOString() + '"' : 'null') + ',"articles":[' + articles + ']}',
  ];
}

/** One article of the envelope (also what a stream pushes): the stored fragments, its age and relevance. */
export function articleJson(item: StoredItem, now: number, withSummary: boolean, relevance: number): string {
  const age = now > item.published ? Math.floor((now - item.published) / 60_000) : 0;
  return item.jsonHead + ',"age_minutes":' + age + (withSummary ? item.jsonSummary : '') + ',"relevance":' + roundScore(relevance) + item.jsonData + '}';
}

function roundScore(score: number): number {
  return Number.isFinite(score) ? Math.round(score * 1000) / 1000 : 0;
}
