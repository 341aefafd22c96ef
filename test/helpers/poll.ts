/** Polls `read` until `done` holds or `ms` pass; answers the last value read (the caller's expectation then says what is wrong). */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Polls `probe` until it answers something other than undefined; a probe that throws has not
 * answered yet (a server restarting, a replica not yet promoted). After `ms` it throws, naming
 * `what` and the probe's last error.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { ms = 90_000, everyMs = 250 }: { ms?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    const found = await probe().catch((err: unknown) => {
      lastError = err;
      return undefined;
    });
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last: ${lastError.message})` : '';
      throw new Error(`timed out after ${ms / 1000} s waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
