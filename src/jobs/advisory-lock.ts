import type { Knex } from 'knex';
import { transaction } from '../db/transaction';

/**
 * Runs fn only if this instance wins the PostgreSQL advisory lock for the job, so that
 * with several instances each scheduled job runs once. The lock is transaction-scoped.
 */
export async function runExclusively(
  db: Knex,
  jobName: string,
  fn: (trx: Knex.Transaction) => Promise<void>,
): Promise<boolean> {
  return transaction(db, async (trx) => {
    const { rows } = await trx.raw<{ rows: { locked: boolean }[] }>(
      'SELECT pg_try_advisory_xact_lock(hashtext(?)) AS locked',
      [jobName],
    );
    if (!rows[0].locked) return false;
    await fn(trx);
    return true;
  });
}
