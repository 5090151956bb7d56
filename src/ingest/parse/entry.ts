/** What every format reader produces before normalisation: the source's own field values. */
export interface RawEntry {
  id?: string;
  title?: string;
  link?: string;
  date?: unknown;
  /** Text or HTML. */
  summary?: string;
  categories?: string[];
  /** Two-letter state code (contract awards). */
  state?: string;
  /** arXiv announce type (new, cross, replace, replace-cross). */
  announceType?: string;
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
