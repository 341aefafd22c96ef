import { RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Knex } from 'knex';

const WINDOW_SECONDS = 60;

/**
 * Failed sign-ins are counted per account and per client address in PostgreSQL, so every
 * instance sees the same counters. Success clears the account's counter.
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
    /** Seconds to wait when either counter is exhausted, else 0. */
    async retryAfter(email: string, ip: string): Promise<number> {
      const [account, address] = await Promise.all([byAccount.get(accountKey(email)), byAddress.get(ip)]);
      const blocked = [account, address].filter((r) => r !== null && r.consumedPoints >= maxFailures);
      return blocked.length === 0 ? 0 : Math.max(1, ...blocked.map((r) => Math.ceil(r!.msBeforeNext / 1000)));
    },
    async recordFailure(email: string, ip: string): Promise<void> {
      // consume() rejects once the points are spent; the counter is still incremented.
      await Promise.allSettled([byAccount.consume(accountKey(email)), byAddress.consume(ip)]);
    },
    async recordSuccess(email: string): Promise<void> {
      await byAccount.delete(accountKey(email));
    },
  };
}
