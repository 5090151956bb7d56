/**
 * Every date format the sources use, to epoch milliseconds UTC: RFC 822 with numeric offsets
 * or named zones (and without seconds), ISO 8601 with or without a zone (none means UTC),
 * date-only `YYYY-MM-DD` and `YYYYMMDD`, `Month D, YYYY`, epoch milliseconds and seconds.
 */
export interface ParsedDate {
  ms: number;
  /** The source gave a day, not a time. */
  dateOnly: boolean;
}

const ZONES: Readonly<Record<string, string>> = {
  UT: '+0000', UTC: '+0000', GMT: '+0000', Z: '+0000',
  EST: '-0500', EDT: '-0400', CST: '-0600', CDT: '-0500', MST: '-0700', MDT: '-0600', PST: '-0800', PDT: '-0700',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const day = (y: number, m: number, d: number): ParsedDate | undefined => {
  const ms = Date.UTC(y, m, d);
  return m >= 0 && m < 12 && d >= 1 && d <= 31 && Number.isFinite(ms) ? { ms, dateOnly: true } : undefined;
};

export function parseDate(value: unknown): ParsedDate | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return { ms: value > 1e11 ? value : value * 1000, dateOnly: false }; // ms vs seconds
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  let m: RegExpExecArray | null;
  if (/^\d{10,13}$/.test(text)) return parseDate(Number(text));
  if ((m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text))) return day(+m[1]!, +m[2]! - 1, +m[3]!);
  if ((m = /^(\d{4})(\d{2})(\d{2})$/.exec(text))) return day(+m[1]!, +m[2]! - 1, +m[3]!);
  if ((m = /^([A-Za-z]{3})[a-z]*\.? (\d{1,2}),? (\d{4})$/.exec(text))) {
    return day(+m[3]!, MONTHS.indexOf(m[1]!.toLowerCase()), +m[2]!);
  }
  if ((m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/i.exec(text))) {
    let zone = m[3] ?? 'Z';
    if (/^[+-]\d{4}$/.test(zone)) zone = zone.slice(0, 3) + ':' + zone.slice(3);
    const ms = Date.parse(`${m[1]}T${m[2]}${zone.toUpperCase()}`);
    return Number.isNaN(ms) ? undefined : { ms, dateOnly: false };
  }
  // RFC 822 / 2822: map named zones to offsets, then let Date.parse read it.
  const rfc = text.replace(/\b(UTC?|GMT|Z|[ECMP][SD]T)$/i, (z) => ZONES[z.toUpperCase()] ?? z);
  if ((m = /^(?:[A-Za-z]{3},?\s+)?(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([+-]\d{4})?$/.exec(rfc))) {
    const month = MONTHS.indexOf(m[2]!.toLowerCase());
    if (month < 0) return undefined;
    let year = +m[3]!;
    if (year < 100) year += year < 50 ? 2000 : 1900;
    const offset = m[7] ?? '+0000';
    const sign = offset[0] === '-' ? -1 : 1;
    const offMin = sign * (+offset.slice(1, 3) * 60 + +offset.slice(3, 5));
    const ms = Date.UTC(year, month, +m[1]!, +m[4]!, +m[5]!, +(m[6] ?? 0)) - offMin * 60_000;
    return Number.isFinite(ms) ? { ms, dateOnly: false } : undefined;
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : { ms, dateOnly: false };
}
