/**
 * Text normalisation shared by every format: feeds put HTML (escaped, in CDATA, sometimes
 * escaped twice) in titles and summaries. We never pass feed HTML on: tags are stripped,
 * entities decoded, whitespace collapsed and lengths bounded.
 */
const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  hellip: '…',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  copy: '©',
  reg: '®',
  trade: '™',
  deg: '°',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  times: '×',
  eacute: 'é',
  egrave: 'è',
  aacute: 'á',
  agrave: 'à',
  oacute: 'ó',
  uacute: 'ú',
  iacute: 'í',
  ntilde: 'ñ',
  ccedil: 'ç',
  auml: 'ä',
  ouml: 'ö',
  uuml: 'ü',
  szlig: 'ß',
  Eacute: 'É',
  Auml: 'Ä',
  Ouml: 'Ö',
  Uuml: 'Ü',
};
const ENTITY = /&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z][a-z0-9]{1,31});/gi;

export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '';
    }
    return NAMED[body] ?? NAMED[body.toLowerCase()] ?? whole;
  });
}

const BLOCK_OPEN = /<(script|style)\b/gi;
const BLOCK_CLOSE: Readonly<Record<string, RegExp>> = { script: /<\/script\s*>/gi, style: /<\/style\s*>/gi };
const BREAKS = /<\s*(br|\/p|\/div|\/li|\/h\d|p|li)\b[^>]*>/gi;
const TAGS = /<\/?[a-z!][^>]*>/gi;

/**
 * Script and style elements replaced by a space: what `<(script|style)\b[\s\S]*?<\/\1\s*>`
 * (case-insensitive) replaces, in one pass. The regex rescans to the end from every opening
 * tag that is never closed, which made 20,000 `<script>`s take seconds.
 */
function dropBlocks(html: string): string {
  BLOCK_OPEN.lastIndex = 0;
  if (!BLOCK_OPEN.test(html)) return html;
  let out = '';
  let last = 0;
  /** Element names with no closing tag after some point: no later opening of them can close either. */
  const unclosed = new Set<string>();
  BLOCK_OPEN.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = BLOCK_OPEN.exec(html)); ) {
    const name = m[1]!.toLowerCase();
    if (unclosed.has(name)) continue;
    const close = BLOCK_CLOSE[name]!;
    close.lastIndex = BLOCK_OPEN.lastIndex;
    const c = close.exec(html);
    if (!c) {
      unclosed.add(name);
      continue;
    }
    out += html.slice(last, m.index) + ' ';
    last = BLOCK_OPEN.lastIndex = c.index + c[0].length;
  }
  return last === 0 ? html : out + html.slice(last);
}

/**
 * `text.replace(tag, by)` for a tag pattern that ends at the first `>`: only the text up to
 * the last `>` can hold a match, and searching the rest would rescan it to the end from
 * every `<` in it (a megabyte of `&lt;a` took minutes).
 */
function replaceTags(text: string, tag: RegExp, by: string): string {
  const end = text.lastIndexOf('>') + 1;
  if (end === 0) return text;
  return end === text.length ? text.replace(tag, by) : text.slice(0, end).replace(tag, by) + text.slice(end);
}

/** Plain text of an HTML fragment (or of plain text: then only whitespace changes). */
export function htmlToText(html: string): string {
  let text = html;
  // Twice: a decoded entity may reveal markup that was escaped twice (EDGAR summaries).
  for (let pass = 0; pass < 2; pass++) {
    if (!text.includes('<') && !text.includes('&')) break;
    text = decodeEntities(replaceTags(replaceTags(dropBlocks(text), BREAKS, ' '), TAGS, ''));
  }
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/** Cuts at a word boundary and marks the cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,.;:]+$/, '') + '…';
}

export const MAX_TITLE = 300;
export const MAX_SUMMARY = 500;

/** Plain text (not HTML): only whitespace is collapsed. */
export function plainText(text: string): string {
  return text.replace(/[\s\u00a0]+/g, ' ').trim();
}

/** A reference that starts with a scheme (RFC 3986 §3.1) is absolute and needs no base. */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * `ref` resolved against `base` (RFC 3986 §5, as WHATWG URL does it). An absolute reference
 * is parsed on its own, so a missing or unusable base never invalidates it; a relative one
 * without a base is undefined.
 */
function resolve(ref: string, base: string | undefined): URL | undefined {
  try {
    if (SCHEME.test(ref)) return new URL(ref);
    return base === undefined ? undefined : new URL(ref, base);
  } catch {
    return undefined;
  }
}

/** `ref` (an xml:base, a feed link) resolved to an absolute http(s) URL usable as a base; undefined otherwise. */
export function absoluteHttpUrl(ref: string | undefined, base?: string): string | undefined {
  if (ref === undefined) return undefined;
  const url = resolve(ref.trim(), base);
  return url && (url.protocol === 'http:' || url.protocol === 'https:') ? url.href : undefined;
}

const TRACKING = /(?:^|[?&])utm_/i;

/**
 * Canonical absolute http(s) URL of a link resolved against `base` (itself absolute):
 * fragment and utm_* tracking removed; undefined otherwise.
 */
export function canonicalUrl(raw: string | undefined, base?: string): string | undefined {
  if (!raw) return undefined;
  const url = resolve(raw.trim(), base);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  url.hash = '';
  if (TRACKING.test(url.search)) {
    for (const key of [...url.searchParams.keys()]) if (key.toLowerCase().startsWith('utm_')) url.searchParams.delete(key);
  }
  return url.href;
}
