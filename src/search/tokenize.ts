/**
 * The one tokeniser of titles, summaries and queries, so both sides of a match agree:
 * Unicode-aware, lower-cased, split on anything that is not a letter, a digit or a mark.
 * - Diacritics of Latin, Greek and Cyrillic letters are removed ("Zürich" matches "zurich"),
 *   and so are the strokes and ligatures no decomposition removes (ł, ø, đ, ß, æ, œ, þ, ı).
 *   Marks of other scripts are kept: in Japanese or Hindi they make different words.
 * - Dotted abbreviations are one word: "U.S." is "us", as a user types it.
 * - Chinese and Japanese write words without spaces: a run of their characters becomes its
 *   overlapping pairs ("東京の地震" → 東京 京の の地 地震), so a two-character word is found
 *   inside a longer run. A single character stays a token of its own.
 */
const SPLIT = /[^\p{L}\p{N}\p{M}]+/u;
/** Marks on a Latin, Greek or Cyrillic letter (after NFKD): diacritics to drop. */
const DIACRITICS = /(?<=[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]\p{M}*)\p{M}+/gu;
/** Single letters each followed by a dot, at least two: U.S., U.K., e.g. */
const DOTTED = /(?<![\p{L}\p{N}])(?:\p{L}\.){2,}(?![\p{L}\p{N}])/gu;
const FOLD: Readonly<Record<string, string>> = { ł: 'l', ø: 'o', đ: 'd', ð: 'd', ħ: 'h', ı: 'i', ß: 'ss', æ: 'ae', œ: 'oe', þ: 'th' };
const FOLDED = /[łøđðħıßæœþ]/g;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC]+/gu;
/** Longer tokens are noise (hashes, base64); they are not indexed. */
export const MAX_TOKEN = 40;
/** Distinct terms a query may have: each costs an index lookup and an intersection. */
export const MAX_QUERY_TERMS = 8;

/** Tokens of a text as they are indexed: tokens longer than MAX_TOKEN are left out. */
export function tokenize(text: string): string[] {
  return split(text, MAX_TOKEN);
}

/**
 * Tokens of a query: a long token is kept, so that, being in no item, it matches nothing
 * (every term of a query must match; dropping it would widen the query).
 */
export function tokenizeQuery(text: string): string[] {
  return split(text, Infinity);
}

const ASCII = /^[\x00-\x7f]*$/;
const ASCII_SPLIT = /[^a-z0-9]+/;

function split(text: string, maxToken: number): string[] {
  const undotted = text.includes('.') ? text.replace(DOTTED, (m) => m.replaceAll('.', '')) : text;
  // Most titles and queries are ASCII: nothing to decompose, fold or pair (and twice as fast).
  if (ASCII.test(undotted)) {
    const out: string[] = [];
    for (const token of undotted.toLowerCase().split(ASCII_SPLIT)) if (token.length > 0 && token.length <= maxToken) out.push(token);
    return out;
  }
  const plain = undotted
    .normalize('NFKD')
    .replace(DIACRITICS, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(FOLDED, (c) => FOLD[c]!);
  const out: string[] = [];
  for (const token of plain.split(SPLIT)) {
    if (token.length === 0) continue;
    if (CJK.test(token)) pushWithCjkPairs(token, out, maxToken);
    else if (token.length <= maxToken) out.push(token);
  }
  return out;
}

/** A token holding Chinese or Japanese: its other parts as they are, its CJK runs as pairs. */
function pushWithCjkPairs(token: string, out: string[], maxToken: number): void {
  let last = 0;
  for (const m of token.matchAll(CJK_RUN)) {
    const before = token.slice(last, m.index);
    if (before && before.length <= maxToken) out.push(before);
    const run = [...m[0]];
    if (run.length === 1) out.push(run[0]!);
    for (let i = 0; i + 1 < run.length; i++) out.push(run[i]! + run[i + 1]!);
    last = m.index + m[0].length;
  }
  const after = token.slice(last);
  if (after && after.length <= maxToken) out.push(after);
}
