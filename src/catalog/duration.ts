/** `since` / retention strings: an integer followed by m, h or d (spec 4.1). */
export const DURATION_PATTERN = '^\\d+(m|h|d)$';
const DURATION_RE = new RegExp(DURATION_PATTERN);
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration string, or undefined when it does not match the pattern. */
export function durationMs(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  const unit = text[text.length - 1] as keyof typeof UNIT_MS;
  // Digits only, so parseInt is exact; Number.isSafeInteger guards absurd lengths.
  const n = Number.parseInt(text.slice(0, -1), 10);
  return Number.isSafeInteger(n) ? n * UNIT_MS[unit] : Number.POSITIVE_INFINITY;
}
