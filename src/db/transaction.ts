import type { Knex } from 'knex';
import { transactionTimeouts, type Db } from './knex';

/**
 * PostgreSQL's answers that mean "another transaction was in the way", not "this request is
 * wrong": deadlock detected, serialization failure, lock not available (lock_timeout). The
 * transaction was rolled back whole, so running it again from the start is safe.
 * A statement timeout (57014) is not retried: a statement that ran for the whole timeout would
 * most likely do it again, and the client would wait three times as long for the same 503.
 */
const RETRYABLE_PG_CODES = new Set(['40P01', '40001', '55P03']);
/** What the error middleware answers 503 "busy" (Retry-After: 1) for: the retryable codes and a statement timeout. */
export const BUSY_PG_CODES = new Set([...RETRYABLE_PG_CODES, '57014']);

const ATTEMPTS = 3;
const BASE_DELAY_MS = 50;

const RETRYABLE = Symbol('retryable');

/**
 * Marks an error the work throws on finding that a transaction which committed meanwhile changed
 * what its statement read (the serialization failure PostgreSQL does not see at READ COMMITTED):
 * under `retry` the transaction runs again as after a deadlock, and once the attempts are spent
 * this error reaches the caller as it is.
 */
export function retryable<E extends Error>(err: E): E {
  return Object.assign(err, { [RETRYABLE]: true });
}

const isRetryable = (err: unknown) =>
  RETRYABLE_PG_CODES.has((err as { code?: string } | null)?.code ?? '') ||
  (err as { [RETRYABLE]?: boolean } | null)?.[RETRYABLE] === true;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const isDbTransaction = (db: Db): db is Knex.Transaction => 'isTransaction' in db && db.isTransaction === true;

type Work<T> = (trx: Knex.Transaction) => Promise<T>;

/** Writes what the work says it changed, in its transaction: the audit trail plugs in here (db/ knows no module). */
export type ChangeRecorder<Entry> = (trx: Knex.Transaction, entry: Entry) => Promise<void>;

export type TransactionOptions = {
  /**
   * When PostgreSQL rolls the transaction back for a deadlock, a serialization failure or a lock
   * timeout (or the work throws a `retryable` error), run the whole of it again in a new
   * transaction: at most 3 times in all, after a short jittered pause (50 ms, then 100 ms, each
   * plus up to 50 ms at random, so two transactions that collided do not collide again in step).
   * The last error is thrown as it is (the error middleware answers a database one 503). The work
   * must do everything it writes through `trx` and nothing outside it, since all but the
   * transaction is repeated.
   */
  retry?: boolean;
  isolationLevel?: Knex.IsolationLevels;
  /** Nothing the work writes is kept: its transaction (a savepoint inside the caller's) is rolled back at the end. */
  rollBack?: boolean;
};

/**
 * The one way to open a transaction. `work` runs in a new transaction, or in the caller's when
 * `db` already is one: there it runs once with the caller's isolation, since a part of a
 * transaction cannot be retried on its own (PostgreSQL has aborted the whole), so the error goes
 * up to whoever opened it. With `audit`, the work also says what it changed (`audit` null when
 * nothing, e.g. an idempotent repeat), and the recorder writes that in the same transaction, so
 * the change and its record commit or roll back together.
 */
export function transaction<T, Entry>(
  db: Db,
  options: TransactionOptions & { audit: ChangeRecorder<Entry> },
  work: Work<{ result: T; audit: NoInfer<Entry> | null }>,
): Promise<T>;
export function transaction<T>(db: Db, options: TransactionOptions, work: Work<T>): Promise<T>;
export function transaction<T>(db: Db, work: Work<T>): Promise<T>;
export async function transaction(
  db: Db,
  optionsOrWork: (TransactionOptions & { audit?: ChangeRecorder<unknown> }) | Work<unknown>,
  maybeWork?: Work<unknown>,
): Promise<unknown> {
  const [options, work] = typeof optionsOrWork === 'function' ? [{}, optionsOrWork] : [optionsOrWork, maybeWork!];
  const { audit: record, retry = false, isolationLevel, rollBack = false } = options;
  const withAudit: Work<unknown> = record
    ? async (trx) => {
        const { result, audit } = (await work(trx)) as { result: unknown; audit: unknown };
        if (audit) await record(trx, audit);
        return result;
      }
    : work;
  // through PgBouncer in transaction mode the connection has no timeouts of its own: the transaction sets them (issue 44)
  const timeouts = transactionTimeouts(db);
  const run: Work<unknown> = timeouts
    ? async (trx) => {
        await trx.raw(
          `SET LOCAL statement_timeout = ${timeouts.statementMs}; SET LOCAL idle_in_transaction_session_timeout = ${timeouts.idleInTransactionMs}`,
        );
        return withAudit(trx);
      }
    : withAudit;
  if (rollBack) {
    const trx = await db.transaction();
    try {
      return await (isDbTransaction(db) ? withAudit : run)(trx);
    } finally {
      await trx.rollback();
    }
  }
  if (isDbTransaction(db)) return withAudit(db);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction(run, isolationLevel ? { isolationLevel } : undefined);
    } catch (err) {
      if (!retry || !isRetryable(err) || attempt >= ATTEMPTS) throw err;
      await pause(BASE_DELAY_MS * 2 ** (attempt - 1) + Math.random() * BASE_DELAY_MS);
    }
  }
}

/**
 * Runs independent reads together: at once on the pool, each on a connection of its own, but one
 * after another in a transaction, whose one connection runs one query at a time (pg 8 queues a
 * second with a deprecation warning, pg 9 refuses it; issue 39). For a service whose `db` may be
 * the caller's transaction, instead of `Promise.all`.
 */
export async function allQueries<T extends readonly unknown[]>(
  db: Db,
  queries: { [K in keyof T]: () => PromiseLike<T[K]> },
): Promise<T> {
  if (!isDbTransaction(db)) return (await Promise.all(queries.map((query) => query()))) as unknown as T;
  const results: unknown[] = [];
  for (const query of queries) results.push(await query());
  return results as unknown as T;
}
