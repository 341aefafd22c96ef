import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Knex } from 'knex';

const WINDOW_SECONDS = 60;

/**
 * Sign-in attempts are counted per account and per client address in PostgreSQL, so every
 * instance sees the same counters. An attempt takes its point before the password is checked,
 * in one atomic upsert per counter, so a parallel burst cannot slip past a check-then-record
 * gap: at most `maxFailures` attempts a minute reach the password check. A success gives the
 * point back: it clears the account's counter and returns the address's point.
 */
export function loginLimiter(db: Knex, maxFailures: number) {
  const make = (keyPrefix: string) =>
    new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'rate_limits',
      tableCreated: true,
      keyPrefix,
      points: maxFailures,
      duration: WINDOW_SECONDS,
    });
  const byAccount = make('login_account');
  const byAddress = make('login_ip');
  const accountKey = (email: string) => email.trim().toLowerCase();

  return {
    /**
     * Takes one point from the account's and the address's counters. wait: 0 when the attempt
     * may go on; otherwise the seconds to wait (either counter exhausted). firstRefusal: this is
     * the first attempt a counter refuses in its window (later ones in the window are not).
     */
    async take(email: string, ip: string): Promise<{ wait: number; firstRefusal: boolean }> {
      const results = await Promise.allSettled([byAccount.consume(accountKey(email)), byAddress.consume(ip)]);
      const waits: number[] = [];
      let firstRefusal = false;
      for (const result of results) {
        if (result.status === 'fulfilled') continue;
        // consume() rejects with a RateLimiterRes when the points are spent, with an Error when the store fails.
        if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
        waits.push(Math.ceil(result.reason.msBeforeNext / 1000));
        // a refused attempt still counts, so the first refusal is the one just past the limit
        if (result.reason.consumedPoints === maxFailures + 1) firstRefusal = true;
      }
      return { wait: waits.length === 0 ? 0 : Math.max(1, ...waits), firstRefusal };
    },
    /** The attempt succeeded: the account starts afresh and the address gets its point back. */
    async giveBack(email: string, ip: string): Promise<void> {
      await Promise.all([byAccount.delete(accountKey(email)), byAddress.reward(ip, 1)]);
    },
  };
}
