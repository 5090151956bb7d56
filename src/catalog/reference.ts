/**
 * Reference data the parsers read beside the wires' sources: polled like a source (its host's
 * request budget, WIRES_SOURCES overrides by id), but it feeds no wire.
 */

export const TICKER_MAP = {
  id: 'sec-tickers',
  name: 'SEC company tickers',
  url: 'https://www.sec.gov/files/company_tickers_exchange.json',
  intervalSec: 86_400,
  why: 'SEC regenerates the map of listed companies (CIK, name, ticker, exchange) once a day',
} as const;
