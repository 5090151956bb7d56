/** Polls `fn` until it returns something truthy (a thrown error counts as not yet), or fails after `ms`. */
export async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
