/**
 * The three XML feed formats, read by one generic reader each: RSS 2.0, Atom 1.0 and
 * RSS 1.0/RDF. The format is decided from the document's root element, not from the URL or
 * the content type (the ECB serves RSS from a `.html` path).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ParseError, type RawEntry } from './entry.js';
import { absoluteHttpUrl, decodeEntities } from './text.js';

export type XmlFormat = 'rss' | 'atom' | 'rdf';

export interface XmlDocument {
  format: XmlFormat;
  entries: RawEntry[];
  /** The feed-level link, absolute: resolved against the xml:base in scope, else the document URL. */
  link?: string;
  /**
   * What entries without an `xml:base` of their own resolve against: the feed-level
   * `xml:base`, else the feed link, else the document URL (absolute, or undefined).
   */
  base?: string;
  /** WebSub discovery: the hub links the feed declares, as written (validated by the subscriber). */
  hubs?: string[];
  /** WebSub discovery: the feed's `rel="self"` link, absolute. */
  self?: string;
}

const parser = new XMLParser({
  ignoreAttributes: false,
  // Attributes keep their qualified name after the prefix: `@href`, `@xml:base`, `@rdf:about`.
  attributeNamePrefix: '@',
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => ['item', 'entry', 'link', 'category', 'rdf:li', 'dc:creator', 'author'].includes(name),
  // Atom text constructs arrive as their raw inner XML: `type="xhtml"` is mixed content, whose
  // order the object model would lose ("a <b>b</b> c" → "a c" + "b"). atomText() reads them.
  stopNodes: ['feed.entry.title', 'feed.entry.summary', 'feed.entry.content'],
});

/** Document type declarations are where entity-expansion attacks live; feeds need none. */
const DOCTYPE_OPEN = /<!DOCTYPE/gi;
const NAME_END = /[[>]/g;
const SUBSET_END = /\]\s*>/g;

/**
 * The document without its document type declarations: what `<!DOCTYPE[^[>]*(\[[\s\S]*?\])?\s*>`
 * removes, in one pass. The regex rescans to the end from every `<!DOCTYPE` that is never
 * closed, which made a megabyte of them take minutes.
 */
export function stripDoctypes(xml: string): string {
  DOCTYPE_OPEN.lastIndex = 0;
  if (!DOCTYPE_OPEN.test(xml)) return xml;
  let out = '';
  let last = 0;
  /** The first `[` or `>` after the previous declaration's name: shared by every opening before it. */
  let stop = -1;
  /** No `]…>` ends an internal subset after this point: no later one can close either. */
  let unclosed = false;
  DOCTYPE_OPEN.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = DOCTYPE_OPEN.exec(xml)); ) {
    const from = m.index + m[0].length;
    if (stop < from) {
      NAME_END.lastIndex = from;
      stop = NAME_END.exec(xml)?.index ?? -1;
      if (stop < 0) break;
    }
    let end: number;
    if (xml[stop] === '>') end = stop + 1;
    else {
      if (unclosed) continue;
      SUBSET_END.lastIndex = stop + 1;
      const close = SUBSET_END.exec(xml);
      if (!close) {
        unclosed = true;
        continue;
      }
      end = close.index + close[0].length;
    }
    out += xml.slice(last, m.index);
    last = DOCTYPE_OPEN.lastIndex = end;
  }
  return last === 0 ? xml : out + xml.slice(last);
}
/**
 * A bare `&` that starts no entity (seen in the SEC litigation feed) becomes `&amp;`; one
 * inside a CDATA section is literal text already (`<![CDATA[https://e.com/?a=1&b=2]]>`).
 */
const STRAY_AMP = /&(?!(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});)/;
const STRAY_AMP_OUTSIDE_CDATA = /(<!\[CDATA\[[\s\S]*?\]\]>)|&(?!(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});)/g;
const escapeStrayAmp = (_: string, cdata: string | undefined) => cdata ?? '&amp;';
const STRAY_AMP_ALL = new RegExp(STRAY_AMP.source, 'g');

/**
 * Stray `&`s escaped outside CDATA sections. After the last `]]>` no section can close, so
 * the tail is escaped without looking for sections: the lazy section pattern would rescan it
 * to the end from every unclosed `<![CDATA[` in it.
 */
export function escapeStrayAmps(xml: string): string {
  const end = xml.lastIndexOf(']]>') + 3;
  if (end === 2) return xml.replace(STRAY_AMP_ALL, '&amp;');
  return xml.slice(0, end).replace(STRAY_AMP_OUTSIDE_CDATA, escapeStrayAmp) + xml.slice(end).replace(STRAY_AMP_ALL, '&amp;');
}

type Node = Record<string, unknown>;

/** Text content of a parsed node: a string, or an element's `#text`. */
function text(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === 'object') return text((value as Node)['#text']);
  return undefined;
}

/** A string attribute of a parsed element (`name` with its `@`). */
function attr(node: unknown, name: string): string | undefined {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const value = (node as Node)[name];
  return typeof value === 'string' ? value : undefined;
}

export function parseXml(xml: string, documentUrl?: string): XmlDocument {
  let cleaned = stripDoctypes(xml);
  if (STRAY_AMP.test(cleaned)) cleaned = escapeStrayAmps(cleaned);
  const valid = XMLValidator.validate(cleaned);
  if (valid !== true) throw new ParseError('malformed', `malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let doc: Node;
  try {
    doc = parser.parse(cleaned) as Node;
  } catch (err) {
    // The parser refuses what its validator let through: more than 100 nested elements, a
    // CDATA section opened after the root element and never closed.
    throw new ParseError('malformed', `malformed XML: ${(err as Error).message}`);
  }
  const url = absoluteHttpUrl(documentUrl);
  if (doc.rss) return rss(doc.rss as Node, url);
  if (doc.feed) return atom(doc.feed as Node, url);
  if (doc['rdf:RDF']) return rdf(doc['rdf:RDF'] as Node, url);
  throw new ParseError('unsupported_format', `unknown XML root element <${Object.keys(doc).find((k) => !k.startsWith('?')) ?? '?'}>`);
}

// ---- Base URLs (XML Base, RFC 3986 §5.1) ----

/**
 * The base in scope inside `node`: its own `xml:base` resolved against the base inherited
 * from its ancestors' `xml:base`, or against `outer` (the document URL) when no ancestor
 * declares one. An `xml:base` that cannot be resolved is ignored.
 */
function declaredBase(node: unknown, inherited: string | undefined, outer: string | undefined): string | undefined {
  const value = attr(node, '@xml:base');
  if (value === undefined) return inherited;
  return absoluteHttpUrl(value, inherited ?? outer) ?? inherited;
}

/**
 * The document's scope: the feed-level link (resolved against `linkBase`, the xml:base in
 * scope where it stands, else the document URL) and the default base of entries.
 */
function feedScope(format: XmlFormat, linkNode: unknown, linkBase: string | undefined, xmlBase: string | undefined, documentUrl: string | undefined): XmlDocument {
  const link = absoluteHttpUrl(linkValue(linkNode), declaredBase(linkNode, linkBase, documentUrl) ?? documentUrl);
  const out: XmlDocument = { format, entries: [] };
  if (link !== undefined) out.link = link;
  const base = xmlBase ?? link ?? documentUrl;
  if (base !== undefined) out.base = base;
  return out;
}

/**
 * Sets `e.base` when the entry element or its link element declares an `xml:base` of its
 * own; otherwise the document's base applies and nothing is stored (no per-entry work).
 */
function entryBase(e: RawEntry, entry: Node, linkNode: unknown, xmlBase: string | undefined, outer: string | undefined): void {
  if (attr(entry, '@xml:base') === undefined && attr(linkNode, '@xml:base') === undefined) return;
  const base = declaredBase(linkNode, declaredBase(entry, xmlBase, outer), outer);
  if (base !== undefined && base !== xmlBase) e.base = base;
}

// ---- Links ----

/** The URL a link element carries: its `href`, or its text (RSS `<link>`, CDATA, whitespace around). */
function linkValue(node: unknown): string | undefined {
  const value = attr(node, '@href') ?? text(node);
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/** The first link element that carries a URL (RSS `<link>`). */
function firstLink(links: unknown): unknown {
  if (!Array.isArray(links)) return linkValue(links) === undefined ? undefined : links;
  for (const l of links) if (linkValue(l) !== undefined) return l;
  return undefined;
}

const IANA_REL = 'http://www.iana.org/assignments/relation/';

/**
 * How good a page for the item an Atom link is (lower is better): the alternate HTML page
 * first, then another alternate representation, related, via, enclosure, self, anything
 * else, and edit links last.
 */
function linkRank(node: unknown): number {
  let rel = attr(node, '@rel')?.trim().toLowerCase() ?? '';
  if (rel.startsWith(IANA_REL)) rel = rel.slice(IANA_REL.length);
  if (rel === '' || rel === 'alternate') {
    const type = attr(node, '@type')?.trim().toLowerCase() ?? '';
    return type === '' || type.startsWith('text/html') || type.startsWith('application/xhtml+xml') ? 0 : 1;
  }
  switch (rel) {
    case 'related':
      return 2;
    case 'via':
      return 3;
    case 'enclosure':
      return 4;
    case 'self':
      return 5;
    case 'edit':
    case 'edit-media':
      return 7;
    default:
      return 6;
  }
}

/** The best Atom link element that carries a URL (see linkRank). */
function bestLink(links: unknown): unknown {
  if (!Array.isArray(links)) return linkValue(links) === undefined ? undefined : links;
  let best: unknown;
  let bestRank = Infinity;
  for (const l of links) {
    if (linkValue(l) === undefined) continue;
    const rank = linkRank(l);
    if (rank === 0) return l;
    if (rank < bestRank) {
      best = l;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * An RSS `<guid>` that is the item's permalink: `isPermaLink="true"`, or no attribute (the
 * default is true) and the value an absolute http(s) URL, since many feeds leave the
 * attribute out on opaque ids. `isPermaLink="false"` never is.
 */
function permalink(guid: unknown): string | undefined {
  const node = Array.isArray(guid) ? guid[0] : guid;
  const value = text(node)?.trim();
  if (!value) return undefined;
  const flag = attr(node, '@isPermaLink');
  if (flag === undefined) return /^https?:\/\//i.test(value) ? value : undefined;
  return flag.trim().toLowerCase() === 'true' ? value : undefined;
}

// ---- Atom text constructs (RFC 4287 §3.1) ----

type TextKind = 'text' | 'html' | 'markup';

/** What an Atom `type` attribute says the content is; undefined for non-text media (base64). */
function textKind(type: string | undefined): TextKind | undefined {
  if (type === undefined) return 'text';
  const t = type.trim().toLowerCase();
  if (t === '' || t === 'text' || t === 'text/plain') return 'text';
  if (t === 'html' || t === 'text/html') return 'html';
  if (t === 'xhtml' || t.endsWith('+xml') || t.endsWith('/xml')) return 'markup';
  if (t.startsWith('text/')) return 'text';
  return undefined;
}

const CDATA_OPEN = '<![CDATA[';

/**
 * The character data of raw element content: CDATA sections unwrapped, entity and character
 * references decoded, comments dropped. Undefined when the content holds elements.
 */
function characterData(raw: string): string | undefined {
  if (!raw.includes('<')) return decodeEntities(raw);
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const lt = raw.indexOf('<', i);
    if (lt < 0) {
      out += decodeEntities(raw.slice(i));
      break;
    }
    out += decodeEntities(raw.slice(i, lt));
    if (raw.startsWith(CDATA_OPEN, lt)) {
      const end = raw.indexOf(']]>', lt + CDATA_OPEN.length);
      if (end < 0) return out + raw.slice(lt + CDATA_OPEN.length);
      out += raw.slice(lt + CDATA_OPEN.length, end);
      i = end + 3;
    } else if (raw.startsWith('<!--', lt) || raw.startsWith('<?', lt)) {
      const end = raw.indexOf(raw[lt + 1] === '!' ? '-->' : '?>', lt + 2);
      i = end < 0 ? raw.length : end + (raw[lt + 1] === '!' ? 3 : 2);
    } else {
      return undefined;
    }
  }
  return out;
}

const CDATA = /<!\[CDATA\[([\s\S]*?)\]\]>/g;
const PREFIXED_TAG = /<(\/?)[A-Za-z_][\w.-]*:(?=[A-Za-z_])/g;

/**
 * XHTML (or other XML) markup as HTML for htmlToText: CDATA sections become escaped text and
 * namespace prefixes are dropped (`<xhtml:p>` → `<p>`) so block elements still break words.
 * The `<div xmlns="http://www.w3.org/1999/xhtml">` wrapper is stripped with the other tags.
 */
function markupAsHtml(raw: string): string {
  let html = raw;
  if (html.includes(CDATA_OPEN)) html = html.replace(CDATA, (_, data: string) => data.replace(/&/g, '&amp;').replace(/</g, '&lt;'));
  if (html.includes(':')) html = html.replace(PREFIXED_TAG, '<$1');
  return html;
}

/**
 * Reads an Atom text construct (a stop node: its raw inner XML) into `e.title` or
 * `e.summary`: `type="html"` is escaped HTML, `type="xhtml"` inline markup (both go on as
 * HTML), `type="text"` (the default) plain text, flagged so that text that looks like
 * markup is kept. Elements inside a text or html construct (not allowed, but seen) are read
 * as markup. Returns false when the construct is absent, empty or not text.
 */
function atomText(node: unknown, e: RawEntry, field: 'title' | 'summary'): boolean {
  if (Array.isArray(node)) node = node[0];
  const kind = textKind(attr(node, '@type'));
  const raw = text(node);
  if (kind === undefined || raw === undefined || raw === '') return false;
  let value: string | undefined;
  let plain = false;
  if (kind !== 'markup') {
    value = characterData(raw);
    plain = kind === 'text' && value !== undefined;
  }
  value ??= markupAsHtml(raw);
  e[field] = value;
  if (plain) {
    if (field === 'title') e.plainTitle = true;
    else e.plainSummary = true;
  }
  return true;
}

// ---- WebSub discovery (W3C WebSub §4) ----

/**
 * Records the `rel="hub"` and `rel="self"` links among `node`'s link elements, whatever
 * their prefix (`atom:link`, FeedBurner's `atom10:link`, Atom's own `link`).
 */
function discover(scope: XmlDocument, node: Node | undefined, base: string | undefined): void {
  if (!node) return;
  for (const [name, value] of Object.entries(node)) {
    if (name !== 'link' && !name.endsWith(':link')) continue;
    for (const link of Array.isArray(value) ? value : [value]) {
      const rel = attr(link, '@rel')?.trim().toLowerCase();
      const href = attr(link, '@href')?.trim();
      if (href === undefined) continue;
      if (rel === 'hub') (scope.hubs ??= []).push(href);
      else if (rel === 'self' && scope.self === undefined) {
        const self = absoluteHttpUrl(href, base);
        if (self !== undefined) scope.self = self;
      }
    }
  }
}

// ---- The three formats ----

function categories(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((c) => text(c) ?? ((c as Node)['@term'] as string | undefined) ?? '').filter(Boolean);
}

/**
 * The authors an item names: each `dc:creator`, and each `<author>` (RSS's text, the name of
 * its "email (Name)" form; an element with a `<name>`, as Atom's and some RSS feeds' own).
 */
const EMAIL_NAME = /^[^\s@()]+@[^\s@()]+\s*\((.+)\)$/;
function authors(...values: unknown[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    if (!Array.isArray(value)) continue;
    for (const a of value) {
      let name = (a !== null && typeof a === 'object' && 'name' in (a as Node) ? text((a as Node).name) : text(a))?.trim();
      // RSS 2.0's form, "lawyer@boyer.net (Lawyer Boyer)": the name.
      name = EMAIL_NAME.exec(name ?? '')?.[1]?.trim() ?? name;
      if (name) out.push(name);
    }
  }
  return out;
}

function rss(root: Node, documentUrl: string | undefined): XmlDocument {
  const channel = ((Array.isArray(root.channel) ? root.channel[0] : root.channel) ?? {}) as Node;
  const xmlBase = declaredBase(channel, declaredBase(root, undefined, documentUrl), documentUrl);
  const scope = feedScope('rss', firstLink(channel.link), xmlBase, xmlBase, documentUrl);
  discover(scope, channel, xmlBase ?? documentUrl);
  const outer = documentUrl ?? scope.link;
  const items = (channel.item ?? []) as Node[];
  for (const item of items) {
    const guid = text(item.guid);
    // The item's <link>, else a permalink guid, else an Atom link some feeds add.
    let linkNode = firstLink(item.link);
    let link = linkValue(linkNode) ?? permalink(item.guid);
    if (link === undefined) {
      linkNode = bestLink(item['atom:link']);
      link = linkValue(linkNode);
    }
    const e: RawEntry = {
      // A guid that is only a query string or fragment is what is left of a URL, not an id:
      // Yahoo Finance's guid is the link's last path segment, which for links ending in
      // `/?src=A00220&yptr=yahoo` (Investor's Business Daily) is that query alone, the same on
      // every such item, so all but one were dropped as repeats. The link identifies them.
      id: guid !== undefined && /^\s*[?#]/.test(guid) ? undefined : guid,
      title: text(item.title),
      link,
      date: text(item.pubDate) ?? text(item['dc:date']) ?? text(item.published) ?? text(item.updated),
      summary: text(item.description) ?? text(item['content:encoded']),
      categories: categories(item.category),
      announceType: text(item['arxiv:announce_type']),
      authors: authors(item['dc:creator'], item.author),
      doi: text(item['arxiv:DOI']),
      journalRef: text(item['arxiv:journal_reference']),
      region: text(item.region),
      jobType: text(item.type),
    };
    entryBase(e, item, linkNode, xmlBase, outer);
    scope.entries.push(e);
  }
  return scope;
}

function atom(root: Node, documentUrl: string | undefined): XmlDocument {
  const xmlBase = declaredBase(root, undefined, documentUrl);
  const scope = feedScope('atom', bestLink(root.link), xmlBase, xmlBase, documentUrl);
  discover(scope, root, xmlBase ?? documentUrl);
  const outer = documentUrl ?? scope.link;
  for (const entry of (root.entry ?? []) as Node[]) {
    const linkNode = bestLink(entry.link);
    const e: RawEntry = {
      id: text(entry.id),
      link: linkValue(linkNode),
      // The first publication, not the last edit; Atom 0.3 names them issued and modified.
      date: text(entry.published) ?? text(entry.updated) ?? text(entry.issued) ?? text(entry.modified),
      categories: categories(entry.category),
      authors: authors(entry.author),
    };
    atomText(entry.title, e, 'title');
    if (!atomText(entry.summary, e, 'summary')) atomText(entry.content, e, 'summary');
    entryBase(e, entry, linkNode, xmlBase, outer);
    scope.entries.push(e);
  }
  return scope;
}

function rdf(root: Node, documentUrl: string | undefined): XmlDocument {
  const xmlBase = declaredBase(root, undefined, documentUrl);
  const channel = (Array.isArray(root.channel) ? root.channel[0] : root.channel) as Node | undefined;
  // The channel is a sibling of the items: its xml:base covers its own link only.
  const scope = feedScope('rdf', firstLink(channel?.link), declaredBase(channel, xmlBase, documentUrl), xmlBase, documentUrl);
  const outer = documentUrl ?? scope.link;
  for (const item of (root.item ?? []) as Node[]) {
    // RSS 1.0 items are named by rdf:about, which is their URL when they have no <link>.
    const about = attr(item, '@rdf:about');
    const linkNode = firstLink(item.link);
    const e: RawEntry = {
      id: about ?? text(item.link),
      title: text(item.title),
      link: linkValue(linkNode) ?? about,
      date: text(item['dc:date']) ?? text(item['dcterms:issued']) ?? text(item['dcterms:modified']),
      summary: text(item.description),
      authors: authors(item['dc:creator']),
    };
    entryBase(e, item, linkNode, xmlBase, outer);
    scope.entries.push(e);
  }
  return scope;
}
