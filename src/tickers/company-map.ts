/**
 * SEC's map of listed companies (`company_tickers_exchange.json`: CIK, name, ticker and
 * exchange of about 10,000 listings, regenerated daily), read into the lookups the parsers and
 * `/tickers` use. A company with several listed share classes has several rows; its first row
 * is the ticker SEC lists first.
 */

export interface Listing {
  /** 10 digits, as EDGAR writes a CIK. */
  cik: string;
  name: string;
  ticker: string;
  /** `Nasdaq`, `NYSE`, `OTC`, `CBOE`, or null where SEC gives none. */
  exchange: string | null;
}

export class CompanyMapError extends Error {
  override name = 'CompanyMapError';
}

/** Fewer rows than this is not the map SEC publishes (a truncated or wrong document). */
export const MIN_LISTINGS = 1000;

export class CompanyMap {
  private readonly cik = new Map<string, Listing[]>();
  private readonly ticker = new Map<string, Listing>();

  private constructor(readonly listings: readonly Listing[]) {
    for (const l of listings) {
      const rows = this.cik.get(l.cik);
      if (rows) rows.push(l);
      else this.cik.set(l.cik, [l]);
      if (!this.ticker.has(l.ticker)) this.ticker.set(l.ticker, l);
    }
  }

  /** Reads SEC's document; a wrong shape or too few rows is a CompanyMapError. */
  static parse(text: string): CompanyMap {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new CompanyMapError(`not JSON: ${(err as Error).message}`);
    }
    const fields = (doc as { fields?: unknown })?.fields;
    const data = (doc as { data?: unknown })?.data;
    if (!Array.isArray(fields) || !Array.isArray(data)) throw new CompanyMapError('no "fields" and "data" arrays');
    const at = (name: string) => fields.indexOf(name);
    const [c, n, t, e] = [at('cik'), at('name'), at('ticker'), at('exchange')];
    if (c < 0 || n < 0 || t < 0) throw new CompanyMapError(`fields ${JSON.stringify(fields).slice(0, 100)} lack cik, name or ticker`);
    const listings: Listing[] = [];
    for (const row of data) {
      if (!Array.isArray(row)) continue;
      const cik = row[c];
      const name = row[n];
      const ticker = row[t];
      if (!Number.isSafeInteger(cik) || (cik as number) <= 0 || typeof name !== 'string' || typeof ticker !== 'string' || !/^[A-Z0-9][A-Z0-9.-]{0,9}$/.test(ticker)) continue;
      const exchange = e >= 0 && typeof row[e] === 'string' ? (row[e] as string) : null;
      listings.push({ cik: String(cik).padStart(10, '0'), name: name.trim(), ticker, exchange });
    }
    if (listings.length < MIN_LISTINGS) throw new CompanyMapError(`${listings.length} listings, fewer than ${MIN_LISTINGS}`);
    return new CompanyMap(listings);
  }

  /** A company's listings by its CIK (10 digits, or without the leading zeros), first-listed first. */
  byCik(cik: string): readonly Listing[] {
    return this.cik.get(cik.padStart(10, '0')) ?? [];
  }

  /** The listing of a ticker (case-insensitive). */
  byTicker(ticker: string): Listing | undefined {
    return this.ticker.get(ticker.toUpperCase());
  }

  get size(): number {
    return this.listings.length;
  }
}
