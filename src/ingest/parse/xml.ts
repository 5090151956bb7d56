/**
 * The three XML feed formats, read by one generic reader each: RSS 2.0, Atom 1.0 and
 * RSS 1.0/RDF. The format is decided from the document's root element, not from the URL or
 * the content type (the ECB serves RSS from a `.html` path).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ParseError, type RawEntry } from './entry.js';

export type XmlFormat = 'rss' | 'atom' | 'rdf';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => ['item', 'entry', 'link', 'category', 'rdf:li'].includes(name),
});

/** Document type declarations are where entity-expansion attacks live; feeds need none. */
const DOCTYPE = /<!DOCTYPE[^[>]*(\[[\s\S]*?\])?\s*>/gi;
/** A bare `&` that starts no entity (seen in the SEC litigation feed) becomes `&amp;`. */
const STRAY_AMP = /&(?!(?:#\d{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});)/g;

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

export function parseXml(xml: string): { format: XmlFormat; entries: RawEntry[]; link?: string } {
  const cleaned = xml.replace(DOCTYPE, '').replace(STRAY_AMP, '&amp;');
  const valid = XMLValidator.validate(cleaned);
  if (valid !== true) throw new ParseError('malformed', `malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const doc = parser.parse(cleaned) as Node;
  if (doc.rss) return rss(doc.rss as Node);
  if (doc.feed) return atom(doc.feed as Node);
  if (doc['rdf:RDF']) return rdf(doc['rdf:RDF'] as Node);
  throw new ParseError('unsupported_format', `unknown XML root element <${Object.keys(doc).find((k) => !k.startsWith('?')) ?? '?'}>`);
}

function categories(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((c) => text(c) ?? ((c as Node)['@term'] as string | undefined) ?? '').filter(Boolean);
}

function rss(root: Node): { format: XmlFormat; entries: RawEntry[]; link?: string } {
  const channel = (root.channel ?? {}) as Node;
  const items = (channel.item ?? []) as Node[];
  const entries = items.map((item): RawEntry => {
    const guid = text(item.guid);
    return {
      id: guid,
      title: text(item.title),
      link: text(item.link) ?? ((item.link as Node[] | undefined)?.[0]?.['@href'] as string | undefined) ?? (guid?.startsWith('http') ? guid : undefined),
      date: text(item.pubDate) ?? text(item['dc:date']) ?? text(item.published) ?? text(item.updated),
      summary: text(item.description) ?? text(item['content:encoded']),
      categories: categories(item.category),
      announceType: text(item['arxiv:announce_type']),
    };
  });
  return { format: 'rss', entries, link: text(channel.link) };
}

function atomLink(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined;
  const alternate = links.find((l) => (l as Node)['@rel'] === undefined || (l as Node)['@rel'] === 'alternate') ?? links[0];
  return ((alternate as Node)?.['@href'] as string | undefined) ?? text(alternate);
}

function atom(root: Node): { format: XmlFormat; entries: RawEntry[]; link?: string } {
  const entries = ((root.entry ?? []) as Node[]).map(
    (entry): RawEntry => ({
      id: text(entry.id),
      title: text(entry.title),
      link: atomLink(entry.link),
      date: text(entry.published) ?? text(entry.updated),
      summary: text(entry.summary) ?? text(entry.content),
      categories: categories(entry.category),
    }),
  );
  return { format: 'atom', entries, link: atomLink(root.link) };
}

function rdf(root: Node): { format: XmlFormat; entries: RawEntry[]; link?: string } {
  const entries = ((root.item ?? []) as Node[]).map(
    (item): RawEntry => ({
      id: (item['@rdf:about'] as string | undefined) ?? text(item.link),
      title: text(item.title),
      link: text(item.link),
      date: text(item['dc:date']),
      summary: text(item.description),
    }),
  );
  return { format: 'rdf', entries, link: text((root.channel as Node | undefined)?.link) };
}
