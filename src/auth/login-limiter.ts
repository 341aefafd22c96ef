import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Knex } from 'knex';
import type { LoginLimits } from '../config';
import { rateLimitCounter } from './rate-limits';

const WINDOW_SECONDS = 15 * 60;
const DAY_SECONDS = 24 * 60 * 60;
/** how long an address that signed in to an account stays one it may try from past the daily ceiling */
const KNOWN_ADDRESS_SECONDS = 30 * DAY_SECONDS;
const MAX_DELAY_MS = 5000;
/** consecutive failures an account takes before its answers start to wait */
const FREE_FAILURES = 3;

/** How long the answer to an attempt waits after `consecutiveFailures` failures of its account: min(2^(n-3) x base, 5 s). */
export function signInDelayMs(consecutiveFailures: number, baseMs: number): number {
  if (consecutiveFailures < FREE_FAILURES || baseMs === 0) return 0;
  return Math.min(baseMs * 2 ** (consecutiveFailures - FREE_FAILURES), MAX_DELAY_MS);
}

/** An attempt the limits let through, with how long its answer must wait; or one they refuse. */
export type LoginAdmission =
  { admitted: true; delayMs: number } | { admitted: false; retryAfterSeconds: number; firstRefusal: boolean };

/**
 * Password sign-in limits (OWASP ASVS 2.2.1), counted in PostgreSQL so every instance sees the
 * same counters:
 * - per account and address together (10 failures in 15 minutes): an attacker's failures block
 *   their own pair, never the owner signing in from elsewhere;
 * - per address, whatever the account (100 in 15 minutes), against one address trying many accounts;
 * - per account from all addresses (100 a day): past it only an address the account signed in
 *   from in the last 30 days may still try, so a botnet gets at most the ceiling's guesses a day
 *   while the owner, from their usual places, is not locked out;
 * - consecutive failures of an account delay the next answers (signInDelayMs).
 * An attempt takes its points before the password is checked, in one atomic upsert per counter,
 * so a parallel burst cannot slip past a check-then-record gap; a success gives them back.
 */
export function loginLimiter(db: Knex, limits: LoginLimits) {
  const make = (keyPrefix: string, points: number, durationSeconds: number) =>
    rateLimitCounter(db, keyPrefix, points, durationSeconds);
  const byPair = make('login_pair', limits.perAccountAndAddress, WINDOW_SECONDS);
  const byAddress = make('login_ip', limits.perAddress, WINDOW_SECONDS);
  const byAccountDaily = make('login_account_day', limits.perAccountDaily, DAY_SECONDS);
  // counts attempts since the account's last success; never refuses by itself
  const streak = make('login_streak', Number.MAX_SAFE_INTEGER, DAY_SECONDS);
  const knownAddresses = make('login_known', 1, KNOWN_ADDRESS_SECONDS);
  const accountKey = (email: string) => email.trim().toLowerCase();
  // a space cannot appear in an unquoted email address or in an IP address
  const pairKey = (email: string, ip: string) => `${accountKey(email)} ${ip}`;

  /** A counter's refusal: seconds to wait, and whether it is the first attempt past `limit` in its window. */
  const refusal = (rejection: unknown, limit: number) => {
    // consume() rejects with a RateLimiterRes when the points are spent, with an Error when the store fails.
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    // a refused attempt still counts, so the first refusal is the one just past the limit
    return {
      seconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
      first: rejection.consumedPoints === limit + 1,
    };
  };

  return {
    async admit(email: string, ip: string): Promise<LoginAdmission> {
      const [pair, address] = await Promise.allSettled([byPair.consume(pairKey(email, ip)), byAddress.consume(ip)]);
      const refusals = [
        ...(pair.status === 'rejected' ? [refusal(pair.reason, limits.perAccountAndAddress)] : []),
        ...(address.status === 'rejected' ? [refusal(address.reason, limits.perAddress)] : []),
      ];
      if (refusals.length > 0) {
        return {
          admitted: false,
          retryAfterSeconds: Math.max(...refusals.map((r) => r.seconds)),
          firstRefusal: refusals.some((r) => r.first),
        };
      }
      try {
        await byAccountDaily.consume(accountKey(email));
      } catch (rejection) {
        const daily = refusal(rejection, limits.perAccountDaily);
        if ((await knownAddresses.get(pairKey(email, ip))) === null)
          return { admitted: false, retryAfterSeconds: daily.seconds, firstRefusal: daily.first };
      }
      const attempts = await streak.consume(accountKey(email));
      return { admitted: true, delayMs: signInDelayMs(attempts.consumedPoints - 1, limits.delayBaseMs) };
    },

    /** The attempt succeeded: the pair and the streak start afresh, the address and the day get their points back, and the address is known. */
    async giveBack(email: string, ip: string): Promise<void> {
      await Promise.all([
        byPair.delete(pairKey(email, ip)),
        streak.delete(accountKey(email)),
        byAddress.reward(ip, 1),
        byAccountDaily.reward(accountKey(email), 1),
        knownAddresses.set(pairKey(email, ip), 1, KNOWN_ADDRESS_SECONDS),
      ]);
    },
  };
}
