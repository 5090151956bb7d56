/**
 * Two clocks. `Date.now()` is the wall clock: it dates items, offers and authorizations,
 * which the publishers and the chain date the same way, and it may step (NTP, an operator).
 * `steadyNow()` never steps: the wall clock at process start plus monotonic time since. Every
 * duration and schedule runs on it (polling, back-off, paid stream time, failed-payment
 * budgets, cached balances, WebSub leases), so a step of the wall clock neither stops polling
 * nor ends, or extends, paid time.
 */
export const steadyNow = (): number => performance.timeOrigin + performance.now();

/**
 * Wall minus steady time. Held while the two clocks agree to within a second, so one instant
 * always shows as the same date (two messages naming one paid end name the same millisecond);
 * taken again when the wall clock steps.
 */
let offset = Date.now() - steadyNow();

function heldOffset(): number {
  const current = Date.now() - steadyNow();
  if (Math.abs(current - offset) > 1000) offset = current;
  return offset;
}

/** A steady-clock instant as a wall-clock date, for display (`paid_until`, `last_poll`). */
export function wallOf(steadyMs: number): number {
  return Math.round(steadyMs + heldOffset());
}

/** The steady-clock instant a wall-clock date names (one another replica sent): `wallOf` of it gives the date back. */
export function steadyOf(wallMs: number): number {
  return wallMs - heldOffset();
}
