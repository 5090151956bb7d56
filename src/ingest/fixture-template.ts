/**
 * Recorded-format fixtures carry their dates as placeholders relative to a chosen "now", so
 * the offline demo and the tests always see fresh items:
 *
 *   {{-5m:rfc822}}   five minutes ago as `Wed, 29 Jan 2025 23:39:41 GMT`
 *
 * Offset: `0` or `-N` with unit m, h or d. Formats: rfc822 (GMT), rfc822z (UTC written `Z`),
 * rfc822chicago (Chicago time named `America/Chicago`, as OilPrice writes), rfc822num (-0500 offset),
 * rfc822est (named zone EST), rfc822nosec (EDT, no seconds), iso, isooffset (-05:00),
 * isolocal (no zone), date (YYYY-MM-DD), yyyymmdd, monthday (`January 29, 2025`), monthday0
 * (`January 09, 2025`, as CPSC writes), isopacificday (that day in Pacific time, at midnight:
 * `2025-01-29T00:00:00-08:00`, as CourtListener dates opinions), epochms,
 * epochs.
 *
 * `{{source}}` becomes the id of the source being played, so sources that share a fixture file
 * still publish distinct items (ids and links), as real sources do.
 *
 * Rendering works on a latin1 view of the bytes, so a fixture in any ASCII-compatible
 * encoding (EDGAR's ISO-8859-1) passes through unchanged apart from the placeholders.
 */
const PLACEHOLDER = /\{\{(0|-\d+[mhd]):([a-z0-9]+)\}\}/g;
const UNIT = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
import { zoneOffsetAt } from './parse/dates.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const pad = (n: number) => String(n).padStart(2, '0');

/** RFC 822 in a fixed-offset zone, e.g. -300 minutes for EST. */
function rfc822(ms: number, offsetMin: number, zone: string, seconds = true): string {
  const d = new Date(ms + offsetMin * 60_000);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${seconds ? ':' + pad(d.getUTCSeconds()) : ''}`;
  return `${DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]!.slice(0, 3)} ${d.getUTCFullYear()} ${time} ${zone}`;
}

export function formatDate(ms: number, format: string): string {
  const iso = new Date(ms).toISOString();
  switch (format) {
    case 'rfc822':
      return new Date(ms).toUTCString();
    case 'rfc822z':
      return new Date(ms).toUTCString().replace(/GMT$/, 'Z');
    case 'rfc822chicago':
      return rfc822(ms, zoneOffsetAt('America/Chicago', ms), 'America/Chicago');
    case 'rfc822num':
      return rfc822(ms, -300, '-0500');
    case 'rfc822est':
      return rfc822(ms, -300, 'EST');
    case 'rfc822nosec':
      return rfc822(ms, -240, 'EDT', false);
    case 'iso':
      return iso;
    case 'isooffset':
      return new Date(ms - 300 * 60_000).toISOString().slice(0, 19) + '-05:00';
    case 'isolocal':
      return iso.slice(0, 19);
    case 'date':
      return iso.slice(0, 10);
    case 'yyyymmdd':
      return iso.slice(0, 10).replaceAll('-', '');
    case 'monthday': {
      const d = new Date(ms);
      return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
    }
    case 'monthday0': {
      const d = new Date(ms);
      return `${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())}, ${d.getUTCFullYear()}`;
    }
    case 'isopacificday': {
      // Midnight of that Pacific day is never after `ms`, so the date is never in the future.
      const day = new Date(ms + zoneOffsetAt('America/Los_Angeles', ms) * 60_000).toISOString().slice(0, 10);
      const midnight = Date.parse(`${day}T00:00:00Z`);
      // The offset in force at that midnight: taken at a guess, then at the guessed instant.
      const offset = zoneOffsetAt('America/Los_Angeles', midnight - zoneOffsetAt('America/Los_Angeles', midnight) * 60_000);
      const sign = offset < 0 ? '-' : '+';
      return `${day}T00:00:00${sign}${pad(Math.abs(offset) / 60)}:${pad(Math.abs(offset) % 60)}`;
    }
    case 'epochms':
      return String(ms);
    case 'epochs':
      return String(Math.floor(ms / 1000));
    default:
      throw new Error(`unknown fixture date format ${format}`);
  }
}

export function renderFixture(bytes: Uint8Array, now: number, source = ''): Uint8Array {
  const text = Buffer.from(bytes).toString('latin1').replaceAll('{{source}}', source);
  const rendered = text.replace(PLACEHOLDER, (_, offset: string, format: string) => {
    const ms = offset === '0' ? now : now - Number(offset.slice(1, -1)) * UNIT[offset.slice(-1) as keyof typeof UNIT];
    return formatDate(ms, format);
  });
  return Buffer.from(rendered, 'latin1');
}
