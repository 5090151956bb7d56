/**
 * The one tokeniser of titles, summaries and queries, so both sides of a match agree:
 * Unicode-aware, lower-cased, diacritics removed ("Zürich" matches "zurich"), split on
 * anything that is not a letter or a digit.
 */
const SPLIT = /[^\p{L}\p{N}]+/u;
const MARKS = /\p{M}+/gu;
/** Longer tokens are noise (hashes, base64); they are not indexed. */
const MAX_TOKEN = 40;

export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const token of text.normalize('NFKD').replace(MARKS, '').toLowerCase().split(SPLIT)) {
    if (token.length > 0 && token.length <= MAX_TOKEN) out.push(token);
  }
  return out;
}
