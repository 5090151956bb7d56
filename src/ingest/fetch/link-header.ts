/**
 * `<uri>; rel="a b", <uri>; rel=c` (RFC 8288): each target with its relation types; other
 * parameters ignored. A module of its own: WebSub reads it on the serving thread, which loads
 * the HTTP client (undici) only once it sends a request.
 */
export function parseLinkHeader(value: string): { href: string; rels: string[] }[] {
  const out: { href: string; rels: string[] }[] = [];
  const LINK = /<([^>]*)>\s*((?:;\s*[^;,<]*)*)/g;
  for (let m: RegExpExecArray | null; (m = LINK.exec(value)); ) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(m[2]!);
    if (rel) out.push({ href: m[1]!.trim(), rels: (rel[1] ?? rel[2]!).toLowerCase().split(/\s+/).filter(Boolean) });
  }
  return out;
}
