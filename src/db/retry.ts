import type { Knex } from 'knex';
import { isDbTransaction, type Db } from './knex';

/**
 * PostgreSQL's answers that mean "another transaction was in the way", not "this request is
 * wrong": deadlock detected, serialization failure, lock not available (lock_timeout). The
 * transaction was rolled back whole, so running it again from the start is safe.
 * A statement timeout (57014) is not retried: a statement that ran for the whole timeout would
 * most likely do it again, and the client would wait three times as long for the same 503.
 */
export const RETRYABLE_PG_CODES = new Set(['40P01', '40001', '55P03']);
/** What the error middleware answers 503 "busy" (Retry-After: 1) for: the retryable codes and a statement timeout. */
export const BUSY_PG_CODES = new Set([...RETRYABLE_PG_CODES, '57014']);

export const isRetryableDbError = (err: unknown) =>
  RETRYABLE_PG_CODES.has((err as { code?: string } | null)?.code ?? '');

export type RetryOptions = { attempts?: number; baseDelayMs?: number };
export const DEFAULT_ATTEMPTS = 3;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` in a transaction and, when PostgreSQL rolls it back for a deadlock, a serialization
 * failure or a lock timeout, runs the whole of it again in a new transaction: at most `attempts`
 * times in all (3), after a short jittered pause (50 ms, then 100 ms, each plus up to 50 ms at
 * random, so two transactions that collided do not collide again in step). The last error is
 * thrown as it is (the error middleware answers it 503). `work` must do everything it writes
 * through `trx` and nothing outside it, since everything but the transaction is repeated.
 *
 * When `db` already is a transaction, `work` runs in it once: a part of a transaction cannot be
 * retried on its own (PostgreSQL has aborted the whole), so the error goes up to whoever opened it.
 */
export async function inTransactionWithRetry<T>(
  db: Db,
  work: (trx: Knex.Transaction) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  if (isDbTransaction(db)) return work(db);
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const base = options.baseDelayMs ?? 50;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction(work);
    } catch (err) {
      if (!isRetryableDbError(err) || attempt >= attempts) throw err;
      await pause(base * 2 ** (attempt - 1) + Math.random() * base);
    }
  }
}
