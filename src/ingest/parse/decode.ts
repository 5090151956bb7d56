/**
 * Bytes → text in the document's own encoding: a byte-order mark first, then the XML
 * declaration's encoding (EDGAR declares ISO-8859-1), then the Content-Type charset, then
 * UTF-8. AWS's health JSON is UTF-16 with a BOM.
 */
export function decodeBody(body: Uint8Array, contentType: string | undefined): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return decode(body.subarray(3), 'utf-8');
  if (body[0] === 0xff && body[1] === 0xfe) return decode(body.subarray(2), 'utf-16le');
  if (body[0] === 0xfe && body[1] === 0xff) return decode(body.subarray(2), 'utf-16be');
  const head = Buffer.from(body.subarray(0, 256)).toString('latin1');
  const declared = /^\s*<\?xml[^>]*encoding=["']([\w.:-]+)["']/i.exec(head)?.[1];
  const charset = declared ?? /charset=["']?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  return decode(body, charset);
}

function decode(bytes: Uint8Array, label: string): string {
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // unknown label
  }
}
