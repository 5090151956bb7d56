/**
 * Every date format the sources use, to epoch milliseconds UTC: RFC 822/1123/2822 (and
 * RFC 850's dashes) with numeric offsets, named zones or IANA zone names (OilPrice writes
 * `Tue, 15 Sep 2026 16:01:48 America/Chicago`), with or without the day name, the
 * seconds or a 4-digit year; ISO 8601 with or without a fraction or a zone (none means UTC);
 * date-only `YYYY-MM-DD`, `YYYYMMDD`, `D Mon YYYY` and `Month D, YYYY`; epoch milliseconds
 * and seconds. Out-of-range fields are refused, not rolled over.
 */
export interface ParsedDate {
  ms: number;
  /** The source gave a day, not a time. */
  dateOnly: boolean;
}

/** Named zones, in minutes east of UTC. Ambiguous abbreviations (IST, CST in Asia) take the North American / common reading or are left out. */
export const NAMED_ZONES: Readonly<Record<string, number>> = {
  UT: 0,
  UTC: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  BST: 60,
  CET: 60,
  CEST: 120,
  WEST: 60,
  EET: 120,
  EEST: 180,
  MSK: 180,
  SGT: 480,
  HKT: 480,
  AWST: 480,
  JST: 540,
  KST: 540,
  ACST: 570,
  AEST: 600,
  AEDT: 660,
  NZST: 720,
  NZDT: 780,
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Whether day `d` exists in month `m` (0-based) of year `y`: 30 February is refused, not rolled over into March. */
const dayExists = (y: number, m: number, d: number): boolean => m >= 0 && m < 12 && d >= 1 && d <= (m === 1 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : MONTH_DAYS[m]!);

const day = (y: number, m: number, d: number): ParsedDate | undefined => {
  const ms = Date.UTC(y, m, d);
  return dayExists(y, m, d) && Number.isFinite(ms) ? { ms, dateOnly: true } : undefined;
};

const RFC822 =
  /^(?:[A-Za-z]{2,9}\.?,?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3})[a-z]*\.?[\s-]+(\d{2}|\d{4})[\sT]+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([A-Za-z]{1,5}(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2}|[A-Za-z]+(?:\/[A-Za-z0-9_+-]+){1,2})?$/;
const RFC822_DAY = /^(?:[A-Za-z]{2,9}\.?,?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3})[a-z]*\.?[\s-]+(\d{2}|\d{4})$/;

const OFFSET = /^(?:GMT|UTC?)?([+-])(\d{1,2})(?::?(\d{2}))?$/i;

/** Minutes east of UTC of an RFC 822 zone: `+0530`, `-05:00`, `GMT+1`, `EST`; none is UTC; unknown is undefined. */
function zoneOffset(zone: string | undefined): number | undefined {
  if (zone === undefined) return 0;
  const m = OFFSET.exec(zone);
  if (!m) return NAMED_ZONES[zone.toUpperCase()];
  const hours = +m[2]!;
  const minutes = +(m[3] ?? 0);
  if (hours > 14 || minutes > 59) return undefined;
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Formatters of IANA zones by name, made once each: making one costs far more than using it.
 * A name the runtime does not know is remembered as null. Bounded, since names come from feeds.
 */
const ZONE_FORMATS = new Map<string, Intl.DateTimeFormat | null>();
const MAX_ZONE_FORMATS = 64;

function zoneFormat(name: string): Intl.DateTimeFormat | undefined {
  let format = ZONE_FORMATS.get(name);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: name,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      format = null;
    }
    if (ZONE_FORMATS.size < MAX_ZONE_FORMATS) ZONE_FORMATS.set(name, format);
  }
  return format ?? undefined;
}

/** Minutes east of UTC in the zone of `format` at the instant `ms`. */
function offsetAt(format: Intl.DateTimeFormat, ms: number): number {
  const f: Record<string, number> = {};
  for (const part of format.formatToParts(ms)) if (part.type !== 'literal') f[part.type] = +part.value;
  return Math.round((Date.UTC(f.year!, f.month! - 1, f.day!, f.hour!, f.minute!, f.second!) - ms) / 60_000);
}

/** Minutes east of UTC in IANA zone `name` at the instant `ms` (the demo's fixtures write such dates). */
export function zoneOffsetAt(name: string, ms: number): number {
  const format = zoneFormat(name);
  if (!format) throw new RangeError(`unknown time zone ${name}`);
  return offsetAt(format, ms);
}

/**
 * The instant of wall-clock time `wall` (its fields read as UTC) in an IANA zone. The offset
 * is taken at a first guess and again at the result, so a time just after a daylight-saving
 * change gets the offset in force then.
 */
function inZone(wall: number, format: Intl.DateTimeFormat): number {
  const guess = wall - offsetAt(format, wall) * 60_000;
  return wall - offsetAt(format, guess) * 60_000;
}

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
  if ((m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?) ?(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(text))) {
    let zone = m[3] ?? 'Z';
    if (/^[+-]\d{4}$/.test(zone)) zone = zone.slice(0, 3) + ':' + zone.slice(3);
    else if (/^[+-]\d{2}$/.test(zone)) zone += ':00';
    const time = m[2]!.includes(',') ? m[2]!.replace(',', '.') : m[2]!;
    const ms = Date.parse(`${m[1]}T${time}${zone.toUpperCase()}`);
    return Number.isNaN(ms) ? undefined : { ms, dateOnly: false };
  }
  // RFC 822 / 1123 / 2822 / 850: optional day name, D Mon YY(YY), time with or without seconds, zone.
  if ((m = RFC822.exec(text))) {
    const month = MONTHS.indexOf(m[2]!.toLowerCase());
    const iana = m[7]?.includes('/') ? zoneFormat(m[7]) : undefined;
    const offMin = iana ? 0 : zoneOffset(m[7]);
    if (offMin === undefined) return undefined;
    let year = +m[3]!;
    if (year < 100) year += year < 50 ? 2000 : 1900;
    const d = +m[1]!;
    const h = +m[4]!;
    const min = +m[5]!;
    const sec = +(m[6] ?? 0);
    if (!dayExists(year, month, d) || h > 23 || min > 59 || sec > 60) return undefined;
    // A leap second (:60) is read as :59.
    const wall = Date.UTC(year, month, d, h, min, Math.min(sec, 59));
    const ms = iana ? inZone(wall, iana) : wall - offMin * 60_000;
    return Number.isFinite(ms) ? { ms, dateOnly: false } : undefined;
  }
  if ((m = RFC822_DAY.exec(text))) {
    let year = +m[3]!;
    if (year < 100) year += year < 50 ? 2000 : 1900;
    return day(year, MONTHS.indexOf(m[2]!.toLowerCase()), +m[1]!);
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : { ms, dateOnly: false };
}
