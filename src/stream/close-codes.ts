/**
 * The WebSocket close codes of /stream (4000–4999 are the application's), in a module of its
 * own so the client kit reads the same table the server closes with.
 */
export const CLOSE = {
  going_away: [1001, 'server shutting down'],
  payment_expired: [4402, 'paid time ended; pay the next block before it ends to keep the stream'],
  not_paid: [4401, 'not paid within 30 s of opening (pay=message)'],
  too_slow: [4008, 'too slow: more than 1 MiB of pushed items unread'],
} as const satisfies Record<string, readonly [number, string]>;

/** Close code → its name (`payment_expired`, …). */
export const CLOSE_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(CLOSE).map(([name, [code]]) => [code, name]));
