/** What every format reader produces before normalisation: the source's own field values. */
export interface RawEntry {
  id?: string;
  /** HTML, unless `plainTitle`. */
  title?: string;
  /** As the document gives it: absolute, or relative to `base`. */
  link?: string;
  /**
   * The absolute base URL of this entry's link when the entry (or the link element) declares
   * its own `xml:base`; otherwise the document's base applies.
   */
  base?: string;
  date?: unknown;
  /** HTML, unless `plainSummary`. */
  summary?: string;
  /** The title is plain text (an Atom `type="text"` construct): markup-looking text in it is kept as text. */
  plainTitle?: boolean;
  plainSummary?: boolean;
  categories?: string[];
  /** Two-letter state code (contract awards). */
  state?: string;
  /** arXiv announce type (new, cross, replace, replace-cross). */
  announceType?: string;
  /** The item's authors as written: RSS/RDF `dc:creator`, RSS `<author>`, Atom `<author><name>`. */
  authors?: string[];
  /** RSS elements of a few sources' own: arXiv's `arxiv:DOI` and `arxiv:journal_reference`, We Work Remotely's `<region>` and `<type>`. */
  doi?: string;
  journalRef?: string;
  region?: string;
  jobType?: string;
  /** Set by a JSON mapping for a row its source does not serve: why. */
  dropped?: string;
  /** The filter value of a source that routes its entries (EDGAR's forms). */
  filter?: string;
  /** The wire's structured fields this entry states (see data.ts: empty values are dropped there). */
  data?: Record<string, unknown>;
}

export type ParseErrorCode = 'malformed' | 'unsupported_format' | 'empty_body' | 'wrong_shape';

export class ParseError extends Error {
  override name = 'ParseError';
  constructor(
    readonly code: ParseErrorCode,
    message: string,
  ) {
    super(message);
  }
}
