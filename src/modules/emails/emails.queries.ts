import type { Knex } from 'knex';
import type { ReferenceCounters } from '../../db/references';
import { sql } from '../../db/sql';

/** When an emailing job (the low-stock digest, the backup-overdue alert) last ran, and the last stock movement it covered. */
export type EmailRun = { lastRunAt: Date; lastMovementId: string | null };

/** The job's last run, its row locked until the caller's transaction ends (so two runs cannot both send). */
export async function lastEmailRun(trx: Knex.Transaction, name: string): Promise<EmailRun | undefined> {
  const row = await trx('email_runs')
    .where({ name })
    .forUpdate()
    .first<{ last_run_at: Date; last_movement_id: string | null } | undefined>();
  return row && { lastRunAt: row.last_run_at, lastMovementId: row.last_movement_id };
}

export async function recordEmailRun(trx: Knex.Transaction, name: string, run: EmailRun): Promise<void> {
  await trx('email_runs')
    .insert({ name, last_run_at: run.lastRunAt, last_movement_id: run.lastMovementId })
    .onConflict('name')
    .merge();
}

/** The rows of email preferences that point at other modules' records, counted for their deletion checks (composed in src/owners.ts). */
export const emailsReferences: ReferenceCounters = {
  users: [
    {
      table: 'email_preferences',
      column: 'user_id',
      count: (id) => sql`SELECT count(*) FROM email_preferences WHERE user_id = ${id}`,
    },
  ],
};
