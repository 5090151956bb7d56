/**
 * The parameters of `/tickers` (a company's ticker and CIK from SEC's map), as its parser
 * (tickers/lookup.ts), the MCP tools and OpenAPI describe them. Plain data, so the client
 * package can carry it.
 */
import { CIK_PATTERN, TICKER_PATTERN } from './facets.js';

export const LOOKUP_LIMIT = { default: 10, max: 50 } as const;
export const LOOKUP_Q_MAX = 100;

export const LOOKUP_PARAM_DOCS = [
  { name: 'q', description: "Words of the company's name, the last one a prefix (nvid finds NVIDIA).", schema: { type: 'string', minLength: 1, maxLength: LOOKUP_Q_MAX } },
  { name: 'cik', description: 'A CIK, 1 to 10 digits.', schema: { type: 'string', pattern: CIK_PATTERN.source } },
  { name: 'ticker', description: 'A ticker, any case.', schema: { type: 'string', pattern: TICKER_PATTERN.source } },
  { name: 'limit', description: `Companies returned for q, 1 to ${LOOKUP_LIMIT.max}.`, schema: { type: 'integer', minimum: 1, maximum: LOOKUP_LIMIT.max, default: LOOKUP_LIMIT.default } },
] as const;

export const LOOKUP_PARAMS: readonly string[] = LOOKUP_PARAM_DOCS.map((p) => p.name);
