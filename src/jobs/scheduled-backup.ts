import type { Knex } from 'knex';
import { transaction } from '../db/transaction';
import { SYSTEM_ACTOR } from '../modules/audit/audit.actor';
import { queueBackupFailedEmail, queueBackupOverdueEmail } from '../modules/emails/emails.service';
import { lastEmailRun, recordEmailRun } from '../modules/emails/emails.queries';
import { runExclusively } from './advisory-lock';
import { backupScheduleService, type RunOutcome } from '../modules/backups/backups.schedule';
import { backupsService, type BackupDeps } from '../modules/backups/backups.service';
import type { Job } from './scheduler';

/**
 * Backs up the due slot of the schedule, if this instance is the one to claim it. pg_dump runs
 * after the claim's transaction has committed (a long dump must not hold a transaction, which
 * the connections' idle_in_transaction_session_timeout would end); the outcome is recorded
 * after. Retention follows a successful backup only, so a failing schedule deletes nothing.
 */
export async function runScheduledBackup(deps: BackupDeps, now: Date): Promise<void> {
  const schedules = backupScheduleService(deps.db);
  const claimed = await schedules.claimDueSlot(now);
  if (!claimed) return;
  const backups = backupsService(deps);
  const outcome: RunOutcome = await backups.create('scheduled', SYSTEM_ACTOR).then(
    ({ filename }) => ({ ok: true, filename }),
    (err: Error) => ({ ok: false, error: err.message }),
  );
  // the failure and its email to the admins commit together
  await transaction(deps.db, async (trx) => {
    await backupScheduleService(trx).recordRun(claimed.runId, outcome);
    if (!outcome.ok) await queueBackupFailedEmail(trx, { startedAt: now, error: outcome.error });
  });
  if (outcome.ok) await backups.pruneScheduled(claimed.retention);
}

const OVERDUE_RUN = 'backup-overdue';
/** While backups stay overdue, the admins are reminded this often. */
const OVERDUE_REMINDER_MS = 24 * 3_600_000;

/**
 * Emails the admins (backup alerts on) when the system alerts say the scheduled backups are
 * overdue: once, then once a day while they stay so. One instance does it (advisory lock).
 */
export async function alertOverdueBackups(db: Knex, now: Date): Promise<void> {
  await runExclusively(db, 'backup-overdue-email', async (trx) => {
    const overdue = (await backupScheduleService(trx).alerts(now)).find((a) => a.type === 'backup_overdue');
    if (!overdue) return;
    const last = await lastEmailRun(trx, OVERDUE_RUN);
    if (last && now.getTime() - last.lastRunAt.getTime() < OVERDUE_REMINDER_MS) return;
    await queueBackupOverdueEmail(trx, overdue);
    await recordEmailRun(trx, OVERDUE_RUN, { lastRunAt: now, lastMovementId: null });
  });
}

/** Every minute each instance asks whether a slot is due, so schedule changes apply without a restart. */
export function scheduledBackupJob(deps: BackupDeps): Job {
  return {
    name: 'scheduled-backup',
    schedule: '* * * * *',
    run: async () => {
      const now = new Date();
      await runScheduledBackup(deps, now);
      await alertOverdueBackups(deps.db, now);
    },
  };
}
